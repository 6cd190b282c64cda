// The lists Komelia and other current Komga clients browse with: `POST /books/list` and `/series/list` (search bodies),
// the latest books, the books "on deck", the collections of a series and a book's neighbours in its series.
import type { SqlBool } from 'kysely';
import { sql } from 'kysely';
import { bookSearchConditions } from './book-search.ts';
import { bookName, bookOrder, loadBookRows, pageOfBooks, type KomgaBookRow } from './catalog.ts';
import { collectionRow, visibleCollections } from './collections.ts';
import { collectionDto, pageEnvelope, pageRequest, sliceOf, type Json } from './dto.ts';
import { libraryIds, type Query } from './filters.ts';
import { readStateSql } from './read-progress.ts';
import { parseBookSearch, parseSeriesSearch } from './search-condition.ts';
import { searchSeries } from './series-search.ts';
import { findSeries, seriesBookIds, seriesOfBooks } from './series.ts';
import { andAll, column, HAS_SERIES, listedBooks, NOTHING, SERIES_ORDER } from './sql.ts';
import { bookDtos, pageOfHeads, type KomgaReader } from './views.ts';

type JsonObject = { [key: string]: Json };

/** `library_id` as a condition on books (absent: every library). */
function inLibraries(query: Query) {
  const libraries = libraryIds(query);
  if (libraries === undefined) return [];
  return [libraries.length === 0 ? NOTHING : sql<SqlBool>`+book.library_id IN (${sql.join(libraries)})`];
}

/** `POST /api/v1/books/list`: the books meeting the search body, in `sort` order (else by id); `unpaged` allowed. */
export function booksListPage(reader: KomgaReader, body: unknown, query: Query): JsonObject {
  const search = parseBookSearch(body);
  const request = pageRequest(query);
  const order = bookOrder(query.sort, reader.principal.userId);
  const { ids, total } = pageOfBooks(reader.store, reader.principal, bookSearchConditions(reader, search), order.sql, sliceOf(request));
  return pageEnvelope(bookDtos(reader, loadBookRows(reader.store, ids)), total, request, order.sorted);
}

/** `POST /api/v1/series/list`: the series meeting the search body, by name or in `sort` order. */
export function seriesListPage(reader: KomgaReader, body: unknown, query: Query): JsonObject {
  return pageOfHeads(reader, searchSeries(reader, parseSeriesSearch(body)), query.sort, pageRequest(query));
}

/** `GET /api/v1/books/latest`: the books most recently added first. */
export function latestBooksPage(reader: KomgaReader, query: Query): JsonObject {
  const request = pageRequest(query);
  const { ids, total } = pageOfBooks(reader.store, reader.principal, inLibraries(query), sql`book.added_on DESC, book.id DESC`, sliceOf(request));
  return pageEnvelope(bookDtos(reader, loadBookRows(reader.store, ids)), total, request, true);
}

/**
 * `GET /api/v1/books/ondeck`: for each named series the reader has begun (a book read, none in progress), its first
 * unread book; the series read most recently first. Two grouped statements over the reader's progress rows and the
 * books of those series.
 */
export function onDeckPage(reader: KomgaReader, query: Query): JsonObject {
  const { store, principal } = reader;
  const userId = principal.userId;
  const request = pageRequest(query, false);
  const state = readStateSql('p');
  const begun = listedBooks(store, principal)
    .innerJoin('user_book_progress as p', (join) => join.onRef('p.book_id', '=', 'book.id').on('p.user_id', '=', userId))
    .where(HAS_SERIES)
    .where(andAll(inLibraries(query)))
    .select([sql<number>`book.library_id`.as('l'), sql<string>`m.series_name`.as('name'), sql<string>`max(p.last_read_time)`.as('last')])
    .groupBy([sql`book.library_id`, sql`m.series_name COLLATE NOCASE`])
    .having(sql<SqlBool>`sum(${state} = 'READ') > 0 AND sum(${state} = 'IN_PROGRESS') = 0`);
  const firsts = listedBooks(store, principal)
    .innerJoin(begun.as('s'), (join) => join.on(sql<SqlBool>`s.l = book.library_id AND m.series_name = s.name COLLATE NOCASE`))
    .leftJoin('user_book_progress as p', (join) => join.onRef('p.book_id', '=', 'book.id').on('p.user_id', '=', userId))
    .where(sql<SqlBool>`${state} = 'UNREAD'`)
    .select([sql<number>`book.id`.as('id'), sql<string>`s.last`.as('last'), sql<number>`row_number() OVER (PARTITION BY s.l, s.name COLLATE NOCASE ORDER BY ${SERIES_ORDER})`.as('rn')]);
  const slice = sliceOf(request);
  const paging = slice === 'all' ? sql`` : sql` LIMIT ${slice.limit} OFFSET ${slice.offset}`;
  const ids = column<number>(store, sql`SELECT c.id FROM ${firsts} AS c WHERE c.rn = 1 ORDER BY c.last DESC, c.id${paging}`.compile(store.db));
  const total = column<number>(store, sql<number>`SELECT count(*) FROM ${firsts} AS c WHERE c.rn = 1`.compile(store.db))[0] ?? 0;
  return pageEnvelope(bookDtos(reader, loadBookRows(store, ids)), total, request, true);
}

/** `GET /api/v1/series/{id}/collections`: the collections the reader may open that hold the series. */
export function collectionsOfSeries(reader: KomgaReader, seriesId: string): JsonObject[] {
  return visibleCollections(reader.store, reader.principal)
    .map((c) => collectionRow(reader.store, reader.principal, c, reader.groupUnknown))
    .filter((c) => c.seriesIds.includes(seriesId))
    .map(collectionDto);
}

/** The book before or after this one in its series (undefined at either end). */
export function siblingBook(reader: KomgaReader, row: KomgaBookRow, direction: 'previous' | 'next'): KomgaBookRow | undefined {
  const { store, principal, groupUnknown } = reader;
  const series = seriesOfBooks(store, principal, [{ id: row.id, libraryId: row.libraryId, seriesName: row.seriesName, name: bookName(row) }], groupUnknown).get(row.id);
  const ref = series === undefined ? undefined : findSeries(store, principal, series.id, groupUnknown);
  if (!ref) return undefined;
  const { ids } = seriesBookIds(store, principal, ref, [], 'all');
  const at = ids.indexOf(row.id);
  const other = at < 0 ? undefined : ids[direction === 'next' ? at + 1 : at - 1];
  return other === undefined ? undefined : loadBookRows(store, [other])[0];
}
