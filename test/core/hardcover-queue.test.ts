// The Hardcover push queue with several processes on one catalog (two stores, each with its own lease instance and
// singleton keeper, as two replicas have), against the fake Hardcover GraphQL API on 127.0.0.1: a change recorded by a
// process without the hardcover-push lease is sent by the holder, and only by it; changes to one book made while a
// push runs collapse into the newest; a failure is retried a bounded number of times; a change waiting in the catalog
// outlives a restart, and a holder killed with SIGKILL leaves its queue to the next holder.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SingletonKeeper } from '../../src/core/cluster/singletons.ts';
import { MAX_ATTEMPTS, startProgressPusher, type ProgressPusherOptions } from '../../src/core/hardcover/progress-pusher.ts';
import { createProgressSync, type ProgressSync } from '../../src/core/hardcover/progress-sync.ts';
import { queuePush } from '../../src/core/hardcover/push-queue.ts';
import { updateHardcoverSettings } from '../../src/core/hardcover/sync-settings.ts';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { createHttpClient } from '../../src/core/net/http-client.ts';
import { currentOwner } from '../../src/core/process-owner.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import type { LeaseInstance } from '../../src/core/store/leases.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { createUser } from '../../src/core/users/users.ts';
import { DUNE_ISBN, startFakeHardcover, type FakeHardcover } from '../helpers/fake-hardcover.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

const KEY = 'reader-hardcover-api-key-0001-wxyz';
const LEASE = 'hardcover-push';

let dir: TempDir;
let lib: TempLibrary;
let hc: FakeHardcover;
let catalog: string;
let setupStore: Store;
let readerId: number;
let nosyncId: number;
let dune: number;
let emma: number;
const warnings: { details: object; message: string }[] = [];
const log = { info: () => undefined, warn: (details: object, message: string) => void warnings.push({ details, message }) };
const http = createHttpClient({ allowPrivateHosts: ['127.0.0.1'] });

/** One server process: its own connection to the catalog, lease instance, keeper and recorder. */
interface Replica {
  name: string;
  store: Store;
  keeper: SingletonKeeper;
  sync: ProgressSync;
  /** How often this process started the pusher. */
  starts: number;
  idle(): Promise<void>;
  close(): Promise<void>;
}

function instance(name: string): LeaseInstance {
  return { ...currentOwner(), name, token: `${name}-${Math.random()}` };
}

async function replica(name: string, pusherOptions: Partial<ProgressPusherOptions> = {}): Promise<Replica> {
  const store = await openStore(catalog);
  let pusher: ReturnType<typeof startProgressPusher> | undefined;
  const self: Replica = {
    name,
    store,
    starts: 0,
    keeper: new SingletonKeeper(
      store.leases(instance(name)),
      [
        {
          name: LEASE,
          start: async () => {
            self.starts++;
            const started = startProgressPusher({
              db: store.db,
              http,
              endpoint: `${hc.url}/graphql`,
              log,
              generation: () => store.generation(),
              // The per-key rate limit is tested on its own (hardcover-push.test.ts); here it would only slow the test.
              limiterFor: () => ({ acquire: () => Promise.resolve() }),
              ...pusherOptions,
            });
            pusher = started;
            return async () => {
              pusher = undefined;
              await started.stop();
            };
          },
        },
      ],
      { everyMs: 100, log },
    ),
    sync: createProgressSync({ db: store.db, log, recorded: () => pusher?.wake() }),
    idle: async () => {
      await self.sync.idle();
      await pusher?.idle();
    },
    close: async () => {
      await self.sync.idle();
      await self.keeper.close();
      await store.close();
    },
  };
  await self.keeper.start();
  return self;
}

const queued = () => setupStore.db.selectFrom('hardcover_push').select(['user_id', 'book_id', 'percent', 'revision', 'attempts']).orderBy('book_id').execute();

/** Waits until the queue is empty and the given processes are idle. */
async function drained(...replicas: Replica[]): Promise<void> {
  const until = Date.now() + 20_000;
  for (;;) {
    for (const r of replicas) await r.idle();
    if ((await queued()).length === 0) return;
    if (Date.now() > until) throw new Error(`the queue was never emptied: ${JSON.stringify(await queued())}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  dir = makeTempDir('bindery-hardcover-queue-');
  catalog = dir.file('bindery.sqlite');
  hc = await startFakeHardcover();
  setupStore = await openStore(catalog);
  lib = makeTempLibrary();
  await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], isbn: DUNE_ISBN });
  await writeSimpleEpub(lib.path('Emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
  const library = await createLibrary(setupStore.db, { name: 'Main', paths: [lib.root] });
  await scanLibrary(setupStore, library, { coversRoot: dir.file('covers'), workers: 0 });
  const books = await setupStore.db.selectFrom('book_metadata').select(['book_id', 'title']).execute();
  dune = books.find((b) => b.title === 'Dune')?.book_id as number;
  emma = books.find((b) => b.title === 'Emma')?.book_id as number;
  await setupStore.db.updateTable('book_metadata').set({ hardcover_book_id: '200' }).where('book_id', '=', emma).execute();
  readerId = await createUser(setupStore.db, { username: 'reader', password: 'reader-password', name: 'Reader', permissions: {}, libraryIds: [library.id] });
  nosyncId = await createUser(setupStore.db, { username: 'nosync', password: 'nosync-password', name: 'No Sync', permissions: {}, libraryIds: [library.id] });
  await updateHardcoverSettings(setupStore.db, readerId, { hardcoverApiKey: KEY, hardcoverSyncEnabled: true });
}, 120_000);

afterAll(async () => {
  await setupStore?.close();
  await hc?.close();
  lib?.cleanup();
  dir?.remove();
});

beforeEach(async () => {
  hc.reset();
  warnings.length = 0;
  // Each case starts from an empty queue: a change a failed case left behind would be sent by the next case's holder.
  await setupStore.db.deleteFrom('hardcover_push').execute();
});

describe('two processes on one catalog', () => {
  let a: Replica;
  let b: Replica;

  beforeAll(async () => {
    a = await replica('replica-a');
    b = await replica('replica-b');
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it('sends a change recorded by the process without the lease from the holder, once per change', async () => {
    expect(a.keeper.running()).toEqual([LEASE]);
    expect(b.keeper.running()).toEqual([]);
    b.sync.progressChanged({ userId: readerId, bookId: dune, percent: 30 });
    await b.sync.idle();
    expect(await queued()).toEqual([{ user_id: readerId, book_id: dune, percent: 30, revision: 1, attempts: 0 }]);
    await drained(a, b);
    expect(hc.calls.map((c) => c.op)).toEqual(['BinderyBookByIsbn', 'BinderyUserBook', 'BinderyAddUserBook', 'BinderyUpdateRead']);
    expect(hc.calls.every((c) => c.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(hc.pagesSent()).toEqual([124]);

    // Changes through either process, one after the other: each is sent exactly once, whoever received it.
    hc.reset();
    for (const [i, through] of [a, b, a, b].entries()) {
      through.sync.progressChanged({ userId: readerId, bookId: dune, percent: 40 + 10 * i });
      await drained(a, b);
    }
    expect(hc.pagesSent()).toEqual([165, 206, 247, 288]);
    expect(b.starts).toBe(0);
  });

  it('records nothing for a user without sync, and drops a change whose user turned sync off before it went out', async () => {
    b.sync.progressChanged({ userId: nosyncId, bookId: dune, percent: 10 });
    await b.sync.idle();
    expect(await queued()).toEqual([]);

    const held = hc.hold();
    b.sync.progressChanged({ userId: readerId, bookId: emma, percent: 10 });
    await held.arrived;
    b.sync.progressChanged({ userId: readerId, bookId: emma, percent: 20 });
    await b.sync.idle();
    await updateHardcoverSettings(setupStore.db, readerId, { hardcoverApiKey: KEY, hardcoverSyncEnabled: false });
    held.release();
    await drained(a, b);
    // The first push completed; the newer change found sync off and was removed unsent.
    expect(hc.pagesSent()).toEqual([35]);
    await updateHardcoverSettings(setupStore.db, readerId, { hardcoverApiKey: KEY, hardcoverSyncEnabled: true });
  });

  it('collapses the changes to one book made while its push runs into the newest', async () => {
    const held = hc.hold();
    b.sync.progressChanged({ userId: readerId, bookId: dune, percent: 10 });
    await held.arrived;
    // One reader moving between devices served by different processes: each report after the one before.
    for (const [i, through] of [b, a, b].entries()) {
      through.sync.progressChanged({ userId: readerId, bookId: dune, percent: 20 + 10 * i });
      await through.sync.idle();
    }
    expect(await queued()).toEqual([{ user_id: readerId, book_id: dune, percent: 40, revision: 4, attempts: 0 }]);
    held.release();
    await drained(a, b);
    // 10 % (the push under way), then 40 %; 20 % and 30 % were never sent.
    expect(hc.pagesSent()).toEqual([41, 165]);
  });
});

describe('changes received by two processes at nearly the same time', () => {
  it('keep the one received last, whichever process writes it last', async () => {
    const other = await openStore(catalog);
    try {
      const receivedAt = Date.now();
      await queuePush(other.db, { userId: readerId, bookId: emma, percent: 55 }, new Date(receivedAt + 5));
      // Received 5 ms earlier by another process, written after: it does not replace the newer percent.
      await queuePush(setupStore.db, { userId: readerId, bookId: emma, percent: 50 }, new Date(receivedAt));
      expect(await queued()).toEqual([{ user_id: readerId, book_id: emma, percent: 55, revision: 1, attempts: 0 }]);
      await queuePush(setupStore.db, { userId: readerId, bookId: emma, percent: 60 }, new Date(receivedAt + 10));
      expect(await queued()).toEqual([{ user_id: readerId, book_id: emma, percent: 60, revision: 2, attempts: 0 }]);
    } finally {
      await other.close();
    }
  });
});

describe('failures', () => {
  it('tries a failing push again later and gives it up after a bounded number of tries', async () => {
    const a = await replica('replica-a', { retryDelayMs: () => 50 });
    try {
      hc.failWith = 500;
      a.sync.progressChanged({ userId: readerId, bookId: emma, percent: 60 });
      await drained(a);
      expect(hc.site.requests.filter((r) => r.path === '/graphql')).toHaveLength(MAX_ATTEMPTS);
      expect(warnings.map((w) => w.message)).toEqual([
        ...Array.from({ length: MAX_ATTEMPTS - 1 }, () => 'hardcover: progress sync failed; it will be tried again'),
        'hardcover: progress sync failed too often; given up',
      ]);
      expect(warnings.map((w) => (w.details as { attempts: number }).attempts)).toEqual(Array.from({ length: MAX_ATTEMPTS }, (_, i) => i + 1));
      expect(hc.calls).toEqual([]);
    } finally {
      await a.close();
    }
  });
});

describe('a change waiting in the catalog', () => {
  it('outlives a restart of every process and is sent by the next holder', async () => {
    // Recorded while no process runs the push (the lease is held by nobody who sends): nothing goes out.
    const recorder = await openStore(catalog);
    const sync = createProgressSync({ db: recorder.db, log });
    // The first change's book takes longer to look up than the next one's: it is still queued first, and the newer wins.
    let lookedUp = (): void => undefined;
    const lookup = new Promise<void>((resolve) => (lookedUp = resolve));
    sync.progressChanged({ userId: readerId, bookId: async () => (await lookup, dune), percent: 60 });
    sync.progressChanged({ userId: readerId, bookId: dune, percent: 75 });
    setTimeout(lookedUp, 100);
    await sync.idle();
    await recorder.close();
    expect(await queued()).toMatchObject([{ book_id: dune, percent: 75 }]);

    const next = await replica('replica-next');
    try {
      expect(next.keeper.running()).toEqual([LEASE]);
      await drained(next);
      expect(hc.pagesSent()).toEqual([309]);
    } finally {
      await next.close();
    }
  });

  it('is sent by the process that takes the lease over from a holder killed with SIGKILL', async () => {
    const child: ChildProcess = spawn(process.execPath, [join(import.meta.dirname, '../helpers/lease-holder.ts'), catalog, LEASE], { stdio: ['ignore', 'pipe', 'inherit'] });
    const said = await new Promise<string>((resolve) => child.stdout?.once('data', (data: Buffer) => resolve(data.toString().trim())));
    expect(said).toBe('held');
    const b = await replica('replica-b');
    try {
      expect(b.keeper.running()).toEqual([]);
      b.sync.progressChanged({ userId: readerId, bookId: dune, percent: 90 });
      await b.sync.idle();
      // The holder (which sends nothing: it stands for one killed mid-push) has the lease; the change waits.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await queued()).toMatchObject([{ book_id: dune, percent: 90 }]);
      expect(hc.calls).toEqual([]);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      const until = Date.now() + 30_000;
      while (b.keeper.running().length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(b.keeper.running()).toEqual([LEASE]);
      await drained(b);
      expect(hc.pagesSent()).toEqual([371]);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await b.close();
    }
  });
});
