// bindery db copy and db check, as an administrator moving a catalog runs them: a seeded catalog goes to PostgreSQL
// and back into a SQLite file with every row identical; a target that holds rows is refused unless --force; a copy
// that no longer matches its source is found; db check finds a row pointing at nothing on either engine.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCatalog } from '../../src/core/store/integrity.ts';
import { openSqliteFile, openStore } from '../../src/core/store/store.ts';
import { catalogRows, sqliteFileRows, storeRows } from '../helpers/catalog-rows.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { runCli } from '../helpers/cli.ts';
import { onPostgres } from '../helpers/engine.ts';
import { postgresAvailable, startPostgresServer, type PostgresServer } from '../helpers/postgres-server.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

let tmp: TempDir;
let server: PostgresServer;
const dataDir = (): string => tmp.file('data');
const catalog = (): string => tmp.file('data/bindery.sqlite');
const bindery = (args: string[], databaseUrl?: string) => runCli(['--data-dir', dataDir(), ...args], { env: { BINDERY_DATABASE_URL: databaseUrl ?? '' } });

interface CopyReport {
  rows: number;
  tables: { table: string; rows: number; checksum: string }[];
}

async function withStore<T>(location: string, use: (store: Awaited<ReturnType<typeof openStore>>) => Promise<T>): Promise<T> {
  const store = await openStore(location);
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

describe.skipIf(!postgresAvailable)('bindery db copy and db check', () => {
  beforeAll(async () => {
    tmp = makeTempDir('bindery-db-copy-');
    server = await startPostgresServer();
    await withStore(catalog(), async (store) => {
      const libraryId = await seedLibrary(store.db, tmp.file('books'), 'Books');
      const reader = (await store.db.insertInto('users').values({ username: 'reader', password_hash: 'x', name: 'Reader', email: 'reader@example.org' }).returning('id').executeTakeFirstOrThrow()).id;
      const other = (await store.db.insertInto('users').values({ username: 'other', password_hash: 'y', name: 'Other' }).returning('id').executeTakeFirstOrThrow()).id;
      const shelf = (await store.db.insertInto('shelf').values({ user_id: reader, name: 'Favourites' }).returning('id').executeTakeFirstOrThrow()).id;
      for (let i = 0; i < 1200; i++) {
        const { bookId } = await seedBook(store.db, libraryId, { title: `Book ${i} — “quoted” ‘text’ ✓`, authors: [`Author ${i % 37}`, `Co-author ${i % 11}`], types: i % 5 === 0 ? ['EPUB', 'PDF'] : ['EPUB'] });
        if (i % 4 === 0) await store.db.insertInto('user_book_progress').values({ user_id: i % 8 === 0 ? reader : other, book_id: bookId, epub_progress_percent: i / 7, read_status: 'READING', last_read_time: '2026-01-02T03:04:05.678Z' }).execute();
        if (i % 9 === 0) await store.db.insertInto('book_shelf_mapping').values({ book_id: bookId, shelf_id: shelf }).execute();
        if (i % 100 === 0) await store.db.insertInto('annotations').values({ user_id: reader, book_id: bookId, cfi: `epubcfi(/6/${i})`, text: 'a line\nwith a newline and a NUL-free \\ backslash', note: null }).execute();
      }
      // Ids with gaps, as deletes leave them: the copy keeps every id as it is.
      await store.db.deleteFrom('book').where('id', 'in', [3, 4, 5]).execute();
    });
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    tmp?.remove();
  });

  it('copies the catalog to PostgreSQL and back into a SQLite file, every row identical', async () => {
    const postgres = await server.createDatabase();
    const there = await bindery(['--json', 'db', 'copy', '--to', postgres]);
    expect(there.code, there.stdout + there.stderr).toBe(0);
    const report = JSON.parse(there.stdout) as CopyReport;
    expect(report.tables.find((t) => t.table === 'book')?.rows).toBe(1197);
    expect(report.tables.find((t) => t.table === 'users')?.rows).toBe(2);
    expect(report.rows).toBe(report.tables.reduce((n, t) => n + t.rows, 0));

    const file = tmp.file('copies/back.sqlite');
    const back = await bindery(['--json', 'db', 'copy', '--to', file], postgres);
    expect(back.code, back.stdout + back.stderr).toBe(0);
    // The same rows on the way back: the checksums are computed alike on both engines.
    expect((JSON.parse(back.stdout) as CopyReport).tables).toEqual(report.tables);

    const source = await catalogRows(catalog());
    expect(Object.keys(source).length).toBeGreaterThan(60);
    expect(source.book_shelf_mapping?.length).toBe(134);
    expect(await withStore(postgres, storeRows)).toEqual(source);
    expect(await sqliteFileRows(file)).toEqual(source);

    // The copy on PostgreSQL takes new rows after the copied ids, and is whole.
    const added = await withStore(postgres, (store) => store.db.insertInto('users').values({ username: 'new', password_hash: 'z', name: 'New' }).returning('id').executeTakeFirstOrThrow());
    expect(added.id).toBe(Math.max(...(source.users ?? []).map((u) => u.id as number)) + 1);
    const check = await bindery(['--json', 'db', 'check'], postgres);
    expect(check.code, check.stdout).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ ok: true, engine: 'postgres', checks: ['foreign-keys', 'id-sequences', 'migrations'], problems: [] });
  }, 120_000);

  it('refuses a target that holds rows of its own, unless --force', async () => {
    const postgres = await server.createDatabase();
    expect((await bindery(['db', 'copy', '--to', postgres])).code).toBe(0);
    await withStore(postgres, (store) => store.db.updateTable('book_metadata').set({ title: 'changed in the target' }).where('book_id', '=', 1).execute());
    const refused = await bindery(['--json', 'db', 'copy', '--to', postgres]);
    expect(refused.code).toBe(4);
    expect(JSON.parse(refused.stdout).error).toMatchObject({ code: 'COPY_NOT_EMPTY', message: expect.stringMatching(/already holds rows in .*book \(1197\).*--force/) });
    // Nothing was written.
    expect(await withStore(postgres, async (store) => store.exec.get('select title from book_metadata where book_id = 1'))).toEqual({ title: 'changed in the target' });

    const file = tmp.file('copies/refused.sqlite');
    expect((await bindery(['db', 'copy', '--to', file])).code).toBe(0);
    expect((await bindery(['db', 'copy', '--to', file])).code).toBe(4);

    const forced = await bindery(['db', 'copy', '--force', '--to', postgres]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(/^copied \d+ rows in \d+ tables from .* to postgresql:\/\/.*every table's row count and checksum match/);
    expect(await withStore(postgres, storeRows)).toEqual(await catalogRows(catalog()));
    expect((await bindery(['db', 'copy', '--to', catalog()])).code).toBe(2);
  }, 120_000);

  it('finds a copy that no longer matches its source, naming the table', async () => {
    const postgres = await server.createDatabase();
    expect((await bindery(['db', 'copy', '--to', postgres])).code).toBe(0);
    const same = await bindery(['--json', 'db', 'copy', '--compare', '--to', postgres]);
    expect(same.code, same.stdout).toBe(0);
    expect(JSON.parse(same.stdout)).toMatchObject({ same: true, differences: [] });

    await withStore(postgres, (store) => store.db.updateTable('book_metadata').set({ title: 'Book 7 — altered' }).where('book_id', '=', 8).execute());
    const changed = await bindery(['--json', 'db', 'copy', '--compare', '--to', postgres]);
    expect(changed.code).toBe(7);
    expect(JSON.parse(changed.stdout)).toMatchObject({ same: false, differences: [expect.stringMatching(/^book_metadata: the rows differ/)] });
    await withStore(postgres, (store) => store.db.deleteFrom('annotations').execute());
    const text = await bindery(['db', 'copy', '--compare', '--to', postgres]);
    expect(text.code).toBe(7);
    expect(text.stdout).toMatch(/annotations: 0 rows where 12 were expected/);
    expect(text.stdout).toMatch(/book_metadata: the rows differ/);
  }, 120_000);

  it('db check finds a row that points at nothing, on the catalog and on a copy in PostgreSQL', async () => {
    const clean = await bindery(['--json', 'db', 'check']);
    expect(clean.code, clean.stdout).toBe(0);
    expect(JSON.parse(clean.stdout)).toMatchObject({ ok: true, engine: onPostgres ? 'postgres' : 'sqlite' });

    const postgres = await server.createDatabase();
    expect((await bindery(['db', 'copy', '--to', postgres])).code).toBe(0);
    await withStore(postgres, (store) =>
      store.write(async ({ exec }) => {
        // As a restore with triggers off, or a hand edit, could leave it: foreign keys not enforced for this transaction.
        await exec.run('SET LOCAL session_replication_role = replica');
        await exec.run("INSERT INTO book_file (book_id, library_path_id, file_sub_path, file_name) VALUES (99999, 1, '', 'orphan.epub')");
        await exec.run("SELECT setval(pg_get_serial_sequence('users', 'id'), 1)");
      }),
    );
    const found = await bindery(['--json', 'db', 'check'], postgres);
    expect(found.code).toBe(7);
    const report = JSON.parse(found.stdout) as { ok: boolean; problems: { check: string; table: string; message: string }[] };
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([
      { check: 'foreign-keys', table: 'book_file', message: expect.stringMatching(/^1 rows of book_file point at book rows that do not exist \(book_file\.book_id = 99999\)/) },
      { check: 'id-sequences', table: 'users', message: expect.stringMatching(/the next users\.id would be 2, but ids up to 2 are taken/) },
    ]);
    const text = await bindery(['db', 'check'], postgres);
    expect(text.code).toBe(7);
    expect(text.stdout).toMatch(/\(postgres\): 2 problems\n {2}foreign-keys: 1 rows of book_file/);
  }, 120_000);

  it('db check on a SQLite file finds a planted orphan with foreign_key_check', async () => {
    const file = tmp.file('copies/checked.sqlite');
    expect((await bindery(['db', 'copy', '--to', file])).code).toBe(0);
    const raw = new Database(file);
    raw.pragma('foreign_keys = OFF');
    raw.prepare("INSERT INTO book_marks (user_id, book_id, cfi) VALUES (1, 424242, 'epubcfi(/6/4)')").run();
    raw.close();
    const store = await openSqliteFile(file, { readonly: true });
    try {
      const report = await checkCatalog(store);
      expect(report).toMatchObject({ engine: 'sqlite', checks: ['integrity', 'foreign-keys', 'migrations'] });
      expect(report.problems).toEqual([{ check: 'foreign-keys', table: 'book_marks', message: expect.stringMatching(/^1 rows of book_marks point at book rows that do not exist \(rowid \d+\)/) }]);
    } finally {
      await store.close();
    }
  });
});
