// Search finds what people type: stored text and queries meet as search keys (no case, no accents, one Unicode form),
// on every surface (OPDS 1 and 2, Komga `search`, the app API's book, author and series searches), whichever way the
// text got in (a scanned EPUB in decomposed Unicode, the metadata editor, bulk edit, an author rename), and for rows
// written before the keys existed (migration 029).
import Database from 'better-sqlite3';
import { Migrator } from 'kysely/migration';
import { Kysely, SqliteDialect } from 'kysely';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { migrationProvider } from '../../src/core/store/migrations/index.ts';
import { openStore } from '../../src/core/store/store.ts';
import { searchKey } from '../../src/core/text/search-key.ts';
import { hashPassword } from '../../src/core/users/users.ts';
import { onPostgres } from '../helpers/engine.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

const NFD_JOSE = 'Jose\u0301';

let d: TestDaemon;
let lib: TempLibrary;
let admin: string;
const basic = `Basic ${Buffer.from('reader:reader-password').toString('base64')}`;
const ids: Record<string, number> = {};

beforeAll(async () => {
  d = await startTestDaemon();
  lib = makeTempLibrary();
  // As a macOS tool writes it: decomposed accents.
  await writeSimpleEpub(lib.path('books', 'jose.epub'), { title: `${NFD_JOSE} y la noche`, authors: [`Gabriel Garci\u0301a Ma\u0301rquez`], series: 'Cro\u0301nicas', seriesIndex: 1 });
  await writeSimpleEpub(lib.path('books', 'plain.epub'), { title: 'Jose and the Sea', authors: ['Ann Smith'] });
  await writeSimpleEpub(lib.path('books', 'strasse.epub'), { title: 'Die Straße', authors: ['Øystein Ærø'] });
  const library = await createLibrary(d.store.db, { name: 'Books', paths: [lib.path('books')] });
  await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  for (const r of await d.store.db.selectFrom('book_metadata').select(['book_id', 'title']).execute()) ids[(r.title ?? '').normalize('NFC')] = r.book_id;
  admin = await d.setupAdmin();
  const owner = await d.store.db.selectFrom('users').select('id').where('username', '=', 'admin').executeTakeFirstOrThrow();
  await d.store.db.insertInto('opds_user_v2').values({ user_id: owner.id, username: 'reader', password_hash: await hashPassword('reader-password') }).execute();
  for (const name of ['opds_server_enabled', 'komga_api_enabled']) await d.store.db.insertInto('app_settings').values({ name, val: 'true' }).onConflict((oc) => oc.column('name').doUpdateSet({ val: 'true' })).execute();
});

afterAll(async () => {
  await d?.close();
  lib?.cleanup();
});

const norm = (titles: string[]): string[] => titles.map((t) => t.normalize('NFC')).sort();

/** The titles each search surface finds for a query. */
async function everywhere(q: string): Promise<Record<string, string[]>> {
  const enc = encodeURIComponent(q);
  const atom = await d.inject({ method: 'GET', url: `/api/v1/opds/catalog?q=${enc}`, headers: { authorization: basic } });
  const opds2 = await d.inject({ method: 'GET', url: `/api/v2/opds/catalog?q=${enc}`, headers: { authorization: basic } });
  const komga = await d.inject({ method: 'GET', url: `/komga/api/v1/books?search=${enc}`, headers: { authorization: basic } });
  const app = await d.inject({ method: 'GET', url: `/api/v1/app/books?search=${enc}`, headers: { authorization: `Bearer ${admin}` } });
  for (const res of [atom, opds2, komga, app]) expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
  return {
    opds1: norm([...atom.body.matchAll(/<entry>.*?<title>([^<]*)<\/title>/gs)].map((m) => m[1] as string)),
    opds2: norm(((opds2.json() as { publications?: { metadata: { title: string } }[] }).publications ?? []).map((p) => p.metadata.title)),
    komga: norm((komga.json() as { content: { metadata: { title: string } }[] }).content.map((b) => b.metadata.title)),
    app: norm((app.json() as { content: { title: string }[] }).content.map((b) => b.title)),
  };
}

const same = (titles: string[]): Record<string, string[]> => ({ opds1: titles, opds2: titles, komga: titles, app: titles });

describe('search keys', () => {
  it('fold case, accents, Unicode forms and a few letters, and squeeze spaces', () => {
    expect(searchKey(NFD_JOSE)).toBe('jose');
    expect(searchKey('JOSÉ')).toBe('jose');
    expect(searchKey('Straße  Øre ﬁn Ｔｅｓｔ')).toBe('strasse ore fin test');
  });
});

describe('every search surface', () => {
  it('finds a decomposed “José” for q=José (composed), and accents never matter: q=Jose finds it too', async () => {
    const both = same(['Jose and the Sea', 'José y la noche']);
    expect(await everywhere('José y la')).toEqual(same(['José y la noche']));
    expect(await everywhere('José')).toEqual(both);
    expect(await everywhere('jose')).toEqual(both);
    expect(await everywhere(NFD_JOSE.toUpperCase())).toEqual(both);
  });

  it('finds by author and series without their accents, and folds ß and ø', async () => {
    expect(await everywhere('garcia marquez')).toEqual(same(['José y la noche']));
    expect(await everywhere('CRONICAS')).toEqual(same(['José y la noche']));
    expect(await everywhere('strasse')).toEqual(same(['Die Straße']));
    expect(await everywhere('oystein')).toEqual(same(['Die Straße']));
  });

  it('app authors and series searches compare keys too', async () => {
    const authors = await d.inject({ method: 'GET', url: '/api/v1/app/authors?search=garcia', headers: { authorization: `Bearer ${admin}` } });
    expect((authors.json() as { content: { name: string }[] }).content.map((a) => a.name.normalize('NFC'))).toEqual(['Gabriel García Márquez']);
    const series = await d.inject({ method: 'GET', url: '/api/v1/app/series?search=cronicas', headers: { authorization: `Bearer ${admin}` } });
    expect((series.json() as { content: { seriesName: string }[] }).content.map((s) => s.seriesName.normalize('NFC'))).toEqual(['Crónicas']);
  });

  it('keeps the keys up to date through the metadata editor, bulk edit and an author rename', async () => {
    const id = ids['Jose and the Sea'] as number;
    const put = (url: string, payload: Record<string, unknown>) => d.inject({ method: 'PUT', url, headers: { authorization: `Bearer ${admin}` }, payload });
    expect((await put(`/api/v1/books/${id}/metadata`, { metadata: { title: 'Ñandú Nights', authors: ['Zoë Brontë'] } })).statusCode).toBe(200);
    expect(await everywhere('nandu')).toEqual(same(['Ñandú Nights']));
    expect(await everywhere('zoe bronte')).toEqual(same(['Ñandú Nights']));
    expect((await put('/api/v1/books/bulk-edit-metadata', { bookIds: [id], seriesName: 'Pájaros' })).statusCode).toBe(204);
    expect(await everywhere('pajaros')).toEqual(same(['Ñandú Nights']));
    const author = await d.store.db.selectFrom('author').select('id').where('name', '=', 'Zoë Brontë').executeTakeFirstOrThrow();
    expect((await put(`/api/v1/authors/${author.id}`, { name: 'Zoë Ångström' })).statusCode).toBe(200);
    expect(await everywhere('angstrom')).toEqual(same(['Ñandú Nights']));
    const authors = await d.inject({ method: 'GET', url: '/api/v1/app/authors?search=angstrom', headers: { authorization: `Bearer ${admin}` } });
    expect((authors.json() as { content: { name: string }[] }).content.map((a) => a.name)).toEqual(['Zoë Ångström']);
  });
});

// Migrates a SQLite catalog file written by an older version; a PostgreSQL catalog starts at the current schema.
describe.skipIf(onPostgres)('migration 029', () => {
  it('writes the keys of books and authors stored before it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bindery-search-migration-'));
    try {
      const path = join(dir, 'catalog.sqlite');
      const sqlite = new Database(path);
      const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: sqlite }) });
      const migrator = new Migrator({ db, provider: migrationProvider, migrationTableName: 'bindery_migration', migrationLockTableName: 'bindery_migration_lock' });
      expect((await migrator.migrateTo('024-audit-log')).error).toBeUndefined();
      sqlite.exec(`insert into library (id, name) values (1, 'Old');
        insert into book (id, library_id, added_on) values (1, 1, '2024-01-01T00:00:00Z');
        insert into book_metadata (book_id, title, series_name, search_text) values (1, '${NFD_JOSE}', 'Cro\u0301nicas', lower('${NFD_JOSE}'));
        insert into author (id, name) values (1, 'Garci\u0301a');
        insert into book_metadata_author_mapping (book_id, author_id, sort_order) values (1, 1, 0);`);
      await db.destroy();
      const store = await openStore(path);
      try {
        expect(await store.exec.get('select search_text, series_key from book_metadata where book_id = 1')).toEqual({ search_text: 'jose garcia cronicas', series_key: 'cronicas' });
        expect((await store.exec.get('select name_key from author where id = 1'))?.name_key).toBe('garcia');
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
