// The Hardcover push with two real `bindery serve` replicas on one catalog, against the fake Hardcover GraphQL API on
// 127.0.0.1: the replica holding the hardcover-push lease sends every change, whichever replica received it (even one
// killed right after answering); each change goes out once; a holder killed with SIGKILL in the middle of a push
// leaves the change to the replica that takes the lease over.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonProcess } from '../../bench/daemon-process.ts';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { createUser } from '../../src/core/users/users.ts';
import { SINGLETONS } from '../../src/daemon/singletons.ts';
import { DUNE_ISBN, startFakeHardcover, type FakeHardcover } from '../helpers/fake-hardcover.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';
import { call, health, healthUntil, setupAdmin, signIn, startReplica } from '../helpers/replicas.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

const ALL = [...SINGLETONS].sort();
const KEY = 'alice-hardcover-api-key-0001-wxyz';
const SYNCED = 'hardcover: progress synced';

let dir: TempDir;
let lib: TempLibrary;
let hc: FakeHardcover;
let store: Store;
let env: NodeJS.ProcessEnv;
const replicas: DaemonProcess[] = [];
let alice: string;
const dune = { book: 0, file: 0 };

function start(name: string): Promise<DaemonProcess> {
  return startReplica(dir.file('data'), name, { env }).then((r) => (replicas.push(r), r));
}

function progress(replica: DaemonProcess, percent: number): ReturnType<typeof call> {
  return call(replica.url, 'POST', '/api/v1/books/progress', alice, { bookId: dune.book, fileProgress: { bookFileId: dune.file, progressPercent: percent, positionData: null } });
}

const queued = () => store.db.selectFrom('hardcover_push').select(['book_id', 'percent']).execute();

/** Waits until `count` progress updates reached Hardcover and the queue is empty. */
async function sent(count: number): Promise<void> {
  const until = Date.now() + 30_000;
  while (hc.pagesSent().length < count || (await queued()).length > 0) {
    if (Date.now() > until) throw new Error(`sent ${JSON.stringify(hc.pagesSent())}, queued ${JSON.stringify(await queued())}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** How many pushes the replica logged as sent (its log reaches us a moment after the push: waited for up to 5 s). */
async function syncedLines(replica: DaemonProcess, expected: number): Promise<number> {
  const count = (): number => replica.stdout().split('\n').filter((line) => line.includes(SYNCED)).length;
  for (const until = Date.now() + 5000; count() < expected && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 50));
  return count();
}

beforeAll(async () => {
  hc = await startFakeHardcover();
  env = { BINDERY_OUTGOING_ALLOW_PRIVATE_HOSTS: '127.0.0.1', BINDERY_METADATA_PROVIDER_BASE_URLS: JSON.stringify({ Hardcover: hc.url }), BINDERY_LOG_LEVEL: 'info' };
  dir = makeTempDir('bindery-hardcover-replicas-');
  const a = await start('replica-a');
  await healthUntil(a.url, (h) => h.singletons.length === ALL.length);
  await start('replica-b');
  await setupAdmin(a.url);
  // A third process on the catalog (as `bindery scan` from cron would be) adds the book and the reader.
  store = await openStore(dir.file('data/bindery.sqlite'));
  lib = makeTempLibrary();
  await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], isbn: DUNE_ISBN });
  const library = await createLibrary(store.db, { name: 'Main', paths: [lib.root] });
  await scanLibrary(store, library, { coversRoot: dir.file('data/covers'), workers: 0 });
  const file = await store.db.selectFrom('book_file').select(['id', 'book_id']).executeTakeFirstOrThrow();
  Object.assign(dune, { book: file.book_id, file: file.id });
  await createUser(store.db, { username: 'alice', password: 'alice-password', name: 'Alice', permissions: { canSyncKobo: true }, libraryIds: [library.id] });
  const login = await call(a.url, 'POST', '/api/v1/auth/login', undefined, { username: 'alice', password: 'alice-password' });
  alice = (login.body as { accessToken: string }).accessToken;
  const saved = await call(a.url, 'PUT', '/api/v1/hardcover-sync-settings', alice, { hardcoverApiKey: KEY, hardcoverSyncEnabled: true });
  expect(saved.status).toBe(200);
}, 120_000);

afterAll(async () => {
  for (const replica of replicas) if (replica.child.exitCode === null && replica.child.signalCode === null) await replica.stop('SIGKILL');
  await store?.close();
  await hc?.close();
  lib?.cleanup();
  dir?.remove();
});

describe('Hardcover push across replicas', () => {
  it('is a lease the health and task routes show', async () => {
    const [a, b] = replicas as [DaemonProcess, DaemonProcess];
    expect((await health(a.url)).singletons).toContain('hardcover-push');
    expect((await health(b.url)).singletons).toEqual([]);
    const admin = await signIn(b.url);
    const last = await call(b.url, 'GET', '/api/v1/tasks/last', admin);
    const leases = (last.body as { cluster: { leases: { lease: string; holder: string; alive: boolean }[] } }).cluster.leases;
    expect(leases.find((l) => l.lease === 'hardcover-push')).toMatchObject({ holder: 'replica-a', alive: true });
  });

  it('sends from the holder a change received by the other replica, even one killed right after answering', async () => {
    const [a, b] = replicas as [DaemonProcess, DaemonProcess];
    const held = hc.hold();
    expect((await progress(b, 50)).status).toBe(204);
    // The holder has begun the push (held by Hardcover); the replica that received the change dies meanwhile.
    await held.arrived;
    await b.stop('SIGKILL');
    held.release();
    await sent(1);
    expect(hc.calls.map((c) => c.op)).toEqual(['BinderyBookByIsbn', 'BinderyUserBook', 'BinderyAddUserBook', 'BinderyUpdateRead']);
    expect(hc.calls.every((c) => c.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(hc.pagesSent()).toEqual([206]);
    expect(await syncedLines(a, 1)).toBe(1);
  });

  it('sends each change once, whichever replica received it', async () => {
    const [a] = replicas as [DaemonProcess];
    const c = await start('replica-c');
    hc.reset();
    for (const [i, through] of [c, a, c, a].entries()) {
      expect((await progress(through, 10 + 10 * i)).status).toBe(204);
      await sent(i + 1);
    }
    expect(hc.pagesSent()).toEqual([41, 82, 124, 165]);
    expect(await syncedLines(a, 5)).toBe(5);
    expect(await syncedLines(c, 0)).toBe(0);
  });

  it('leaves a change the holder was sending when killed to the replica that takes the lease over', async () => {
    const [a, , c] = replicas as [DaemonProcess, DaemonProcess, DaemonProcess];
    hc.reset();
    const held = hc.hold();
    expect((await progress(c, 70)).status).toBe(204);
    await held.arrived;
    await a.stop('SIGKILL');
    await healthUntil(c.url, (h) => h.singletons.includes('hardcover-push'), 30_000);
    expect((await queued()).map((q) => q.percent)).toEqual([70]);
    held.release();
    await sent(1);
    // The killed holder's request never completed; the new holder sent the change, once.
    expect(hc.pagesSent()).toEqual([288]);
    expect(await syncedLines(c, 1)).toBe(1);
  });
});
