import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrationProvider } from '../../src/core/store/migrations/index.ts';
import { READING_STATE_TABLES, readingAware, sourceForSql } from '../../src/core/store/reading-state.ts';
import { CatalogMemo, sameGeneration } from '../../src/core/store/snapshot.ts';
import { createUser } from '../../src/core/users/users.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { openStore, StoreError, type Store } from '../../src/core/store/store.ts';
import { emptyTestDatabase, onPostgres } from '../helpers/engine.ts';

const run = promisify(execFile);
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

// The embedded engine's own file: WAL, pragmas, a file that is not a database, SQLite's integrity check.
describe.skipIf(onPostgres)('store on SQLite', () => {
  it('opens in WAL mode with foreign keys and applies migrations once', async () => {
    const path = join(dir, 'c.sqlite');
    const a = await openStore(path);
    expect(a.sqlite.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(a.sqlite.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(Number(a.sqlite.pragma('busy_timeout', { simple: true }))).toBeGreaterThanOrEqual(5000);
    const applied = await a.db.selectFrom('bindery_migration' as never).selectAll().execute();
    await a.close();
    const b = await openStore(path);
    expect(await b.db.selectFrom('bindery_migration' as never).selectAll().execute()).toEqual(applied);
    expect(await b.db.selectFrom('app_settings').select(['name', 'val']).where('name', '=', 'cover_image_resolution').execute()).toEqual([{ name: 'cover_image_resolution', val: '250x350' }]);
    await b.close();
  });

  it('upgrades a catalog of the previous release: new migrations sort after every one already applied', async () => {
    const path = join(dir, 'previous.sqlite');
    const db = new Kysely<never>({ dialect: new SqliteDialect({ database: new Database(path) }) });
    // The migrations of the release landed at d371318: every one but those added since.
    const addedSince = new Set(['036-hardcover-push', '039-series-members-index', '040-sign-in-failures', '043-series-order-index', '044-komga-series-summary', '045-kobo-snapshot-lineage', '049-bookdrop-original-left', '050-cover-thumbnail-backlog', '051-komga-series-dto', '052-reading-state-version', '053-komga-unknown-series-log', '054-book-version', '055-book-row-before-version']);
    const all = await migrationProvider.getMigrations();
    const previous = { getMigrations: async () => Object.fromEntries(Object.entries(all).filter(([name]) => !addedSince.has(name))) };
    const migrator = new Migrator({ db, provider: previous, migrationTableName: 'bindery_migration', migrationLockTableName: 'bindery_migration_lock' });
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    await db.destroy();
    const store = await openStore(path);
    const names = (await store.db.selectFrom('bindery_migration' as never).select('name' as never).execute()).map((row) => (row as { name: string }).name);
    expect(names).toEqual(Object.keys(await migrationProvider.getMigrations()).sort());
    await store.close();
  });

  it('moves the reading-state version on every write to each reading-state table (migration 052)', async () => {
    const store = await openStore(join(dir, 'catalog.sqlite'));
    try {
      const triggers = (await store.exec.all("SELECT tbl_name AS t, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'reading_state_version_%'")) as { t: string; sql: string }[];
      for (const table of READING_STATE_TABLES) {
        const mine = triggers.filter((r) => r.t === table).map((r) => r.sql);
        expect(mine, table).toHaveLength(3);
        for (const event of ['INSERT', 'UPDATE', 'DELETE']) expect(mine.some((text) => text.includes(`AFTER ${event} ON ${table}`)), `${table} ${event}`).toBe(true);
      }
    } finally {
      await store.close();
    }
  });

  it('refuses a file that is not a database with a clear error and leaves it untouched', async () => {
    const path = join(dir, 'not-a-db.sqlite');
    const content = 'hello, I am a text file'.repeat(100);
    writeFileSync(path, content);
    await expect(openStore(path)).rejects.toThrow(/not a database|catalog/i);
    expect(readFileSync(path, 'utf8')).toBe(content);
  });

  it('two processes writing at once lose nothing and never fail with "database is locked"', async () => {
    const path = join(dir, 'shared.sqlite');
    await (await openStore(path)).close();
    const store = await writeFromTwoProcesses(path, 300);
    expect(store.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
    await store.close();
  });
});

/** Two writer processes (test/helpers/store-writer.ts) at once; returns the catalog opened again after checking that nothing was lost. */
async function writeFromTwoProcesses(location: string, count: number): Promise<Store> {
  const writer = join(import.meta.dirname, '..', 'helpers', 'store-writer.ts');
  const [a, b] = await Promise.all([
    run(process.execPath, [writer, location, 'alpha', String(count)]),
    run(process.execPath, [writer, location, 'beta', String(count)]),
  ]);
  expect(a.stdout.trim()).toBe(`done ${count}`);
  expect(b.stdout.trim()).toBe(`done ${count}`);
  expect(a.stderr + b.stderr).not.toMatch(/locked|BUSY|deadlock|serializ/i);
  const store = await openStore(location);
  const libraries = await store.db.selectFrom('library').select('name').execute();
  const titles = await store.db.selectFrom('book_metadata').select('title').execute();
  expect(libraries).toHaveLength(2 * count);
  expect(new Set(libraries.map((l) => l.name)).size).toBe(2 * count);
  expect(titles).toHaveLength(2 * count);
  return store;
}

// The server engine, on databases of its own (created empty, so the migrations run from the first), reached by URL.
describe.runIf(onPostgres)('store on PostgreSQL', () => {
  const server = process.env.BINDERY_TEST_DATABASE_SERVER as string;
  const secret = 'Not-This-Password-42';
  const created: { drop(): Promise<void> }[] = [];
  const opened: Store[] = [];

  /** A new, empty database; its URL. */
  async function emptyDatabase(): Promise<string> {
    const database = await emptyTestDatabase();
    created.push(database);
    return database.url;
  }

  async function open(url: string): Promise<Store> {
    const store = await openStore(url);
    opened.push(store);
    return store;
  }

  const waitFor = async (what: string, done: () => boolean): Promise<void> => {
    for (let waited = 0; !done(); waited += 20) {
      if (waited > 10_000) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    for (const database of created.splice(0)) await database.drop();
  });

  it('migrates an empty database once, even when two stores open it at the same moment', async () => {
    const url = await emptyDatabase();
    const [a, b] = await Promise.all([open(url), open(url)]);
    expect(a.engine).toBe('postgres');
    const applied = await a.db.selectFrom('bindery_migration' as never).selectAll().execute();
    expect(applied).toHaveLength(Object.keys(await migrationProvider.getMigrations()).length);
    expect(new Set(applied.map((row) => (row as { name: string }).name)).size).toBe(applied.length);
    expect(await b.db.selectFrom('bindery_migration' as never).selectAll().execute()).toEqual(applied);
    const again = await open(url);
    expect(await again.db.selectFrom('bindery_migration' as never).selectAll().execute()).toEqual(applied);
    expect(await again.db.selectFrom('app_settings').select(['name', 'val']).where('name', '=', 'cover_image_resolution').execute()).toEqual([{ name: 'cover_image_resolution', val: '250x350' }]);
  });

  it('two processes writing at once lose nothing', async () => {
    const url = await emptyDatabase();
    await open(url);
    opened.push(await writeFromTwoProcesses(url, 200));
  }, 60_000);

  it('gives 64-bit integers, sums and averages back as numbers, as SQLite does', async () => {
    const store = await open(await emptyDatabase());
    const big = 2 ** 40 + 7;
    const row = await store.db.insertInto('audit_log').values({ username: 'u', action: 'A', description: 'd', entity_id: big }).returning(['id', 'entity_id']).executeTakeFirstOrThrow();
    expect(row).toEqual({ id: expect.any(Number), entity_id: big });
    await store.db.insertInto('audit_log').values({ username: 'u', action: 'A', description: 'd', entity_id: 1 }).execute();
    const totals = await store.exec.get('select count(*) as n, sum(entity_id) as total, avg(entity_id) as mean, max(id) as top from audit_log');
    expect(totals).toEqual({ n: 2, total: big + 1, mean: (big + 1) / 2, top: expect.any(Number) });
  });

  it('refuses a database it cannot reach with a clear StoreError that never shows the password', async () => {
    const missing = new URL(server);
    missing.pathname = '/no_such_catalog';
    missing.username = 'bindery';
    missing.password = secret;
    const unreachable = `postgresql://bindery:${secret}@127.0.0.1:1/bindery`;
    const malformed = `postgresql://bindery:${secret}@[not-a-host/bindery`;
    for (const [url, cause] of [
      [missing.toString(), /does not exist/],
      [unreachable, /ECONNREFUSED|connect/],
      [malformed, /invalid|url/i],
    ] as const) {
      const error = await openStore(url).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, url).toBeInstanceOf(StoreError);
      const message = (error as Error).message;
      expect(message).toMatch(/cannot reach the catalog database/);
      expect(message).toMatch(cause);
      expect(message).not.toContain(secret);
      expect(String((error as Error).stack)).not.toContain(secret);
    }
  });

  it("notices another process's committed writes through NOTIFY, and never a rolled-back one", async () => {
    const url = await emptyDatabase();
    const writer = await open(url);
    const reader = await open(url);
    // Until its LISTEN connection is up, a store reports a new generation on every call (nothing may be cached).
    await waitFor('the LISTEN connection', () => sameGeneration(reader.generation(), reader.generation()));
    const before = reader.generation();

    await writer.db.insertInto('library').values({ name: 'outside a transaction' }).execute();
    await waitFor('the first notification', () => !sameGeneration(before, reader.generation()));

    const seen = reader.generation();
    await expect(
      writer.write(async ({ db }) => {
        await db.insertInto('library').values({ name: 'rolled back' }).execute();
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(reader.generation()).toEqual(seen);
    expect(writer.writeInFlight()).toBe(false);

    await writer.write(async ({ exec }) => {
      await exec.run('insert into library (name) values (?)', ['committed']);
    });
    await waitFor('the notification of the commit', () => !sameGeneration(seen, reader.generation()));
    expect((await reader.db.selectFrom('library').select('name').orderBy('id').execute()).map((l) => l.name)).toEqual(['outside a transaction', 'committed']);
  });
});

/** Whether a store's generation holds still for 300 ms: on PostgreSQL earlier writes' announcements reach it a moment later. */
async function generationSettled(store: Store): Promise<boolean> {
  const before = store.generation();
  await new Promise((resolve) => setTimeout(resolve, 300));
  return sameGeneration(before, store.generation());
}

// Store.bookkeeping: rows that are not catalog content (sign-in failure counts) are written without emptying caches.
describe('bookkeeping writes', () => {
  it('leave the catalog generation alone and move the bookkeeping generation, for this process and the others', async () => {
    const path = join(dir, 'catalog.sqlite');
    const writer = await openStore(path);
    const reader = await openStore(path);
    try {
      for (const store of [writer, reader]) await expect.poll(() => generationSettled(store), { timeout: 10_000 }).toBe(true);
      const writerCatalog = writer.generation();
      const readerCatalog = reader.generation();
      const writerBooks = writer.bookkeeping.generation();
      const readerBooks = reader.bookkeeping.generation();

      await writer.bookkeeping.exec.run('insert into sign_in_failure (scope, key, failures, expires_at_ms) values (?, ?, ?, ?)', ['address', '10.0.0.1', 1, Date.now() + 60_000]);
      expect(writer.generation()).toEqual(writerCatalog);
      expect(sameGeneration(writer.bookkeeping.generation(), writerBooks)).toBe(false);
      await expect.poll(() => sameGeneration(reader.bookkeeping.generation(), readerBooks)).toBe(false);
      // On SQLite another connection learns of any commit to the file, and cannot tell bookkeeping apart.
      if (reader.engine === 'postgres') expect(reader.generation()).toEqual(readerCatalog);

      // A statement that changes nothing tells nobody.
      const quiet = reader.bookkeeping.generation();
      await writer.bookkeeping.exec.run('delete from sign_in_failure where key = ?', ['nobody']);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(reader.bookkeeping.generation()).toEqual(quiet);

      await writer.db.insertInto('library').values({ name: 'content' }).execute();
      expect(sameGeneration(writer.generation(), writerCatalog)).toBe(false);
    } finally {
      await writer.close();
      await reader.close();
    }
  });
});

/**
 * Two stores on one catalog (to each other, two processes), with a library, a book and a reader written through the
 * first, both generations settled.
 */
async function withWriterAndReader(work: (writer: Store, reader: Store, seeded: { library: number; bookId: number; userId: number }) => Promise<void>): Promise<void> {
  const path = join(dir, 'catalog.sqlite');
  const writer = await openStore(path);
  const reader = await openStore(path);
  try {
    const library = await seedLibrary(writer.db, dir, 'L');
    const { bookId } = await seedBook(writer.db, library, { title: 'Kept' });
    const userId = await createUser(writer.db, { username: 'r', password: 'r-password', name: 'r', permissions: {}, libraryIds: [library] });
    for (const store of [writer, reader]) await expect.poll(() => generationSettled(store), { timeout: 10_000 }).toBe(true);
    await work(writer, reader, { library, bookId, userId });
  } finally {
    await writer.close();
    await reader.close();
  }
}

// Store.readingState: progress is written without moving the catalog's generation, and moves one of its own.
describe('reading-state writes', () => {
  it('leave the catalog generation alone and move the reading generation, for this process and the others', async () => {
    await withWriterAndReader(async (writer, reader, { bookId, userId }) => {
      const writerCatalog = writer.generation();
      const readerCatalog = reader.generation();
      const writerReading = writer.readingState.generation();
      const readerReading = reader.readingState.generation();

      // Through the builder, in a transaction of its own (as the progress writers do).
      await writer.readingState.db.transaction().execute(async (trx) => {
        await trx.insertInto('user_book_progress').values({ user_id: userId, book_id: bookId, read_status: 'READING' }).execute();
      });
      expect(writer.generation()).toEqual(writerCatalog);
      expect(sameGeneration(writer.readingState.generation(), writerReading)).toBe(false);
      await expect.poll(() => sameGeneration(reader.readingState.generation(), readerReading)).toBe(false);
      if (reader.engine === 'postgres') expect(reader.generation()).toEqual(readerCatalog);

      // Raw statements too.
      const afterBuilder = writer.readingState.generation();
      await writer.readingState.exec.run('UPDATE user_book_progress SET read_status = ? WHERE user_id = ? AND book_id = ?', ['READ', userId, bookId]);
      expect(writer.generation()).toEqual(writerCatalog);
      expect(sameGeneration(writer.readingState.generation(), afterBuilder)).toBe(false);

      // A rolled-back reading transaction does not move the catalog either.
      await expect(
        writer.readingState.db.transaction().execute(async (trx) => {
          await trx.updateTable('user_book_progress').set({ read_status: 'UNREAD' }).where('user_id', '=', userId).execute();
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(writer.generation()).toEqual(writerCatalog);

      // A catalog write through the store still moves the catalog.
      await writer.db.updateTable('book_metadata').set({ title: 'Renamed' }).where('book_id', '=', bookId).execute();
      expect(sameGeneration(writer.generation(), writerCatalog)).toBe(false);
    });
  });

  it("move with every write to progress, a catalog statement's included, and not with another process's catalog edits", async () => {
    await withWriterAndReader(async (writer, reader, { library, bookId, userId }) => {
      const other = await seedBook(writer.db, library, { title: 'Other' });
      await writer.readingState.exec.run('INSERT INTO user_book_progress (user_id, book_id, read_status) VALUES (?, ?, ?)', [userId, bookId, 'READING']);
      for (const store of [writer, reader]) await expect.poll(() => generationSettled(store), { timeout: 10_000 }).toBe(true);

      // Another process edits the catalog: the reader sees it, and its reading generation stays put.
      const readerCatalog = reader.generation();
      const readerReading = reader.readingState.generation();
      await writer.db.updateTable('book_metadata').set({ title: 'Renamed' }).where('book_id', '=', bookId).execute();
      await expect.poll(() => sameGeneration(reader.generation(), readerCatalog)).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(reader.readingState.generation()).toEqual(readerReading);

      // A catalog statement that moves progress (as merging duplicates does) is a change of reading state, here and there.
      const writerReading = writer.readingState.generation();
      await writer.db.updateTable('user_book_progress').set({ book_id: other.bookId }).where('user_id', '=', userId).execute();
      expect(sameGeneration(writer.readingState.generation(), writerReading)).toBe(false);
      await expect.poll(() => sameGeneration(reader.readingState.generation(), readerReading)).toBe(false);

      // So is deleting a book, which takes its progress with it, on SQLite, whose triggers see the cascade (on
      // PostgreSQL what is kept of that progress is kept under the catalog's generation too).
      if (writer.engine === 'sqlite') {
        const beforeDelete = reader.readingState.generation();
        await writer.db.deleteFrom('book').where('id', '=', other.bookId).execute();
        expect(await writer.exec.get('SELECT count(*) AS n FROM user_book_progress')).toEqual({ n: 0 });
        await expect.poll(() => sameGeneration(reader.readingState.generation(), beforeDelete)).toBe(false);
      }
    });
  });

  it('are not made by a read that starts with WITH, whatever tables it names', async () => {
    const store = await openStore(join(dir, 'catalog.sqlite'));
    try {
      await seedLibrary(store.db, dir, 'L');
      await expect.poll(() => generationSettled(store), { timeout: 10_000 }).toBe(true);
      const catalog = store.generation();
      const reading = store.readingState.generation();
      await store.exec.all('WITH s AS MATERIALIZED (SELECT id FROM book) SELECT count(*) AS n FROM s LEFT JOIN user_book_progress p ON p.book_id = s.id');
      expect(store.generation()).toEqual(catalog);
      expect(store.readingState.generation()).toEqual(reading);
    } finally {
      await store.close();
    }
  });

  it.skipIf(onPostgres)("reads SQLite's reading-state version inside a read snapshot, where it agrees with data_version", async () => {
    const path = join(dir, 'catalog.sqlite');
    const store = await openStore(path);
    const other = new Database(path);
    try {
      await seedLibrary(store.db, dir, 'L');
      const before = store.readingState.generation();
      // Another connection commits a catalog edit in the same turn: the snapshot below is the first to see it, on a
      // later turn, and reads the version there.
      other.prepare("INSERT INTO library (name) VALUES ('M')").run();
      const inside = await store.read(async ({ exec }) => {
        await exec.get('SELECT count(*) AS n FROM book');
        await new Promise((resolve) => setImmediate(resolve));
        return store.readingState.generation();
      });
      expect(inside).toEqual(before);
      expect(store.readingState.generation()).toEqual(before);
    } finally {
      other.close();
      await store.close();
    }
  });

  it('drop a value kept under the reading generation, and keep one kept under the catalog only', async () => {
    const store = await openStore(join(dir, 'catalog.sqlite'));
    try {
      const library = await seedLibrary(store.db, dir, 'L');
      const { bookId } = await seedBook(store.db, library, { title: 'Kept' });
      const userId = await createUser(store.db, { username: 'r', password: 'r-password', name: 'r', permissions: {}, libraryIds: [library] });
      const memo = new CatalogMemo<string, number>(10);
      let computed = 0;
      const titles = 'SELECT count(*) AS n FROM book_metadata';
      const progress = 'SELECT count(*) AS n FROM user_book_progress WHERE read_status = ?';
      const count = (sql: string, params: string[] = []) =>
        memo.getAsync(sourceForSql(store, sql), sql, async () => {
          computed++;
          return Number((await store.exec.get(sql, params))?.n);
        });
      expect(await count(titles)).toBe(1);
      expect(await count(progress, ['READ'])).toBe(0);
      expect(computed).toBe(2);
      await store.readingState.exec.run('INSERT INTO user_book_progress (user_id, book_id, read_status) VALUES (?, ?, ?)', [userId, bookId, 'READ']);
      expect(await count(titles)).toBe(1);
      expect(computed).toBe(2);
      expect(await count(progress, ['READ'])).toBe(1);
      expect(computed).toBe(3);
      expect(sameGeneration(readingAware(store).generation(), store.generation())).toBe(false);
    } finally {
      await store.close();
    }
  });
});
