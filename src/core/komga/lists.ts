// The lists Komelia and other current Komga clients browse with: `POST /books/list` and `/series/list` (search bodies),
// the latest books, the books "on deck", the collections of a series and a book's neighbours in its series.
import type { SqlBool } from 'kysely';
import { sql } from 'kysely';
import { bookSearchConditions } from './book-search.ts';
import { bookName, bookOrder, loadBookRows, pageOfBooks, type KomgaBookRow } from './catalog.ts';
import { collectionRows } from './collections.ts';
import { collectionDto, pageEnvelope, pageRequest, sliceOf, type Json, type JsonText } from './dto.ts';
import { libraryIds, type Query } from './filters.ts';
import { readStateSql } from './read-progress.ts';
import { parseBookSearch, parseSeriesSearch } from './search-condition.ts';
import { searchSeries } from './series-search.ts';
import { seriesOfBooks } from './book-series.ts';
import { findSeries, seriesBookIds } from './series.ts';
import { andAll, column, HAS_SERIES, listedBooks, nocaseSql, NOTHING, seriesOrderSql } from './sql.ts';
import { bookDtos, pageOfHeads, type KomgaReader } from './views.ts';

type JsonObject = { [key: string]: Json };

/** `library_id` as a condition on books (absent: every library). */
function inLibraries(query: Query) {
  const libraries = libraryIds(query);
  if (libraries === undefined) return [];
  return [libraries.length === 0 ? NOTHING : sql<SqlBool>`+book.library_id IN (${sql.join(libraries)})`];
}

/** `POST /api/v1/books/list`: the books meeting the search body, in `sort` order (else by id); `unpaged` allowed. */
export async function booksListPage(reader: KomgaReader, body: unknown, query: Query): Promise<JsonObject> {
  const search = parseBookSearch(body);
  const request = pageRequest(query);
  const order = bookOrder(reader.store.dialect, query.sort, reader.principal.userId);
  const { ids, total } = await pageOfBooks(reader.store, reader.principal, await bookSearchConditions(reader, search), order, sliceOf(request));
  return pageEnvelope(await bookDtos(reader, await loadBookRows(reader.store, ids)), total, request, order.sorted);
}

/** `POST /api/v1/series/list`: the series meeting the search body, by name or in `sort` order. */
export async function seriesListPage(reader: KomgaReader, body: unknown, query: Query): Promise<JsonText> {
  return pageOfHeads(reader, await searchSeries(reader, parseSeriesSearch(body)), query.sort, pageRequest(query));
}

/** `GET /api/v1/books/latest`: the books most recently added first. */
export async function latestBooksPage(reader: KomgaReader, query: Query): Promise<JsonObject> {
  const request = pageRequest(query);
  const { ids, total } = await pageOfBooks(reader.store, reader.principal, inLibraries(query), { sql: sql`book.added_on DESC, book.id DESC` }, sliceOf(request));
  return pageEnvelope(await bookDtos(reader, await loadBookRows(reader.store, ids)), total, request, true);
}

/**
 * `GET /api/v1/books/ondeck`: for each named series the reader has begun (a book read, none in progress), its first
 * unread book; the series read most recently first. Two grouped statements over the reader's progress rows and the
 * books of those series.
 */
export async function onDeckPage(reader: KomgaReader, query: Query): Promise<JsonObject> {
  const { store, principal } = reader;
  const d = store.dialect;
  const userId = principal.userId;
  const request = pageRequest(query, false);
  const state = readStateSql(d, 'p');
  const seriesName = nocaseSql(d, sql.ref('m.series_name'));
  const begun = listedBooks(store, principal)
    .innerJoin('user_book_progress as p', (join) => join.onRef('p.book_id', '=', 'book.id').on('p.user_id', '=', userId))
    .where(HAS_SERIES)
    .where(andAll(inLibraries(query)))
    // The group's folded name: any of its spellings would do, the join folds them all.
    .select([sql<number>`book.library_id`.as('l'), sql<string>`min(m.series_name)`.as('name'), sql<string>`max(p.last_read_time)`.as('last')])
    .groupBy([sql`book.library_id`, seriesName])
    .having(sql<SqlBool>`sum(CASE WHEN ${state} = 'READ' THEN 1 ELSE 0 END) > 0 AND sum(CASE WHEN ${state} = 'IN_PROGRESS' THEN 1 ELSE 0 END) = 0`);
  const firsts = listedBooks(store, principal)
    .innerJoin(begun.as('s'), (join) => join.on(sql<SqlBool>`s.l = book.library_id AND ${seriesName} = ${nocaseSql(d, sql.ref('s.name'))}`))
    .leftJoin('user_book_progress as p', (join) => join.onRef('p.book_id', '=', 'book.id').on('p.user_id', '=', userId))
    .where(sql<SqlBool>`${state} = 'UNREAD'`)
    .select([sql<number>`book.id`.as('id'), sql<string>`s.last`.as('last'), sql<number>`row_number() OVER (PARTITION BY s.l, ${nocaseSql(d, sql.ref('s.name'))} ORDER BY ${seriesOrderSql(d)})`.as('rn')]);
  const slice = sliceOf(request);
  const paging = slice === 'all' ? sql`` : sql` LIMIT ${slice.limit} OFFSET ${slice.offset}`;
  const ids = await column<number>(store, sql`SELECT c.id FROM ${firsts} AS c WHERE c.rn = 1 ORDER BY c.last DESC NULLS LAST, c.id${paging}`.compile(store.db));
  const total = (await column<number>(store, sql<number>`SELECT count(*) FROM ${firsts} AS c WHERE c.rn = 1`.compile(store.db)))[0] ?? 0;
  return pageEnvelope(await bookDtos(reader, await loadBookRows(store, ids)), total, request, true);
}

/** `GET /api/v1/series/{id}/collections`: the collections the reader may open that hold the series. */
export async function collectionsOfSeries(reader: KomgaReader, seriesId: string): Promise<JsonObject[]> {
  return (await collectionRows(reader)).filter((c) => c.seriesIds.includes(seriesId)).map(collectionDto);
}

/** The book before or after this one in its series (undefined at either end). */
export async function siblingBook(reader: KomgaReader, row: KomgaBookRow, direction: 'previous' | 'next'): Promise<KomgaBookRow | undefined> {
  const { store, principal, groupUnknown } = reader;
  const series = (await seriesOfBooks(store, principal, [{ id: row.id, libraryId: row.libraryId, seriesName: row.seriesName, name: bookName(row) }], groupUnknown)).get(row.id);
  const ref = series === undefined ? undefined : await findSeries(store, principal, series.id, groupUnknown);
  if (!ref) return undefined;
  const { ids } = await seriesBookIds(store, principal, ref, [], 'all');
  const at = ids.indexOf(row.id);
  const other = at < 0 ? undefined : ids[direction === 'next' ? at + 1 : at - 1];
  return other === undefined ? undefined : (await loadBookRows(store, [other]))[0];
}
