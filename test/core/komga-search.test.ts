// Komga's search bodies on a real catalog: the parser's refusals, books compiled to one SQL condition (trees,
// negations, dates, one-shots, profiles, authors, tags, read states), series filtered by the same trees (a series
// meets a book condition when one of its books does), the recent lists and the referentials.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allPermissions } from '../../src/core/auth/permissions.ts';
import type { Principal } from '../../src/core/auth/principal.ts';
import { bookSearchConditions } from '../../src/core/komga/book-search.ts';
import { bookOrder, pageOfBooks } from '../../src/core/komga/catalog.ts';
import { onDeckPage } from '../../src/core/komga/lists.ts';
import { namesOf } from '../../src/core/komga/referentials.ts';
import { parseBookSearch, parseDuration, parseSeriesSearch, SearchConditionError } from '../../src/core/komga/search-condition.ts';
import { searchSeries } from '../../src/core/komga/series-search.ts';
import { textMatches } from '../../src/core/komga/text-match.ts';
import type { KomgaReader } from '../../src/core/komga/views.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';

let dir: string;
let store: Store;
let userId: number;
let libraryId: number;
let otherLibrary: number;
const book: Record<string, number> = {};
const principal = (): Principal => ({ userId, username: 'admin', isDefaultPassword: false, permissions: allPermissions(), libraryIds: [], restrictions: [], sessionVersion: 0 });
const reader = (): KomgaReader => ({ store, principal: principal(), groupUnknown: true, links: { apiRoot: '/komga' } });

async function books(body: unknown, sort?: string): Promise<string[]> {
  const r = reader();
  const { ids } = await pageOfBooks(store, r.principal, await bookSearchConditions(r, parseBookSearch(body)), bookOrder(store.dialect, sort ?? 'id,asc', userId), 'all');
  const byId = new Map(Object.entries(book).map(([k, v]) => [v, k]));
  return ids.map((id) => byId.get(id) ?? String(id));
}

const series = async (body: unknown): Promise<string[]> => (await searchSeries(reader(), parseSeriesSearch(body))).map((h) => h.name);
const is = (value: unknown) => ({ operator: 'is', value });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-komga-search-'));
  store = await openStore(join(dir, 'catalog.sqlite'));
  userId = (await store.db.insertInto('users').values({ username: 'admin', password_hash: 'x', name: 'Admin' }).returning('id').executeTakeFirstOrThrow()).id;
  libraryId = await seedLibrary(store.db, dir, 'Main');
  otherLibrary = await seedLibrary(store.db, dir, 'Other');
  const add = async (key: string, title: string, meta: Record<string, unknown>, types = ['EPUB'], authors = [`${title} Author`], library = libraryId): Promise<void> => {
    const { bookId } = await seedBook(store.db, library, { title, types, authors });
    book[key] = bookId;
    await store.db.updateTable('book_metadata').set({ search_text: title.toLowerCase(), ...meta }).where('book_id', '=', bookId).execute();
  };
  await add('dune1', 'Dune', { series_name: 'Dune', series_number: 1, published_date: '1965-08-01', age_rating: 12, publisher: 'Chilton', language: 'en' }, ['EPUB'], ['Frank Herbert']);
  await add('dune2', 'Dune Messiah', { series_name: 'Dune', series_number: 2, published_date: '1969' }, ['EPUB'], ['Frank Herbert']);
  await add('dune3', 'Children of Dune', { series_name: 'Dune', series_number: 3, published_date: '1976-04-01' }, ['EPUB'], ['Frank Herbert']);
  await add('comic', 'Comic One', { series_name: 'Comics', series_number: 1, language: 'fr' }, ['CBX']);
  await add('report', 'Annual Report', { published_date: '2024-01-01' }, ['PDF']);
  await add('loose', 'Loose Leaf', {}, ['EPUB']);
  await add('far', 'Far Away', { series_name: 'Far' }, ['EPUB'], ['Someone'], otherLibrary);
  const tag = (await store.db.insertInto('tag').values({ name: 'Desert' }).returning('id').executeTakeFirstOrThrow()).id;
  await store.db.insertInto('book_metadata_tag_mapping').values({ book_id: book.dune2 as number, tag_id: tag }).execute();
  const genre = (await store.db.insertInto('category').values({ name: 'SF' }).returning('id').executeTakeFirstOrThrow()).id;
  await store.db.insertInto('book_metadata_category_mapping').values({ book_id: book.dune1 as number, category_id: genre }).execute();
  await store.db.insertInto('user_book_progress').values([
    { user_id: userId, book_id: book.dune1 as number, read_status: 'READ', last_read_time: '2024-01-01T00:00:00Z' },
    { user_id: userId, book_id: book.comic as number, cbx_progress: 1, cbx_progress_percent: 30, read_status: 'READING', last_read_time: '2024-02-01T00:00:00Z' },
  ]).execute();
});

afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('search bodies', () => {
  it('reads Komga’s shapes and refuses what Komga refuses', async () => {
    expect(parseBookSearch({})).toEqual({ condition: undefined, fullTextSearch: undefined });
    expect(parseBookSearch({ condition: { type: 'AllOfBook', allOf: [{ libraryId: is('1') }] }, fullTextSearch: ' dune ' })).toEqual({
      condition: { allOf: [{ field: 'libraryId', op: { operator: 'is', value: '1' } }] },
      fullTextSearch: 'dune',
    });
    const refused = [
      { condition: { libraryId: { operator: 'contains', value: '1' } } },
      { condition: { genre: is('x') } },
      { condition: { allOf: [], anyOf: [] } },
      { condition: { readStatus: is('FINISHED') } },
      { condition: { releaseDate: { operator: 'isInTheLast', duration: 'soon' } } },
      { condition: { releaseDate: { operator: 'before', dateTime: 'yesterday' } } },
      { condition: { numberSort: is('one') } },
      [],
    ];
    for (const body of refused) expect(() => parseBookSearch(body), JSON.stringify(body)).toThrow(SearchConditionError);
    expect(() => parseSeriesSearch({ condition: { ageRating: is(1.5) } })).toThrow(SearchConditionError);
    expect(() => parseSeriesSearch({ condition: { seriesId: is('x') } })).toThrow(SearchConditionError);
    let deep: unknown = { libraryId: is('1') };
    for (let i = 0; i < 40; i++) deep = { allOf: [deep] };
    expect(() => parseBookSearch({ condition: deep })).toThrow(/deeper/);
  });

  it('reads Java durations', async () => {
    expect(parseDuration('PT720H')).toBe(720 * 3600_000);
    expect(parseDuration('P30D')).toBe(30 * 86400_000);
    expect(parseDuration('PT1H30M')).toBe(5400_000);
    expect(parseDuration('P')).toBeUndefined();
    expect(parseDuration('30 days')).toBeUndefined();
  });

  it('matches text with every Komga string operator', async () => {
    expect(textMatches('Dune Messiah', 'contains', 'MESS')).toBe(true);
    expect(textMatches('Dune Messiah', 'doesNotContain', 'mess')).toBe(false);
    expect(textMatches('Dune Messiah', 'beginsWith', 'dune')).toBe(true);
    expect(textMatches('Dune Messiah', 'endsWith', 'siah')).toBe(true);
    expect(textMatches('Dune Messiah', 'doesNotEndWith', 'siah')).toBe(false);
    expect(textMatches('Dune', 'is', 'dune')).toBe(true);
    expect(textMatches('Dune', 'isNot', 'dune')).toBe(false);
  });
});

describe('books by condition', () => {
  it('compiles trees, negations and every field to SQL', async () => {
    expect(await books({ condition: { libraryId: is(String(otherLibrary)) } })).toEqual(['far']);
    expect(await books({ condition: { libraryId: { operator: 'isNot', value: String(libraryId) } } })).toEqual(['far']);
    expect(await books({ condition: { seriesId: is(`${libraryId}-dune`) } }, 'metadata.numberSort,desc')).toEqual(['dune3', 'dune2', 'dune1']);
    expect(await books({ condition: { allOf: [{ seriesId: is(`${libraryId}-dune`) }, { tag: is('desert') }] } })).toEqual(['dune2']);
    expect(await books({ condition: { anyOf: [{ tag: is('Desert') }, { mediaProfile: is('PDF') }] } })).toEqual(['dune2', 'report']);
    expect(await books({ condition: { tag: { operator: 'isNull' } } })).not.toContain('dune2');
    expect(await books({ condition: { tag: { operator: 'isNotNull' } } })).toEqual(['dune2']);
    expect(await books({ condition: { mediaProfile: is('DIVINA') } })).toEqual(['comic']);
    expect(await books({ condition: { mediaProfile: { operator: 'isNot', value: 'EPUB' } } })).toEqual(['comic', 'report']);
    expect(await books({ condition: { title: { operator: 'beginsWith', value: 'dune' } } })).toEqual(['dune1', 'dune2']);
    expect(await books({ condition: { title: { operator: 'doesNotContain', value: 'dune' } } })).toEqual(['comic', 'report', 'loose', 'far']);
    expect(await books({ condition: { releaseDate: { operator: 'before', dateTime: '1970-01-01T00:00:00Z' } } })).toEqual(['dune1', 'dune2']);
    expect(await books({ condition: { releaseDate: { operator: 'after', dateTime: '1969-01-01T00:00:00Z' } } })).toEqual(['dune3', 'report']);
    expect(await books({ condition: { releaseDate: { operator: 'isNull' } } })).toEqual(['comic', 'loose', 'far']);
    expect(await books({ condition: { releaseDate: { operator: 'isInTheLast', duration: `PT${24 * 365 * 10}H` } } })).toEqual(['report']);
    expect(await books({ condition: { numberSort: { operator: 'greaterThan', value: 1.5 } } })).toEqual(['dune2', 'dune3']);
    expect(await books({ condition: { readStatus: is('READ') } })).toEqual(['dune1']);
    expect(await books({ condition: { readStatus: is('IN_PROGRESS') } })).toEqual(['comic']);
    expect(await books({ condition: { readStatus: { operator: 'isNot', value: 'UNREAD' } } })).toEqual(['dune1', 'comic']);
    expect(await books({ condition: { author: is({ name: 'frank herbert' }) } })).toEqual(['dune1', 'dune2', 'dune3']);
    expect(await books({ condition: { author: is({ name: 'Frank Herbert', role: 'penciller' }) } })).toEqual([]);
    expect(await books({ condition: { oneShot: { operator: 'isTrue' } } })).toEqual(['comic', 'far']);
    expect(await books({ condition: { deleted: { operator: 'isTrue' } } })).toEqual([]);
    expect(await books({ condition: { mediaStatus: is('READY') } })).toHaveLength(7);
    expect(await books({ condition: { readListId: { operator: 'isNot', value: '1' } } })).toHaveLength(7);
    expect(await books({ condition: { allOf: [] } })).toHaveLength(7);
    expect(await books({ fullTextSearch: 'messiah' })).toEqual(['dune2']);
    expect(await books({ condition: { readStatus: { operator: 'isNot', value: 'UNREAD' } } }, 'readProgress.readDate,desc')).toEqual(['comic', 'dune1']);
  });
});

describe('series by condition', () => {
  it('meets a book condition when one of its books does', async () => {
    expect(await series({})).toEqual(['Comics', 'Dune', 'Far', 'Unknown Series']);
    expect(await series({ condition: { tag: is('desert') } })).toEqual(['Dune']);
    expect(await series({ condition: { tag: { operator: 'isNot', value: 'desert' } } })).toEqual(['Comics', 'Far', 'Unknown Series']);
    expect(await series({ condition: { genre: { operator: 'isNull' } } })).toEqual(['Comics', 'Far', 'Unknown Series']);
    expect(await series({ condition: { publisher: is('chilton') } })).toEqual(['Dune']);
    expect(await series({ condition: { language: is('FR') } })).toEqual(['Comics']);
    expect(await series({ condition: { ageRating: { operator: 'greaterThan', value: 10 } } })).toEqual(['Dune']);
    expect(await series({ condition: { ageRating: { operator: 'isNull' } } })).toEqual(['Comics', 'Far', 'Unknown Series']);
    // A series is released when its first book is: Dune in 1965.
    expect(await series({ condition: { releaseDate: { operator: 'after', dateTime: '1966-01-01T00:00:00Z' } } })).toEqual(['Unknown Series']);
    expect(await series({ condition: { releaseDate: { operator: 'before', dateTime: '1966-01-01T00:00:00Z' } } })).toEqual(['Dune']);
    expect(await series({ condition: { readStatus: is('IN_PROGRESS') } })).toEqual(['Comics', 'Dune']);
    expect(await series({ condition: { readStatus: is('UNREAD') } })).toEqual(['Far', 'Unknown Series']);
    expect(await series({ condition: { oneShot: { operator: 'isTrue' } } })).toEqual(['Comics', 'Far']);
    expect(await series({ condition: { allOf: [{ libraryId: is(String(libraryId)) }, { anyOf: [{ title: { operator: 'contains', value: 'un' } }, { titleSort: is('comics') }] }] } })).toEqual([
      'Comics',
      'Dune',
      'Unknown Series',
    ]);
    expect(await series({ condition: { sharingLabel: { operator: 'isNotNull' } } })).toEqual([]);
    expect(await series({ condition: { seriesStatus: is('ONGOING') } })).toHaveLength(4);
    expect(await series({ condition: { complete: { operator: 'isFalse' } } })).toEqual([]);
    expect(await series({ condition: { author: is({ name: 'Someone' }) } })).toEqual(['Far']);
    expect(await series({ fullTextSearch: 'DU' })).toEqual(['Dune']);
  });
});

describe('recent lists and referentials', () => {
  it('puts on deck the next unread book of a begun series with nothing in progress', async () => {
    const deck = (await onDeckPage(reader(), {})) as { content: { id: string }[]; totalElements: number };
    expect(deck.content.map((b) => Number(b.id))).toEqual([book.dune2]);
    expect(deck.totalElements).toBe(1);
  });

  it('lists the values clients filter by', async () => {
    expect(await namesOf(reader(), 'languages', {})).toEqual(['en', 'fr']);
    expect(await namesOf(reader(), 'ageRatings', {})).toEqual(['12', 'None']);
    expect(await namesOf(reader(), 'releaseYears', {})).toEqual(['1965', '1969', '1976', '2024']);
    expect(await namesOf(reader(), 'tags', { series_id: `${libraryId}-dune` })).toEqual(['Desert']);
    expect(await namesOf(reader(), 'tags', { series_id: `${libraryId}-comics` })).toEqual([]);
    expect(await namesOf(reader(), 'genres', { library_id: String(otherLibrary) })).toEqual([]);
  });
});
