// The Komga-compatible API end to end: HTTP Basic with OPDS accounts, the switch, every route, each JSON response
// validated with Ajv against the component schemas of Komga's own OpenAPI document and against the fields Mihon's
// Komga extension requires non-null, visibility of the owning user, pages of comics and PDFs, and clean mode.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import type { ErrorObject } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleaned, type Json } from '../../src/core/komga/dto.ts';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { hashPassword } from '../../src/core/users/users.ts';
import { allRoutes } from '../../src/daemon/routes/index.ts';
import { jpeg, png, writeZip } from '../helpers/comic-fixtures.ts';
import { conformancePath } from '../helpers/conformance.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { decodeErrors, keyMismatches, komgaOpenApi } from '../helpers/komga-contract.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';
import { buildPdf } from '../helpers/pdf-fixtures.ts';

type Obj = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------------------------
// Validators: Komga's component schemas (strict), and the fields Mihon requires non-null.

// Komga's schemas, with what they leave optional made nullable (Komga sends those properties as null).
const spec = komgaOpenApi();
const usage = JSON.parse(readFileSync(conformancePath('komga', 'komga-client-usage.json'), 'utf8')) as {
  mihon_komga_extension: { required_non_null_fields: Record<string, string[]>; page_envelope_required: string[] };
};
// ajv's CommonJS builds put the class and the plugin on `default`.
const ajv = new Ajv2020.default({ strict: false, allErrors: true, validateSchema: false });
ajvFormats.default(ajv);
ajv.addSchema({ $id: 'komga.json', components: spec.components, paths: spec.paths });
const schemaCache = new Map<string, ReturnType<typeof ajv.compile>>();

/** Komga's page schemas as komga-contract names them. */
const CONTRACT_NAMES: Record<string, string> = { PageSeriesDto: 'Page<SeriesDto>', PageBookDto: 'Page<BookDto>', PageCollectionDto: 'Page<CollectionDto>', PageReadListDto: 'Page<ReadListDto>' };

function expectKomga(name: string, body: unknown): void {
  // Every key of Komga's DTO, at every level, decoded as Komelia's kotlinx classes decode it.
  const contract = CONTRACT_NAMES[name] ?? name;
  expect(keyMismatches(contract, body)).toEqual([]);
  expect(decodeErrors(contract, body)).toEqual([]);
  let validate = schemaCache.get(name);
  if (!validate) schemaCache.set(name, (validate = ajv.compile({ $ref: `komga.json#/components/schemas/${name}` })));
  const ok = validate(body);
  expect(ok ? [] : (validate.errors ?? []).map((e: ErrorObject) => `${name}${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`)).toEqual([]);
}

/** Checks a body against the 200 response Komga's OpenAPI declares for the path (for answers without a named DTO). */
function expectResponse(path: string, body: unknown): void {
  const pointer = `komga.json#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/get/responses/200/content/application~1json/schema`;
  let validate = schemaCache.get(pointer);
  if (!validate) schemaCache.set(pointer, (validate = ajv.compile({ $ref: pointer })));
  const ok = validate(body);
  expect(ok ? [] : (validate.errors ?? []).map((e: ErrorObject) => `${path}${e.instancePath} ${e.message}`)).toEqual([]);
}

const required = usage.mihon_komga_extension.required_non_null_fields;
/** Nested DTOs Mihon reads, per parent DTO and property. */
const NESTED: Record<string, Record<string, string>> = {
  SeriesDto: { metadata: 'SeriesMetadataDto', booksMetadata: 'BookMetadataAggregationDto' },
  BookDto: { media: 'MediaDto', metadata: 'BookMetadataDto' },
  BookMetadataDto: { authors: 'AuthorDto' },
  BookMetadataAggregationDto: { authors: 'AuthorDto' },
};

function mihonMissing(name: string, value: unknown, path = name): string[] {
  const out: string[] = [];
  if (Array.isArray(value)) return value.flatMap((v, i) => mihonMissing(name, v, `${path}[${i}]`));
  const object = value as Obj;
  for (const raw of required[name] ?? []) {
    const field = raw.replace(/\(.*\)$/, '');
    if (object[field] === undefined || object[field] === null) out.push(`${path}.${field}`);
    if (raw.endsWith('(float)') && typeof object[field] !== 'number') out.push(`${path}.${field} not a number`);
    if (raw.endsWith('(string)') && typeof object[field] !== 'string') out.push(`${path}.${field} not a string`);
  }
  for (const [field, child] of Object.entries(NESTED[name] ?? {})) if (object[field] !== undefined) out.push(...mihonMissing(child, object[field], `${path}.${field}`));
  return out;
}

function expectMihon(name: string, body: unknown): void {
  expect(mihonMissing(name, body)).toEqual([]);
}

function expectPage(pageSchema: string, itemDto: string, body: Obj): Obj[] {
  expectKomga(pageSchema, body);
  for (const key of usage.mihon_komga_extension.page_envelope_required) expect(body[key], key).not.toBeUndefined();
  const content = body.content as Obj[];
  for (const item of content) expectMihon(itemDto, item);
  return content;
}

// ---------------------------------------------------------------------------------------------------------------
// Fixture

let d: TestDaemon;
let lib: TempLibrary;
let mainLibrary: number;
let privateLibrary: number;
const ids: Record<string, number> = {};
const alice = { user: 'alice', password: 'alice-secret-1' };
const bob = { user: 'bob', password: 'bob-secret-22' };
type Account = typeof alice;

const basic = (a: Account): string => `Basic ${Buffer.from(`${a.user}:${a.password}`).toString('base64')}`;

async function komga(url: string, account: Account | null = alice, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return d.inject({ method: 'GET', url, headers: { ...(account ? { authorization: basic(account) } : {}), ...headers } });
}

async function json(url: string, account: Account = alice): Promise<Obj> {
  const res = await komga(url, account);
  expect(res.statusCode, `${url}: ${res.body.slice(0, 300)}`).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return res.json() as Obj;
}

async function setKomga(enabled: boolean): Promise<void> {
  await d.store.db.insertInto('app_settings').values({ name: 'komga_api_enabled', val: String(enabled) }).onConflict((oc) => oc.column('name').doUpdateSet({ val: String(enabled) })).execute();
}

async function setGroupUnknown(enabled: boolean): Promise<void> {
  await d.store.db.insertInto('app_settings').values({ name: 'komga_group_unknown', val: String(enabled) }).onConflict((oc) => oc.column('name').doUpdateSet({ val: String(enabled) })).execute();
}

beforeAll(async () => {
  d = await startTestDaemon();
  lib = makeTempLibrary();
  mkdirSync(lib.path('main'));
  mkdirSync(lib.path('private'));
  await writeSimpleEpub(lib.path('main', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], series: 'Dune', seriesIndex: 1, isbn: '9780441172719', cover: '#2a6' });
  await writeSimpleEpub(lib.path('main', 'Dune Messiah.epub'), { title: 'Dune Messiah', authors: ['Frank Herbert'], series: 'Dune', seriesIndex: 2, cover: '#a62' });
  await writeSimpleEpub(lib.path('main', 'Neuromancer.epub'), { title: 'Neuromancer', authors: ['William Gibson'] });
  await writeZip(lib.path('main', 'Comic.cbz'), [
    { name: '10.jpg', data: await jpeg('#3c3', 40, 60) },
    { name: '2.jpg', data: await jpeg('#c33', 40, 60) },
    { name: '11.png', data: await png('#cc3', 40, 60) },
  ]);
  writeFileSync(lib.path('main', 'Report.pdf'), await buildPdf({ title: 'Annual Report', pages: 2 }));
  await writeSimpleEpub(lib.path('private', 'Secret.epub'), { title: 'Secret Diary', authors: ['Nobody Known'], series: 'Hidden Saga', seriesIndex: 1 });

  const main = await createLibrary(d.store.db, { name: 'Main', paths: [lib.path('main')] });
  const hidden = await createLibrary(d.store.db, { name: 'Private', paths: [lib.path('private')] });
  mainLibrary = main.id;
  privateLibrary = hidden.id;
  for (const library of [main, hidden]) await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  const rows = await d.store.db.selectFrom('book_file').select(['book_id', 'file_name']).execute();
  for (const r of rows) ids[r.file_name.replace(/\.[^.]+$/, '')] = r.book_id;

  // Neuromancer is cyberpunk, which the reader has excluded.
  const category = await d.store.db.insertInto('category').values({ name: 'Cyberpunk' }).returning('id').executeTakeFirstOrThrow();
  await d.store.db.insertInto('book_metadata_category_mapping').values({ book_id: ids.Neuromancer as number, category_id: category.id }).execute();

  const admin = await d.createUser('boss', { admin: true }, [mainLibrary, privateLibrary]);
  const reader = await d.createUser('reader', {}, [mainLibrary]);
  await d.store.db.insertInto('user_content_restriction').values({ user_id: reader.id, restriction_type: 'CATEGORY', mode: 'EXCLUDE', value: 'cyberpunk' }).execute();
  for (const [account, owner] of [[alice, admin], [bob, reader]] as const) {
    await d.store.db.insertInto('opds_user_v2').values({ user_id: owner.id, username: account.user, password_hash: await hashPassword(account.password) }).execute();
  }
  // A shelf of bob's owner with a visible and a hidden book.
  const shelf = await d.store.db.insertInto('shelf').values({ user_id: reader.id, name: 'Favourites' }).returning('id').executeTakeFirstOrThrow();
  for (const book of ['Dune', 'Neuromancer', 'Secret']) await d.store.db.insertInto('book_shelf_mapping').values({ shelf_id: shelf.id, book_id: ids[book] as number }).execute();
  await setKomga(true);
}, 120_000);

afterAll(async () => {
  await d?.close();
  lib?.cleanup();
});

// ---------------------------------------------------------------------------------------------------------------

describe('authentication and the switch', () => {
  it('answers 401 with the Basic challenge without or with wrong credentials', async () => {
    for (const account of [null, { user: 'alice', password: 'wrong' }, { user: 'nobody', password: 'x' }]) {
      const res = await komga('/komga/api/v1/libraries', account);
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Basic realm="Booklore Komga API"');
      expect(res.body).toMatch(/^HTTP Status 401 - /);
    }
  });

  it('answers 403 when the API is switched off, 401 still first', async () => {
    await setKomga(false);
    try {
      expect((await komga('/komga/api/v2/users/me')).statusCode).toBe(403);
      expect((await komga('/komga/api/v1/series', null)).statusCode).toBe(401);
    } finally {
      await setKomga(true);
    }
  });

  it('serves the current user', async () => {
    const me = await json('/komga/api/v2/users/me');
    expectKomga('UserDto', me);
    expect(me).toMatchObject({ email: 'alice@booklore.local', roles: ['USER', 'FILE_DOWNLOAD', 'PAGE_STREAMING'], sharedAllLibraries: true, ageRestriction: null });
    const bobMe = await json('/komga/api/v2/users/me', bob);
    expectKomga('UserDto', bobMe);
    expect(bobMe).toMatchObject({ sharedAllLibraries: false, sharedLibrariesIds: [String(mainLibrary)] });
  });
});

describe('libraries', () => {
  it('lists the libraries the owner may see', async () => {
    const res = await komga('/komga/api/v1/libraries');
    const all = res.json() as Obj[];
    for (const l of all) {
      expectKomga('LibraryDto', l);
      expectMihon('LibraryDto', l);
    }
    expect(all.map((l) => l.name)).toEqual(['Main', 'Private']);
    const bobs = (await komga('/komga/api/v1/libraries', bob)).json() as Obj[];
    expect(bobs.map((l) => l.name)).toEqual(['Main']);
    expectKomga('LibraryDto', await json(`/komga/api/v1/libraries/${mainLibrary}`, bob));
    expect((await komga(`/komga/api/v1/libraries/${privateLibrary}`, bob)).statusCode).toBe(404);
  });
});

describe('series', () => {
  it('groups books by series name, with Unknown Series for the rest', async () => {
    const page = await json('/komga/api/v1/series?unpaged=true');
    const content = expectPage('PageSeriesDto', 'SeriesDto', page);
    for (const s of content) expectKomga('SeriesDto', s);
    expect(content.map((s) => s.name)).toEqual(['Dune', 'Hidden Saga', 'Unknown Series']);
    const dune = content.find((s) => s.name === 'Dune') as Obj;
    expect(dune.id).toBe(`${mainLibrary}-dune`);
    expect(dune.booksCount).toBe(2);
    const unknown = content.find((s) => s.name === 'Unknown Series') as Obj;
    expect(unknown.booksCount).toBe(3);
  });

  it('applies the owner visibility and the library filter', async () => {
    const bobs = expectPage('PageSeriesDto', 'SeriesDto', await json('/komga/api/v1/series?unpaged=true', bob));
    expect(bobs.map((s) => s.name)).toEqual(['Dune', 'Unknown Series']);
    expect(bobs.find((s) => s.name === 'Unknown Series')?.booksCount).toBe(2);
    const filtered = expectPage('PageSeriesDto', 'SeriesDto', await json(`/komga/api/v1/series?library_id=${privateLibrary}`));
    expect(filtered.map((s) => s.name)).toEqual(['Hidden Saga']);
    expect((await komga(`/komga/api/v1/series/${privateLibrary}-hidden-saga`, bob)).statusCode).toBe(404);
    expect((await komga(`/komga/api/v1/series/${privateLibrary}-hidden-saga/books`, bob)).statusCode).toBe(404);
    expect((await komga(`/komga/api/v1/series/${privateLibrary}-hidden-saga/thumbnail`, bob)).statusCode).toBe(404);
  });

  it('pages like Spring', async () => {
    const page = await json('/komga/api/v1/series?page=1&size=2');
    expectPage('PageSeriesDto', 'SeriesDto', page);
    expect(page).toMatchObject({ number: 1, size: 2, numberOfElements: 1, totalElements: 3, totalPages: 2, first: false, last: true, empty: false });
    const beyond = await json('/komga/api/v1/series?page=5&size=2');
    expect(beyond).toMatchObject({ numberOfElements: 0, empty: true, last: true });
  });

  it('serves one series, its books and its thumbnail', async () => {
    const id = `${mainLibrary}-dune`;
    const series = await json(`/komga/api/v1/series/${id}`);
    expectKomga('SeriesDto', series);
    expectMihon('SeriesDto', series);
    const books = expectPage('PageBookDto', 'BookDto', await json(`/komga/api/v1/series/${id}/books?unpaged=true&media_status=READY&deleted=false`));
    for (const b of books) expectKomga('BookDto', b);
    expect(books.map((b) => (b.metadata as Obj).title)).toEqual(['Dune', 'Dune Messiah']);
    expect(books.map((b) => (b.metadata as Obj).number)).toEqual(['1.0', '2.0']);
    const thumb = await komga(`/komga/api/v1/series/${id}/thumbnail`);
    expect(thumb.statusCode).toBe(200);
    expect(thumb.headers['content-type']).toBe('image/jpeg');
    expect((await sharp(thumb.rawPayload).metadata()).format).toBe('jpeg');
    expect((await komga(`/komga/api/v1/series/${mainLibrary}-no-such-series`)).statusCode).toBe(404);
  });

  it('makes each unseriesed book its own series when grouping is off', async () => {
    await setGroupUnknown(false);
    try {
      const content = expectPage('PageSeriesDto', 'SeriesDto', await json('/komga/api/v1/series?unpaged=true', bob));
      expect(content.map((s) => s.name)).toEqual(['Annual Report', 'Comic', 'Dune']);
      for (const s of content) expectKomga('SeriesDto', s);
    } finally {
      await setGroupUnknown(true);
    }
  });
});

describe('books', () => {
  it('lists the visible books', async () => {
    const all = expectPage('PageBookDto', 'BookDto', await json('/komga/api/v1/books?size=100'));
    for (const b of all) expectKomga('BookDto', b);
    expect(all).toHaveLength(6);
    const bobs = expectPage('PageBookDto', 'BookDto', await json('/komga/api/v1/books?size=100', bob));
    expect(bobs.map((b) => b.name).sort()).toEqual(['Annual Report', 'Comic', 'Dune', 'Dune Messiah']);
  });

  it('serves one book, 404 when hidden or missing', async () => {
    const dune = await json(`/komga/api/v1/books/${ids.Dune}`, bob);
    expectKomga('BookDto', dune);
    expectMihon('BookDto', dune);
    expect(dune).toMatchObject({ id: String(ids.Dune), seriesId: `${mainLibrary}-dune`, seriesTitle: 'Dune', number: 1, oneshot: false });
    expect((dune.media as Obj).mediaType).toBe('application/epub+zip');
    expect((dune.metadata as Obj).authors).toEqual([{ name: 'Frank Herbert', role: 'writer' }]);
    for (const path of ['', '/file', '/thumbnail', '/pages', '/pages/1']) {
      expect((await komga(`/komga/api/v1/books/${ids.Neuromancer}${path}`, bob)).statusCode, path).toBe(404);
      expect((await komga(`/komga/api/v1/books/${ids.Secret}${path}`, bob)).statusCode, path).toBe(404);
      expect((await komga(`/komga/api/v1/books/999999${path}`, bob)).statusCode, path).toBe(404);
    }
  });

  it('downloads the file, with ranges', async () => {
    const whole = await komga(`/komga/api/v1/books/${ids.Dune}/file`);
    expect(whole.statusCode).toBe(200);
    expect(whole.rawPayload.equals(readFileSync(lib.path('main', 'Dune.epub')))).toBe(true);
    const part = await komga(`/komga/api/v1/books/${ids.Dune}/file`, alice, { range: 'bytes=0-3' });
    expect(part.statusCode).toBe(206);
    expect(part.rawPayload.toString('latin1')).toBe('PK\u0003\u0004');
  });

  it('serves the book thumbnail', async () => {
    const thumb = await komga(`/komga/api/v1/books/${ids.Dune}/thumbnail`);
    expect(thumb.statusCode).toBe(200);
    expect((await sharp(thumb.rawPayload).metadata()).format).toBe('jpeg');
  });
});

describe('pages', () => {
  it('lists comic pages in natural order and serves them 1-based', async () => {
    const res = await komga(`/komga/api/v1/books/${ids.Comic}/pages`);
    const pages = res.json() as Obj[];
    for (const p of pages) {
      expectKomga('PageDto', p);
      expectMihon('PageDto', p);
    }
    expect(pages.map((p) => [p.number, p.fileName, p.mediaType])).toEqual([
      [1, '2.jpg', 'image/jpeg'],
      [2, '10.jpg', 'image/jpeg'],
      [3, '11.png', 'image/png'],
    ]);
    const first = await komga(`/komga/api/v1/books/${ids.Comic}/pages/1`);
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toBe('image/jpeg');
    const { dominant } = await sharp(first.rawPayload).stats();
    expect(dominant.r).toBeGreaterThan(150);
    const third = await komga(`/komga/api/v1/books/${ids.Comic}/pages/3`);
    expect(third.headers['content-type']).toBe('image/png');
    const converted = await komga(`/komga/api/v1/books/${ids.Comic}/pages/1?convert=png`);
    expect(converted.headers['content-type']).toBe('image/png');
    expect((await sharp(converted.rawPayload).metadata()).format).toBe('png');
    expect((await komga(`/komga/api/v1/books/${ids.Comic}/pages/4`)).statusCode).toBe(404);
    expect((await komga(`/komga/api/v1/books/${ids.Comic}/pages/0`)).statusCode).toBe(404);
  });

  it('renders PDF pages', async () => {
    const pages = (await komga(`/komga/api/v1/books/${ids.Report}/pages`)).json() as Obj[];
    for (const p of pages) expectKomga('PageDto', p);
    expect(pages).toHaveLength(2);
    const page = await komga(`/komga/api/v1/books/${ids.Report}/pages/2`);
    expect(page.statusCode).toBe(200);
    const meta = await sharp(page.rawPayload).metadata();
    expect(meta.format).toBe('jpeg');
    expect(Math.max(meta.width ?? 0, meta.height ?? 0)).toBeLessThanOrEqual(2000);
    expect((await komga(`/komga/api/v1/books/${ids.Report}/pages/3`)).statusCode).toBe(404);
  });

  it('has no pages for an EPUB', async () => {
    expect((await komga(`/komga/api/v1/books/${ids.Dune}/pages`)).json()).toEqual([]);
  });
});

describe('collections', () => {
  it('exposes shelves as collections with the series of their visible books', async () => {
    const page = await json('/komga/api/v1/collections?unpaged=true', bob);
    const content = expectPage('PageCollectionDto', 'CollectionDto', page);
    for (const c of content) expectKomga('CollectionDto', c);
    // Every user starts with a Favorites shelf of their own.
    expect(content.map((c) => c.name)).toEqual(['Favorites', 'Favourites']);
    // Neuromancer (restricted) and the Secret Diary (another library) are on the shelf but hidden from bob.
    expect(content[1]).toMatchObject({ name: 'Favourites', seriesIds: [`${mainLibrary}-dune`], ordered: false, filtered: true });
    // alice (an admin's account) sees no private shelf of another user.
    const alices = (await json('/komga/api/v1/collections', alice)).content as Obj[];
    expect(alices.map((c) => c.name)).toEqual(['Favorites']);
  });

  it('serves one collection and its series, 404 for one the account may not open', async () => {
    const shelf = await d.store.db.selectFrom('shelf').select('id').where('name', '=', 'Favourites').executeTakeFirstOrThrow();
    const one = await json(`/komga/api/v1/collections/${shelf.id}`, bob);
    expectKomga('CollectionDto', one);
    expectMihon('CollectionDto', one);
    expect(one).toMatchObject({ id: String(shelf.id), seriesIds: [`${mainLibrary}-dune`] });
    const series = expectPage('PageSeriesDto', 'SeriesDto', await json(`/komga/api/v1/collections/${shelf.id}/series?unpaged=true`, bob));
    for (const s of series) expectKomga('SeriesDto', s);
    expect(series.map((s) => s.id)).toEqual([`${mainLibrary}-dune`]);
    for (const url of [`/komga/api/v1/collections/${shelf.id}`, `/komga/api/v1/collections/${shelf.id}/series`, '/komga/api/v1/collections/99999', '/komga/api/v1/collections/magic-99999', '/komga/api/v1/collections/nope']) {
      expect((await komga(url, alice)).statusCode, url).toBe(404);
    }
    // The series list filtered by a collection, as Mihon's collection filter asks.
    const filtered = expectPage('PageSeriesDto', 'SeriesDto', await json(`/komga/api/v1/series?collection_id=${shelf.id}`, bob));
    expect(filtered.map((s) => s.name)).toEqual(['Dune']);
  });

  it('exposes magic shelves as collections (own and public ones, owner with OPDS access)', async () => {
    const admin = await d.store.db.selectFrom('users').select('id').where('username', '=', 'boss').executeTakeFirstOrThrow();
    const rules = JSON.stringify({ type: 'group', join: 'or', rules: [{ field: 'fileType', operator: 'equals', value: 'pdf' }, { field: 'seriesName', operator: 'equals', value: 'hidden saga' }] });
    const magic = await d.store.db.insertInto('magic_shelf').values({ user_id: admin.id, name: 'Reports and secrets', filter_json: rules, is_public: 1 }).returning('id').executeTakeFirstOrThrow();
    try {
      const all = (await json('/komga/api/v1/collections?unpaged=true')).content as Obj[];
      const entry = all.find((c) => c.id === `magic-${magic.id}`) as Obj;
      expectKomga('CollectionDto', entry);
      expect(entry).toMatchObject({ name: 'Reports and secrets', seriesIds: [`${privateLibrary}-hidden-saga`, `${mainLibrary}-unknown-series`], filtered: false });
      const series = expectPage('PageSeriesDto', 'SeriesDto', await json(`/komga/api/v1/collections/magic-${magic.id}/series`));
      expect(series.map((s) => s.name)).toEqual(['Hidden Saga', 'Unknown Series']);
      // bob's owner has no OPDS access: no magic shelves for him.
      expect(((await json('/komga/api/v1/collections?unpaged=true', bob)).content as Obj[]).map((c) => c.id)).not.toContain(`magic-${magic.id}`);
      expect((await komga(`/komga/api/v1/collections/magic-${magic.id}`, bob)).statusCode).toBe(404);
    } finally {
      await d.store.db.deleteFrom('magic_shelf').where('id', '=', magic.id).execute();
    }
  });
});

describe('filters Komga clients send', () => {
  it('filters series by search, genre, tag, publisher, author, read status and oneshot', async () => {
    const names = async (query: string, account: Account = alice): Promise<unknown[]> => expectPage('PageSeriesDto', 'SeriesDto', await json(`/komga/api/v1/series?${query}`, account)).map((s) => s.name);
    expect(await names('search=dun&deleted=false&sort=metadata.titleSort,asc')).toEqual(['Dune']);
    expect(await names('genre=cyberpunk')).toEqual(['Unknown Series']);
    expect(await names('genre=cyberpunk', bob)).toEqual([]);
    expect(await names('author=Frank%20Herbert,writer')).toEqual(['Dune']);
    expect(await names('author=Frank%20Herbert,penciller')).toEqual([]);
    expect(await names('status=ENDED')).toEqual([]);
    expect(await names('status=ONGOING&complete=true')).toEqual(['Dune', 'Hidden Saga', 'Unknown Series']);
    expect(await names('oneshot=true')).toEqual(['Hidden Saga']);
    expect(await names(`library_id=${privateLibrary},${mainLibrary}&sort=booksCount,desc`)).toEqual(['Unknown Series', 'Dune', 'Hidden Saga']);
    expect(await names('sort=metadata.titleSort,desc')).toEqual(['Unknown Series', 'Hidden Saga', 'Dune']);
    expect(await names('read_status=UNREAD')).toEqual(['Dune', 'Hidden Saga', 'Unknown Series']);
    expect(await names('sharing_label=kids')).toEqual([]);
  });

  it('filters books by library, search, tag, media status and deleted', async () => {
    const names = async (query: string, account: Account = alice): Promise<unknown[]> =>
      expectPage('PageBookDto', 'BookDto', await json(`/komga/api/v1/books?${query}`, account))
        .map((b) => b.name)
        .sort();
    expect(await names(`library_id=${privateLibrary}`)).toEqual(['Secret Diary']);
    expect(await names('search=DUNE&page=0&deleted=false')).toEqual(['Dune', 'Dune Messiah']);
    expect(await names('media_status=READY&size=100')).toHaveLength(6);
    expect(await names('media_status=ERROR')).toEqual([]);
    expect(await names('deleted=true')).toEqual([]);
    expect(await names(`library_id=${privateLibrary}`, bob)).toEqual([]);
    const sorted = expectPage('PageBookDto', 'BookDto', await json('/komga/api/v1/books?sort=metadata.title,desc&size=2'));
    expect(sorted.map((b) => b.name)).toEqual(['Secret Diary', 'Neuromancer']);
  });

  it('lists genres, tags, publishers and authors of the visible books', async () => {
    for (const path of ['/api/v1/genres', '/api/v1/tags', '/api/v1/publishers', '/api/v1/authors']) {
      expectResponse(path, (await komga(`/komga${path}`)).json());
      expectResponse(path, (await komga(`/komga${path}?library_id=${mainLibrary}`, bob)).json());
    }
    expect(await json('/komga/api/v1/genres')).toEqual(['Cyberpunk']);
    expect(await json('/komga/api/v1/genres', bob)).toEqual([]);
    expect(Array.isArray(await json('/komga/api/v1/tags'))).toBe(true);
    expect(Array.isArray(await json(`/komga/api/v1/publishers?library_id=${mainLibrary}`))).toBe(true);
    const authors = (await komga('/komga/api/v1/authors', bob)).json() as Obj[];
    for (const a of authors) expectKomga('AuthorDto', a);
    expect(authors).toEqual([{ name: 'Frank Herbert', role: 'writer' }]);
    expect(((await komga('/komga/api/v1/authors?search=gib')).json() as Obj[]).map((a) => a.name)).toEqual(['William Gibson']);
    const lists = await json('/komga/api/v1/readlists');
    expectKomga('PageReadListDto', lists);
    expect(lists).toMatchObject({ content: [], totalElements: 0 });
  });
});

describe('read progress', () => {
  const progressOf = async (bookId: number, account: Account = alice): Promise<Obj | null> => {
    const book = await json(`/komga/api/v1/books/${bookId}`, account);
    expectKomga('BookDto', book);
    return book.readProgress as Obj | null;
  };

  it('marks a comic page, completes it and clears it, on the owner’s Bindery progress', async () => {
    const comic = ids.Comic as number;
    expect(await progressOf(comic)).toBeNull();
    const patch = await d.inject({ method: 'PATCH', url: `/komga/api/v1/books/${comic}/read-progress`, headers: { authorization: basic(alice) }, payload: { page: 2 } });
    expect(patch.statusCode, patch.body).toBe(204);
    expect(await progressOf(comic)).toMatchObject({ page: 2, completed: false });
    const owner = await d.store.db.selectFrom('opds_user_v2').select('user_id').where('username', '=', 'alice').executeTakeFirstOrThrow();
    const row = await d.store.db.selectFrom('user_book_progress').selectAll().where('user_id', '=', owner.user_id).where('book_id', '=', comic).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ cbx_progress: 2, read_status: 'READING' });
    const inProgress = expectPage('PageBookDto', 'BookDto', await json('/komga/api/v1/books?read_status=IN_PROGRESS'));
    expect(inProgress.map((b) => b.id)).toEqual([String(comic)]);
    // Another account (another owner) has its own progress.
    expect(await progressOf(comic, bob)).toBeNull();

    expect((await d.inject({ method: 'PATCH', url: `/komga/api/v1/books/${comic}/read-progress`, headers: { authorization: basic(alice) }, payload: { completed: true } })).statusCode).toBe(204);
    expect(await progressOf(comic)).toMatchObject({ page: 3, completed: true });
    expect((await d.inject({ method: 'DELETE', url: `/komga/api/v1/books/${comic}/read-progress`, headers: { authorization: basic(alice) } })).statusCode).toBe(204);
    expect(await progressOf(comic)).toBeNull();

    for (const payload of [{ page: 'two' }, { completed: 'yes' }, {}, [1]]) {
      const bad = await d.inject({ method: 'PATCH', url: `/komga/api/v1/books/${comic}/read-progress`, headers: { authorization: basic(alice) }, payload });
      expect(bad.statusCode, JSON.stringify(payload)).toBe(400);
    }
    const hidden = await d.inject({ method: 'PATCH', url: `/komga/api/v1/books/${ids.Secret}/read-progress`, headers: { authorization: basic(bob) }, payload: { completed: true } });
    expect(hidden.statusCode).toBe(404);
  });

  it('marks a series read and unread, and answers Mihon’s tracker', async () => {
    const id = `${mainLibrary}-dune`;
    const tracker = async (): Promise<Obj> => {
      const body = await json(`/komga/api/v2/series/${id}/read-progress/tachiyomi`);
      expectKomga('TachiyomiReadProgressV2Dto', body);
      return body;
    };
    expect(await tracker()).toEqual({ booksCount: 2, booksReadCount: 0, booksUnreadCount: 2, booksInProgressCount: 0, lastReadContinuousNumberSort: 0, maxNumberSort: 2 });
    const put = await d.inject({ method: 'PUT', url: `/komga/api/v2/series/${id}/read-progress/tachiyomi`, headers: { authorization: basic(alice) }, payload: { lastBookNumberSortRead: 1 } });
    expect(put.statusCode, put.body).toBe(204);
    expect(await tracker()).toMatchObject({ booksReadCount: 1, lastReadContinuousNumberSort: 1 });
    const series = await json(`/komga/api/v1/series/${id}`);
    expectKomga('SeriesDto', series);
    expect(series).toMatchObject({ booksReadCount: 1, booksUnreadCount: 1, booksInProgressCount: 0 });
    expect((await d.inject({ method: 'POST', url: `/komga/api/v1/series/${id}/read-progress`, headers: { authorization: basic(alice) } })).statusCode).toBe(204);
    expect(await tracker()).toMatchObject({ booksReadCount: 2, lastReadContinuousNumberSort: 2 });
    expect(((await json('/komga/api/v1/series?read_status=READ')).content as Obj[]).map((s) => s.name)).toEqual(['Dune']);
    expect((await d.inject({ method: 'DELETE', url: `/komga/api/v1/series/${id}/read-progress`, headers: { authorization: basic(alice) } })).statusCode).toBe(204);
    expect(await tracker()).toMatchObject({ booksReadCount: 0, booksUnreadCount: 2 });
    const bad = await d.inject({ method: 'PUT', url: `/komga/api/v2/series/${id}/read-progress/tachiyomi`, headers: { authorization: basic(alice) }, payload: { lastBookNumberSortRead: 'x' } });
    expect(bad.statusCode).toBe(400);
    expect((await komga(`/komga/api/v2/series/${privateLibrary}-hidden-saga/read-progress/tachiyomi`, bob)).statusCode).toBe(404);
  });
});

describe('every route', () => {
  it('answers 401 with the Basic challenge to anonymous callers', async () => {
    const routes = (await allRoutes()).filter((r) => r.url.startsWith('/komga/api/'));
    expect(routes.length).toBeGreaterThanOrEqual(27);
    for (const route of routes) {
      const url = route.url.replace(/\{(\w+)\}/g, '1');
      const res = await d.inject({ method: route.method as 'GET', url });
      expect(res.statusCode, `${route.method} ${url}`).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Basic realm="Booklore Komga API"');
    }
  });
});

describe('clean mode', () => {
  it('drops *Lock properties, nulls, empty strings and empty arrays', async () => {
    for (const flag of ['clean', 'clean=true']) {
      const book = await json(`/komga/api/v1/books/${ids.Comic}?${flag}`);
      const text = JSON.stringify(book);
      expect(text).not.toMatch(/Lock"/);
      expect(text).not.toMatch(/:""|:\[\]|:null/);
      expect((book.metadata as Obj).title).toBe('Comic');
    }
    const normal = await json(`/komga/api/v1/books/${ids.Comic}?clean=false`);
    expect((normal.metadata as Obj).titleLock).toBe(false);
    // The page envelope keeps its (empty) content.
    const page = await json('/komga/api/v1/collections?clean&page=9', alice);
    expect(page.content).toEqual([]);
    // Series pages and series are written as JSON text (kept per series): cleaned as the objects are.
    const series = await json('/komga/api/v1/series');
    const seriesId = ((series.content as Obj[])[0] as Obj).id as string;
    for (const path of ['/komga/api/v1/series', `/komga/api/v1/series/${seriesId}`, '/komga/api/v1/series/new']) {
      expect(await json(`${path}?clean`), path).toEqual(cleaned((await json(path)) as Json));
    }
  });
});
