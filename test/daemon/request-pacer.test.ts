// Requests start a slice at a time with a turn of the event loop between slices, and new connections are accepted
// while the daemon is busy, not one per long turn (src/daemon/request-pacer.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { buildApp, type BuiltApp } from '../../src/daemon/app.ts';
import { RequestPacer } from '../../src/daemon/request-pacer.ts';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('RequestPacer', () => {
  let clock = 0;
  const pacer = (sliceMs = 1): RequestPacer => new RequestPacer(sliceMs, () => clock);
  const still = { destroyed: false };

  it('starts requests at once within a slice, then one per turn in arrival order', async () => {
    clock = 0;
    const p = pacer();
    const started: string[] = [];
    const work = (name: string, ms: number) => () => {
      started.push(name);
      clock += ms;
    };
    p.admit(work('a', 0.4), still);
    p.admit(work('b', 0.4), still);
    // The slice's millisecond is spent: the rest wait, in the order they came.
    p.admit(work('c', 0.4), still);
    p.admit(work('d', 2), still);
    p.admit(work('e', 2), still);
    p.admit(work('f', 2), still);
    expect(started).toEqual(['a', 'b', 'c']);
    expect(p.queued).toBe(3);
    await nextTurn();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    await nextTurn();
    expect(started).toEqual(['a', 'b', 'c', 'd', 'e']);
    // One that arrives while others wait goes behind them, even with time left in a slice.
    p.admit(work('g', 0), still);
    await nextTurn();
    await nextTurn();
    expect(started).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect(p.queued).toBe(0);
    // Once nothing waits, a new request starts at once again.
    await nextTurn();
    p.admit(work('h', 0), still);
    expect(started.at(-1)).toBe('h');
  });

  it('starts the next waiting request when one ends with time left in the slice', async () => {
    clock = 0;
    const p = pacer();
    const started: string[] = [];
    p.admit(() => started.push('a'), still);
    clock = 5;
    p.admit(() => started.push('b'), still);
    p.admit(() => started.push('c'), still);
    await nextTurn();
    expect(started).toEqual(['a', 'b']);
    // b took no time: its end lets c start in the same turn.
    p.finished();
    await Promise.resolve();
    expect(started).toEqual(['a', 'b', 'c']);
  });

  it('drops a request whose client has gone while it waited', async () => {
    clock = 0;
    const p = pacer(0);
    const started: string[] = [];
    p.admit(() => started.push('a'), still);
    p.admit(() => started.push('gone'), { destroyed: true });
    p.admit(() => started.push('b'), still);
    await nextTurn();
    expect(started).toEqual(['a', 'b']);
  });

  it('gives a turn to accepting after each accepted connection, a bounded number of times in a row', async () => {
    clock = 0;
    const p = pacer(0);
    const started: number[] = [];
    p.admit(() => started.push(0), still);
    for (let i = 1; i <= 3; i++) p.admit(() => started.push(i), still);
    p.accepted();
    await nextTurn();
    // That turn only polled (and would accept the next connection waiting); the one after starts a request.
    expect(started).toEqual([0]);
    await nextTurn();
    expect(started).toEqual([0, 1]);
    // A connection accepted every turn still lets a request start every 64 turns.
    let turns = 0;
    while (started.length < 3 && turns < 200) {
      p.accepted();
      await nextTurn();
      turns++;
    }
    expect(started).toEqual([0, 1, 2]);
    expect(turns).toBe(65);
  });
});

/**
 * The client side runs in a worker thread (an event loop of its own, as a separate client would be): `busy` keep-alive
 * connections ask one after another, and once each has had a few answers, `wave` new connections open at once with a
 * request each. For each new connection: how many answers the busy connections had between the wave and its first.
 */
const CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { port, busy, wave } = workerData;
let busyAnswers = 0;
let stopped = false;
const get = (agent) => new Promise((resolve, reject) => {
  http.get({ host: '127.0.0.1', port, path: '/api/v1/pacer-test/work', agent }, (res) => { res.resume(); res.on('end', resolve); }).on('error', reject);
});
const loops = Array.from({ length: busy }, async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  while (!stopped) { await get(agent); busyAnswers++; }
  agent.destroy();
});
(async () => {
  while (busyAnswers < busy * 4) await new Promise((r) => setTimeout(r, 5));
  const atWave = busyAnswers;
  const agents = Array.from({ length: wave }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  const behind = await Promise.all(agents.map(async (agent) => { await get(agent); agent.destroy(); return busyAnswers - atWave; }));
  stopped = true;
  await Promise.all(loops);
  parentPort.postMessage(behind);
})().catch((error) => parentPort.postMessage(String(error)));
`;

describe('a wave of new connections while the daemon is busy', () => {
  let dir: string;
  let store: Store;
  let built: BuiltApp;
  let port: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bindery-pacer-'));
    const config = { ...loadConfig({ env: {}, flags: { dataDir: dir } }), logLevel: 'silent' as const };
    store = await openStore(join(dir, 'bindery.sqlite'));
    // A route with the cost of a page built from SQLite: a few ms of synchronous work before the answer.
    const work = (): { ok: true } => {
      const until = performance.now() + 3;
      while (performance.now() < until);
      return { ok: true };
    };
    built = await buildApp({ config, store, routes: [{ method: 'GET', url: '/api/v1/pacer-test/work', auth: 'public', handler: work }] });
    await built.app.listen({ host: '127.0.0.1', port: 0 });
    port = (built.app.server.address() as { port: number }).port;
  });

  afterAll(async () => {
    await built.app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has each new connection answered after about one round of the busy ones, not one long turn per connection ahead of it', async () => {
    const busy = 16;
    const wave = 16;
    const worker = new Worker(CLIENT, { eval: true, workerData: { port, busy, wave } });
    const behind = await new Promise<number[] | string>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    if (typeof behind === 'string') throw new Error(behind);
    // Every request waits for the ones ahead of it, at most one per open connection: a new connection's first answer
    // comes after about `busy` answers of the others (two rounds allowed). Accepted one per turn of every request
    // that had arrived, the last of the wave came after about `busy` × `wave` of them.
    expect(Math.max(...behind)).toBeLessThan(2 * (busy + wave));
  });
});
