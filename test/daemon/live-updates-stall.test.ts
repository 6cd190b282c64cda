// A live-update reader that stops reading is dropped, and the server does not hold what it could not send: a real
// `bindery serve` process, a hand-made WebSocket client that pauses its socket, and 40 MB of events written from this
// (other) process into the shared catalog.
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { emitEvent } from '../../src/core/events/live-events.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { fromSource, rssMb, startDaemon, type DaemonProcess } from '../../bench/daemon-process.ts';
import { rawStompSocket } from '../helpers/live-clients.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

let dir: TempDir;
let daemon: DaemonProcess;
let store: Store;
let token: string;

beforeAll(async () => {
  dir = makeTempDir('bindery-stall-');
  daemon = await startDaemon(fromSource, { dataDir: dir.file('data') });
  const setup = await fetch(`${daemon.url}/api/v1/setup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'admin-password', name: 'Admin', email: 'a@example.com' }) });
  expect(setup.status).toBe(200);
  const login = await fetch(`${daemon.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'admin-password' }) });
  token = ((await login.json()) as { accessToken: string }).accessToken;
  store = await openStore(join(dir.file('data'), 'bindery.sqlite'));
}, 60_000);

afterAll(async () => {
  await store?.close();
  await daemon?.stop('SIGKILL');
  dir?.remove();
});

it('closes the connection of a reader that stalls, and the server stays small', async () => {
  const stalled = await rawStompSocket(daemon.port, '/ws', token, ['/user/queue/log']);
  await new Promise((r) => setTimeout(r, 500));
  stalled.pause();
  const before = rssMb(daemon.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(daemon.pid))), 50);
  const line = 'x'.repeat(4000);
  const events = 10_000;
  for (let i = 0; i < events; i += 500) {
    await store.db.transaction().execute(async (trx) => {
      for (let j = 0; j < 500; j++) await emitEvent(trx, { kind: 'log', audience: 'managers', message: line, severity: 'INFO' });
    });
  }
  // The daemon has read the outbox to its end once the newest event is older than a few polls.
  await new Promise((r) => setTimeout(r, 3000));
  clearInterval(sampler);
  // Reading now, the client gets what was in flight, then the end of a connection the server closed.
  let received = 0;
  stalled.on('data', (b: Buffer) => (received += b.length));
  stalled.resume();
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the server never closed the stalled connection')), 15_000);
    stalled.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  const sent = events * line.length;
  expect(received).toBeLessThan(sent / 2);
  expect(peak - before).toBeLessThan(25);
}, 120_000);
