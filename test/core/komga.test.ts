// The Komga mapping on its own: series ids, the SQL series of a real catalog (grouping, lookups by id, a book's
// series, read counts), the filters, read progress, paging, clean mode, and that every DTO built from sparse rows still
// satisfies Komga's component schemas (and that the validator does catch Grimmory's known gaps).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allPermissions, PERMISSION_NAMES, type Permissions } from '../../src/core/auth/permissions.ts';
import type { Principal } from '../../src/core/auth/principal.ts';
import { bookOrder, loadBookRows, pageOfBooks, type KomgaBookRow } from '../../src/core/komga/catalog.ts';
import { bookDto, cleaned, collectionDto, humanSize, instant, libraryDto, pageDto, pageEnvelope, pageOf, pageRequest, readProgressDto, releaseDate, seriesDto, userDto } from '../../src/core/komga/dto.ts';
import { authorNames, bookConditions, libraryIds, listParam, readStatuses, seriesCanMatch } from '../../src/core/komga/filters.ts';
import { bookProgress, komgaPage, markBookProgress, markRead, markUnread } from '../../src/core/komga/read-progress.ts';
import { seriesOfBooks } from '../../src/core/komga/book-series.ts';
import { findSeries, seriesBookIds, seriesId, seriesIndex, seriesReadCounts, seriesSlug, summarize } from '../../src/core/komga/series.ts';
import { UNKNOWN_SERIES } from '../../src/core/komga/sql.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { conformancePath } from '../helpers/conformance.ts';
import { decodeErrors, keyMismatches, openApiValidator } from '../helpers/komga-contract.ts';

const errorsOf = openApiValidator();

function row(id: number, overrides: Partial<KomgaBookRow> = {}): KomgaBookRow {
  return {
    id,
    libraryId: 1,
    addedOn: '2024-05-01T10:00:00.000Z',
    title: null,
    seriesName: null,
    seriesNumber: null,
    description: null,
    publisher: null,
    publishedDate: null,
    isbn13: null,
    isbn10: null,
    pageCount: null,
    language: null,
    ageRating: null,
    fileName: null,
    fileSizeKb: null,
    sizeBytes: null,
    bookType: null,
    hash: null,
    filePageCount: null,
    authors: [],
    categories: [],
    tags: [],
    ...overrides,
  };
}

const links = { apiRoot: '/komga' };

describe('series ids', () => {
  it('slugs names as Grimmory does for Latin text and keeps other scripts', () => {
    expect(seriesSlug('The Sandman: Vol. 1')).toBe('the-sandman-vol-1');
    expect(seriesId(3, 'Dune')).toBe('3-dune');
    expect(seriesSlug('進撃の巨人')).toBe('進撃の巨人');
    expect(seriesSlug('!!!')).toBe('-');
    expect(UNKNOWN_SERIES).toBe('Unknown Series');
  });
});

describe('DTOs from sparse rows', () => {
  const summary = {
    ref: { id: "1-x", libraryId: 1, name: "X", members: undefined as never, bounded: true },
    count: 2,
    read: 1,
    inProgress: 0,
    created: null,
    modified: '2024-05-01T10:00:00.000Z',
    release: '1999',
    firstBookId: 1,
    authors: ['A'],
    tags: [],
  };

  it('satisfy Komga schemas', () => {
    expect(errorsOf('SeriesDto', seriesDto(summary, row(1), links))).toEqual([]);
    expect(errorsOf('SeriesDto', seriesDto({ ...summary, firstBookId: undefined, release: null }, undefined, links))).toEqual([]);
    const book = row(2, { fileName: 'x.cbz', bookType: 'CBX', sizeBytes: 5000, publishedDate: '1999' });
    expect(errorsOf('BookDto', bookDto(book, { id: '1-x', title: 'X', oneshot: false }, links))).toEqual([]);
    const progress = { state: 'IN_PROGRESS' as const, page: 3, percent: 10, readDate: '2024-05-02T00:00:00Z', created: undefined, lastModified: undefined, device: '', deviceId: '' };
    const withProgress = bookDto(book, { id: '1-x', title: 'X', oneshot: false }, links, progress);
    expect(errorsOf('BookDto', withProgress)).toEqual([]);
    expect(withProgress.readProgress).toMatchObject({ page: 3, completed: false, readDate: '2024-05-02T00:00:00.000Z' });
    expect(errorsOf('LibraryDto', libraryDto({ id: 1, name: 'L', root: '/x', createdAt: '2024-01-01T00:00:00Z' }))).toEqual([]);
    expect(errorsOf('CollectionDto', collectionDto({ id: 'magic-1', name: 'S', seriesIds: ['1-x'], created: 'bad', modified: '2024-01-01 00:00:00', filtered: false }))).toEqual([]);
    expect(errorsOf('UserDto', userDto(1, 'u', [1]))).toEqual([]);
    expect(errorsOf('PageBookDto', pageOf([], pageRequest({})))).toEqual([]);
    expect(errorsOf('PageSeriesDto', pageEnvelope([], 0, pageRequest({ unpaged: 'true' }), true))).toEqual([]);
  });

  it('carry every key of Komga’s DTOs, null when unknown, and decode as Komelia’s strict decoder does', () => {
    const book = row(3, { fileName: 'x.epub', bookType: 'EPUB' });
    const dtos: [string, unknown][] = [
      ['SeriesDto', seriesDto({ ...summary, firstBookId: undefined, release: null }, undefined, links)],
      ['SeriesDto', seriesDto(summary, row(1, { ageRating: 16 }), links)],
      ['BookDto', bookDto(book, { id: '1-x', title: 'X', oneshot: true }, links)],
      ['LibraryDto', libraryDto({ id: 1, name: 'L', root: '/x', createdAt: '2024-01-01T00:00:00Z' })],
      ['UserDto', userDto(1, 'u', 'all')],
      ['PageDto', pageDto({ number: 1, fileName: 'page-1.jpg', mediaType: 'image/jpeg' })],
      ['PageDto', pageDto({ number: 2, fileName: '2.png', mediaType: 'image/png', sizeBytes: 2048 }, { width: 40, height: 60 })],
      ['Page<BookDto>', pageOf([], pageRequest({}))],
    ];
    for (const [name, body] of dtos) {
      expect(keyMismatches(name, body)).toEqual([]);
      expect(decodeErrors(name, body)).toEqual([]);
    }
    const unknown = dtos[0]?.[1] as { metadata: Record<string, unknown>; booksMetadata: Record<string, unknown> };
    expect(unknown.metadata.ageRating).toBeNull();
    expect(unknown.booksMetadata.releaseDate).toBeNull();
    expect((dtos[6]?.[1] as Record<string, unknown>)).toMatchObject({ width: 40, height: 60, sizeBytes: 2048, size: '2 KB' });
    expect((dtos[5]?.[1] as Record<string, unknown>)).toMatchObject({ width: null, height: null, sizeBytes: null, size: '' });
    // The decoder does reject what Komelia rejects: a missing nullable key, a null where none is allowed.
    const { readProgress: _dropped, ...withoutProgress } = dtos[2]?.[1] as Record<string, unknown>;
    expect(decodeErrors('BookDto', withoutProgress)).toEqual(['BookDto.readProgress: MissingFieldException']);
    expect(decodeErrors('LibraryDto', { ...(dtos[3]?.[1] as object), root: null })).toEqual(['LibraryDto.root: null for a non-null property']);
  });

  it('catches the gaps of a Grimmory-style book (the validator works)', () => {
    const sample = JSON.parse(readFileSync(conformancePath('komga', 'samples', 'grimmory-style-book.json'), 'utf8')) as unknown;
    expect(errorsOf('BookDto', sample).length).toBeGreaterThan(0);
  });

  it('formats numbers, sizes and dates', () => {
    const dto = bookDto(row(5, { seriesNumber: 2.5, fileSizeKb: 2048 }), { id: '1-x', title: 'X', oneshot: true }, links);
    expect(dto).toMatchObject({ number: 2, sizeBytes: 2097152, size: '2 MB', url: '/komga/api/v1/books/5/file' });
    expect(dto.metadata).toMatchObject({ number: '2.5', numberSort: 2.5, title: 'Book 5' });
    expect(dto.readProgress).toBeNull();
    expect(humanSize(1023)).toBe('1023 B');
    expect(releaseDate('2001-02-03T00:00:00')).toBe('2001-02-03');
    expect(instant('2024-01-01 10:00:00')).toBe('2024-01-01T10:00:00.000Z');
    expect(instant('garbage')).toBe('1970-01-01T00:00:00.000Z');
  });

  it('turns Bindery progress into a Komga page', () => {
    const base = { page: undefined, percent: 0, readDate: undefined, created: undefined, lastModified: undefined, device: 'Kobo', deviceId: 'k1' };
    expect(komgaPage({ ...base, state: 'READ' }, 40)).toBe(40);
    expect(komgaPage({ ...base, state: 'IN_PROGRESS', page: 12 }, 40)).toBe(12);
    expect(komgaPage({ ...base, state: 'IN_PROGRESS', percent: 50 }, 40)).toBe(20);
    expect(komgaPage({ ...base, state: 'IN_PROGRESS', percent: 50 }, 0)).toBe(1);
    expect(komgaPage({ ...base, state: 'IN_PROGRESS', page: 99 }, 40)).toBe(40);
    expect(readProgressDto({ ...base, state: 'READ' }, 0)).toMatchObject({ page: 1, completed: true, deviceName: 'Kobo', deviceId: 'k1', readDate: '1970-01-01T00:00:00.000Z' });
  });
});

describe('filter parameters', () => {
  it('reads repeated and comma-separated lists, and Komga read states', () => {
    expect(listParam({ library_id: ['1,2', '3'] }, 'library_id')).toEqual(['1', '2', '3']);
    expect(listParam({}, 'tag')).toBeUndefined();
    expect(libraryIds({ library_id: 'x,7' })).toEqual([7]);
    expect(readStatuses({ read_status: 'read,in_progress,bogus' })).toEqual(['READ', 'IN_PROGRESS']);
    expect(authorNames({ author: ['Frank Herbert,writer', 'Someone,penciller', 'Plain'] })).toEqual(['Frank Herbert', 'Plain']);
    expect(seriesCanMatch({ status: 'ENDED' })).toBe(false);
    expect(seriesCanMatch({ status: ['ENDED', 'ONGOING'], deleted: 'false' })).toBe(true);
    expect(seriesCanMatch({ deleted: 'true' })).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Series and books of a real catalog

let dir: string;
let store: Store;
let userId: number;
let libraryId: number;
let otherLibrary: number;
const book: Record<string, number> = {};

const admin = (): Principal => ({ userId, username: 'admin', isDefaultPassword: false, sessionVersion: 0, permissions: allPermissions(), libraryIds: [], restrictions: [] });
const noFlags = (): Permissions => Object.fromEntries(PERMISSION_NAMES.map((p) => [p, false])) as Permissions;
const member = (): Principal => ({ ...admin(), permissions: noFlags(), libraryIds: [libraryId], restrictions: [{ type: 'CATEGORY', mode: 'EXCLUDE', value: 'hidden' }] });
const names = (ids: number[]): string[] => {
  const byId = new Map(Object.entries(book).map(([k, v]) => [v, k]));
  return ids.map((id) => byId.get(id) ?? String(id));
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-komga-core-'));
  store = await openStore(join(dir, 'catalog.sqlite'));
  userId = (await store.db.insertInto('users').values({ username: 'admin', password_hash: 'x', name: 'Admin' }).returning('id').executeTakeFirstOrThrow()).id;
  libraryId = await seedLibrary(store.db, dir, 'Comics');
  otherLibrary = await seedLibrary(store.db, dir, 'Other');
  const add = async (key: string, title: string, meta: Record<string, unknown> = {}, library = libraryId, types = ['CBX']): Promise<void> => {
    const { bookId } = await seedBook(store.db, library, { title, types, authors: [`${title} Author`] });
    book[key] = bookId;
    await store.db.updateTable('book_metadata').set({ search_text: title.toLowerCase(), ...meta }).where('book_id', '=', bookId).execute();
  };
  await add('saga2', 'Saga Two', { series_name: 'Saga', series_number: 2 });
  await add('saga1', 'Saga One', { series_name: 'saga', series_number: 1, published_date: '2012' });
  await add('saga3', 'Saga Three', { series_name: 'SAGA', series_number: 3 });
  await add('punct', 'Saga Side', { series_name: 'Saga!' });
  await add('loose', 'Loose Leaf', {});
  await add('loose2', 'loose leaf', {});
  await add('blank', '', { series_name: '  ' });
  await add('other', 'Elsewhere', { series_name: 'Saga' }, otherLibrary);
  await add('hidden', 'Hidden One', { series_name: 'Saga', series_number: 4 });
  await add('gone', 'Gone', { series_name: 'Saga', series_number: 5 });
  await add('paper', 'Paper', { series_name: 'Saga', series_number: 6 }, libraryId, []);
  await store.db.updateTable('book').set({ deleted: 1 }).where('id', '=', book.gone as number).execute();
  await store.db.updateTable('book').set({ is_physical: 1 }).where('id', '=', book.paper as number).execute();
  const hidden = (await store.db.insertInto('category').values({ name: 'Hidden' }).returning('id').executeTakeFirstOrThrow()).id;
  await store.db.insertInto('book_metadata_category_mapping').values({ book_id: book.hidden as number, category_id: hidden }).execute();
  await store.db.insertInto('user_book_progress').values([
    { user_id: userId, book_id: book.saga1 as number, read_status: 'READ' },
    { user_id: userId, book_id: book.saga2 as number, cbx_progress: 5, cbx_progress_percent: 25 },
  ]).execute();
});

afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('series in SQL', () => {
  it('groups books by library and name regardless of ASCII case, with an Unknown Series per library', async () => {
    const index = await seriesIndex(store, admin(), true);
    expect(index.heads.map((h) => [h.name, h.libraryId, h.count])).toEqual([
      ['SAGA', libraryId, 4],
      ['Saga', otherLibrary, 1],
      ['Saga!', libraryId, 1],
      [UNKNOWN_SERIES, libraryId, 3],
    ]);
    // The member loses the book its restriction hides.
    expect((await seriesIndex(store, member(), true)).heads.map((h) => [h.name, h.count])).toEqual([
      ['SAGA', 3],
      ['Saga!', 1],
      [UNKNOWN_SERIES, 3],
    ]);
  });

  it('makes books without a series their own series when they are not grouped, one per name', async () => {
    const heads = (await seriesIndex(store, admin(), false)).heads.filter((h) => h.kind === 'books');
    expect(heads.map((h) => [h.name, h.count])).toEqual([
      [`-${book.blank}-0`, 1],
      ['Loose Leaf', 2],
    ]);
  });

  it('finds a series by id, merging names that share a slug, and only among what the reader may see', async () => {
    const saga = await findSeries(store, admin(), `${libraryId}-saga`, true);
    expect(saga?.name).toBe('SAGA');
    expect(names((await seriesBookIds(store, admin(), saga as NonNullable<typeof saga>, [], 'all')).ids)).toEqual(['saga1', 'saga2', 'saga3', 'hidden']);
    expect(names((await seriesBookIds(store, member(), await findSeries(store, member(), `${libraryId}-saga`, true) as NonNullable<typeof saga>, [], 'all')).ids)).toEqual(['saga1', 'saga2', 'saga3']);
    const unknown = await findSeries(store, admin(), `${libraryId}-unknown-series`, true);
    expect(names((await seriesBookIds(store, admin(), unknown as NonNullable<typeof saga>, [], 'all')).ids).sort()).toEqual(['blank', 'loose', 'loose2']);
    expect(await findSeries(store, member(), `${otherLibrary}-saga`, true)).toBeUndefined();
    expect(await findSeries(store, admin(), `${libraryId}-nothing`, true)).toBeUndefined();
    expect(await findSeries(store, admin(), 'garbage', true)).toBeUndefined();
    const loose = await findSeries(store, admin(), `${libraryId}-loose-leaf`, false);
    expect(names((await seriesBookIds(store, admin(), loose as NonNullable<typeof saga>, [], 'all')).ids)).toEqual(['loose', 'loose2']);
    expect(await findSeries(store, admin(), `${libraryId}-loose-leaf`, true)).toBeUndefined();
  });

  it('summarizes a series: counts, reading, first book, dates', async () => {
    const saga = await findSeries(store, admin(), `${libraryId}-saga`, true);
    const summary = await summarize(store, admin(), saga as NonNullable<typeof saga>, userId);
    expect(summary).toMatchObject({ count: 4, read: 1, inProgress: 1, release: '2012', firstBookId: book.saga1 });
    expect(summary.authors).toEqual(['Hidden One Author', 'Saga One Author', 'Saga Three Author', 'Saga Two Author']);
    const counts = await seriesReadCounts(store, admin(), true, userId);
    expect(counts.get(`${libraryId}\u0000saga`)).toEqual({ read: 1, inProgress: 1 });
  });

  it('names the series of each book and whether it stands alone', async () => {
    const rows = await loadBookRows(store, [book.saga2 as number, book.punct as number, book.loose as number, book.other as number]);
    const input = rows.map((r) => ({ id: r.id, libraryId: r.libraryId, seriesName: r.seriesName, name: r.title ?? '' }));
    const grouped = await seriesOfBooks(store, admin(), input, true);
    expect(grouped.get(book.saga2 as number)).toEqual({ id: `${libraryId}-saga`, title: 'SAGA', oneshot: false });
    expect(grouped.get(book.punct as number)).toEqual({ id: `${libraryId}-saga-`, title: 'Saga!', oneshot: true });
    expect(grouped.get(book.loose as number)).toEqual({ id: `${libraryId}-unknown-series`, title: UNKNOWN_SERIES, oneshot: false });
    expect(grouped.get(book.other as number)).toMatchObject({ id: `${otherLibrary}-saga`, oneshot: true });
    expect((await seriesOfBooks(store, admin(), input, false)).get(book.loose as number)).toEqual({ id: `${libraryId}-loose-leaf`, title: 'Loose Leaf', oneshot: false });
  });
});

describe('books in SQL', () => {
  const page = async (query: Record<string, unknown>, principal = admin()): Promise<string[]> =>
    names((await pageOfBooks(store, principal, bookConditions(store.dialect, query, userId), bookOrder(store.dialect, query.sort), { offset: 0, limit: 50 })).ids);

  it('lists what the reader may list, by id, with the filters Komga clients send', async () => {
    expect(await page({})).toEqual(['saga2', 'saga1', 'saga3', 'punct', 'loose', 'loose2', 'blank', 'other', 'hidden']);
    expect(await page({}, member())).not.toContain('hidden');
    expect(await page({ library_id: String(otherLibrary) })).toEqual(['other']);
    expect(await page({ library_id: 'nope' })).toEqual([]);
    expect(await page({ search: 'LEAF' })).toEqual(['loose', 'loose2']);
    expect(await page({ read_status: 'READ' })).toEqual(['saga1']);
    expect(await page({ read_status: 'IN_PROGRESS' })).toEqual(['saga2']);
    expect(await page({ read_status: ['UNREAD', 'IN_PROGRESS'] })).not.toContain('saga1');
    expect(await page({ media_status: 'ERROR' })).toEqual([]);
    expect(await page({ media_status: 'READY', deleted: 'false' })).toHaveLength(9);
    expect(await page({ deleted: 'true' })).toEqual([]);
    expect(await page({ author: 'saga one author,writer' })).toEqual(['saga1']);
    expect(await page({ released_after: '2011-12-31' })).toEqual(['saga1']);
    expect(await page({ sort: 'metadata.title,desc', search: 'saga' })).toEqual(['saga2', 'saga3', 'punct', 'saga1']);
    const total = await pageOfBooks(store, admin(), [], bookOrder(store.dialect, undefined), { offset: 0, limit: 2 });
    expect(total).toMatchObject({ total: 9 });
    expect(total.ids).toHaveLength(2);
  });
});

describe('read progress', () => {
  it('reads and writes the owner’s progress as Komga describes it', async () => {
    const [comic] = await loadBookRows(store, [book.saga3 as number]) as KomgaBookRow[];
    const file = (await store.db.selectFrom('book_file').select('id').where('book_id', '=', comic?.id as number).executeTakeFirstOrThrow()).id;
    const target = { bookId: comic?.id as number, primaryFileId: file, bookType: 'CBX', pagesCount: 20 };
    await markBookProgress(store, userId, target, { page: 5 });
    let progress = (await bookProgress(store, userId, [target.bookId])).get(target.bookId);
    expect(progress).toMatchObject({ state: 'IN_PROGRESS', page: 5, percent: 25 });
    await markBookProgress(store, userId, target, { page: 20 });
    expect((await bookProgress(store, userId, [target.bookId])).get(target.bookId)?.state).toBe('READ');
    await markUnread(store, userId, [target.bookId]);
    expect((await bookProgress(store, userId, [target.bookId])).get(target.bookId)?.state).toBe('UNREAD');
    await markBookProgress(store, userId, target, { completed: true });
    progress = (await bookProgress(store, userId, [target.bookId])).get(target.bookId);
    expect(progress).toMatchObject({ state: 'READ', page: 20 });
    await expect(markBookProgress(store, userId, target, {})).rejects.toThrow(/page is required/);

    // An EPUB keeps its reading position: only the percent and the status move.
    const { bookId: epub } = await seedBook(store.db, libraryId, { title: 'Prose', types: ['EPUB'] });
    await store.db.insertInto('user_book_progress').values({ user_id: userId, book_id: epub, epub_progress: 'epubcfi(/6/4)', epub_progress_percent: 10, read_status: 'READING' }).execute();
    await markBookProgress(store, userId, { bookId: epub, primaryFileId: undefined, bookType: 'EPUB', pagesCount: 200 }, { page: 100 });
    const row = await store.db.selectFrom('user_book_progress').selectAll().where('user_id', '=', userId).where('book_id', '=', epub).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ epub_progress: 'epubcfi(/6/4)', epub_progress_percent: 50, read_status: 'READING' });
    await markRead(store, userId, [epub, book.saga1 as number]);
    expect((await bookProgress(store, userId, [epub])).get(epub)?.state).toBe('READ');
  });
});

describe('paging and clean mode', () => {
  it('reads page, size and unpaged with defaults', () => {
    expect(pageRequest({})).toEqual({ page: 0, size: 20, unpaged: false });
    expect(pageRequest({ page: '2', size: '5000', unpaged: '' })).toEqual({ page: 2, size: 1000, unpaged: true });
    expect(pageRequest({ page: '-1', size: 'x', unpaged: 'true' }, false)).toEqual({ page: 0, size: 20, unpaged: false });
  });

  it('builds the Spring envelope', () => {
    const items = [1, 2, 3, 4, 5];
    expect(pageOf(items, { page: 2, size: 2, unpaged: false })).toMatchObject({ content: [5], number: 2, totalPages: 3, first: false, last: true, numberOfElements: 1 });
    expect(pageOf(items, { page: 0, size: 20, unpaged: true })).toMatchObject({ content: items, size: 5, totalPages: 1, last: true });
  });

  it('drops Lock properties, nulls, empty strings and arrays, but keeps a page content', () => {
    expect(cleaned({ a: '', b: null, c: [], titleLock: false, d: { eLock: true, f: 1 }, content: [] })).toEqual({ d: { f: 1 }, content: [] });
  });
});
