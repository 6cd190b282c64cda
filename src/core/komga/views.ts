// The Komga API's JSON answers, each for one reader: pages of books and series with Komga's filters, one series or
// book, collections and the series in them, new and updated series, and the Mihon tracker’s read
// progress of a series. The routes (src/daemon/routes/komga.ts) sign in and pick the view.
import type { Principal } from '../auth/principal.ts';
import type { Store } from '../store/store.ts';
import { bookName, bookOrder, loadBookRows, pageOfBooks, type KomgaBookRow } from './catalog.ts';
import { collectionRow, findCollection, visibleCollections, type Collection } from './collections.ts';
import { bookDto, collectionDto, pageEnvelope, pageOf, pageRequest, seriesDto, sliceOf, type Json, type Links, type PageRequest } from './dto.ts';
import { boolParam, bookConditions, libraryIds, listParam, readStatuses, seriesBookConditions, seriesCanMatch, textParam, type Query } from './filters.ts';
import { bookProgress, type KomgaReadState } from './read-progress.ts';
import { libraryDates, refOf, seriesBookIds, seriesIndex, seriesKeysWhere, seriesOfBooks, seriesReadCounts, summarizeMany, type SeriesHead, type SeriesRef } from './series.ts';
import { inCollections, seriesState } from './series-search.ts';
import { compareNocase } from './sql.ts';
import { textMatches } from './text-match.ts';

type JsonObject = { [key: string]: Json };

/** Who is asking: the OPDS account's owner, and how the catalog is shown to them. */
export interface KomgaReader {
  store: Store;
  principal: Principal;
  groupUnknown: boolean;
  links: Links;
}

/** BookDtos for rows already checked visible, in the order given. */
export function bookDtos(reader: KomgaReader, rows: readonly KomgaBookRow[]): JsonObject[] {
  const { store, principal } = reader;
  const series = seriesOfBooks(
    store,
    principal,
    rows.map((r) => ({ id: r.id, libraryId: r.libraryId, seriesName: r.seriesName, name: bookName(r) })),
    reader.groupUnknown,
  );
  const progress = bookProgress(store, principal.userId, rows.map((r) => r.id));
  return rows.map((row) => bookDto(row, series.get(row.id) ?? { id: `${row.libraryId}-`, title: '', oneshot: true }, reader.links, progress.get(row.id)));
}

/** `/api/v1/books`: Grimmory's listing by id, with Komga's filters and sorts; no `unpaged` (as Grimmory). */
export function booksPage(reader: KomgaReader, query: Query): JsonObject {
  const request = pageRequest(query, false);
  const order = bookOrder(query.sort);
  const { ids, total } = pageOfBooks(reader.store, reader.principal, bookConditions(query, reader.principal.userId), order.sql, sliceOf(request));
  return pageEnvelope(bookDtos(reader, loadBookRows(reader.store, ids)), total, request, order.sorted);
}

/** A SeriesDto per series, in the order given. */
export function seriesDtos(reader: KomgaReader, refs: readonly SeriesRef[]): JsonObject[] {
  const summaries = summarizeMany(reader.store, reader.principal, refs, reader.principal.userId);
  const firsts = new Map(loadBookRows(reader.store, summaries.flatMap((s) => (s.firstBookId === undefined ? [] : [s.firstBookId]))).map((r) => [r.id, r]));
  return summaries.map((s) => seriesDto(s, s.firstBookId === undefined ? undefined : firsts.get(s.firstBookId), reader.links));
}

type SeriesSort = 'name' | 'created' | 'modified' | 'count';

function seriesSortOf(sortParam: unknown): { sort: SeriesSort; desc: boolean } {
  const raw = (Array.isArray(sortParam) ? sortParam : sortParam === undefined ? [] : [sortParam]).map(String);
  for (const entry of raw) {
    const [field = '', dir = 'asc'] = entry.split(',').map((p) => p.trim());
    const desc = dir.toLowerCase() === 'desc';
    if (['metadata.titleSort', 'metadata.title', 'name', 'title'].includes(field)) return { sort: 'name', desc };
    if (field === 'createdDate' || field === 'created') return { sort: 'created', desc };
    if (['lastModifiedDate', 'lastModified', 'fileLastModified', 'booksMetadata.releaseDate'].includes(field)) return { sort: 'modified', desc };
    if (field === 'booksCount') return { sort: 'count', desc };
  }
  return { sort: 'name', desc: false };
}

/** When the series' books were first and last added, per head (the unknown series: its library's first and last). */
function headDates(reader: KomgaReader, heads: readonly SeriesHead[]): Map<string, { created: string; modified: string }> {
  const out = new Map<string, { created: string; modified: string }>();
  for (const head of heads) {
    const dates = head.kind === 'unknown' ? libraryDates(reader.store, reader.principal, head.libraryId) : head;
    out.set(head.key, { created: dates.created ?? '', modified: dates.modified ?? '' });
  }
  return out;
}

/**
 * `/api/v1/series` (and a collection's series): the reader's series by name, with Komga's series filters. A series
 * meets a filter on genres, tags, publishers, languages, authors, age ratings or release years when one of its
 * visible books does.
 */
export function seriesPage(reader: KomgaReader, query: Query, within?: Collection): JsonObject {
  return pageOfHeads(reader, filteredHeads(reader, query, within), query.sort, pageRequest(query));
}

/** The reader's series meeting the query's series filters, by name. */
function filteredHeads(reader: KomgaReader, query: Query, within?: Collection): SeriesHead[] {
  const { store, principal, groupUnknown } = reader;
  if (!seriesCanMatch(query)) return [];
  let heads = seriesIndex(store, principal, groupUnknown).heads;
  const libraries = libraryIds(query);
  if (libraries !== undefined) heads = heads.filter((h) => libraries.includes(h.libraryId));
  const search = textParam(query, 'search');
  if (search !== undefined) heads = heads.filter((h) => textMatches(h.name, 'contains', search));
  const oneshot = boolParam(query, 'oneshot');
  if (oneshot !== undefined) heads = heads.filter((h) => (h.count === 1) === oneshot);
  for (const condition of seriesBookConditions(query)) {
    const keys = seriesKeysWhere(store, principal, groupUnknown, condition);
    heads = heads.filter((h) => keys.has(h.key));
  }
  const collectionIds = listParam(query, 'collection_id');
  if (collectionIds !== undefined && collectionIds.length > 0) {
    const keys = inCollections(reader, collectionIds.map((id) => findCollection(store, principal, id)));
    heads = heads.filter((h) => keys.has(h.key));
  }
  if (within) {
    const keys = inCollections(reader, [within]);
    heads = heads.filter((h) => keys.has(h.key));
  }
  const states = readStatuses(query);
  if (states !== undefined) {
    const counts = seriesReadCounts(store, principal, groupUnknown, principal.userId);
    heads = heads.filter((h) => states.includes(seriesState(h.count, counts.get(h.key))));
  }
  return heads;
}

/** `/api/v1/series/new`: the series, newest first (when their first book was added); `library_id`, `oneshot`, `deleted`. */
export function newSeriesPage(reader: KomgaReader, query: Query): JsonObject {
  return pageOfHeads(reader, filteredHeads(reader, query), 'created,desc', pageRequest(query));
}

/** `/api/v1/series/updated`: series that got books after their first, most recently changed first. */
export function updatedSeriesPage(reader: KomgaReader, query: Query): JsonObject {
  const heads = filteredHeads(reader, query);
  const dates = headDates(reader, heads);
  const updated = heads.filter((h) => {
    const d = dates.get(h.key);
    return d !== undefined && d.created !== d.modified;
  });
  return pageOfHeads(reader, updated, 'lastModified,desc', pageRequest(query));
}

/** A page of series in the order `sort` asks for (by name when it names nothing known). */
export function pageOfHeads(reader: KomgaReader, heads: readonly SeriesHead[], sortParam: unknown, request: PageRequest): JsonObject {
  const { sort, desc } = seriesSortOf(sortParam);
  let ordered = heads;
  if (sort !== 'name' || desc) {
    const dates = sort === 'created' || sort === 'modified' ? headDates(reader, heads) : undefined;
    const value = (h: SeriesHead): string | number => (sort === 'count' ? h.count : sort === 'name' ? '' : (dates?.get(h.key)?.[sort] ?? ''));
    ordered = [...heads].sort((a, b) => {
      const x = value(a);
      const y = value(b);
      const byValue = x < y ? -1 : x > y ? 1 : 0;
      const byName = compareNocase(a.name, b.name) || a.libraryId - b.libraryId;
      return sort === 'name' ? (desc ? -byName : byName) : (desc ? -byValue : byValue) || byName;
    });
  }
  const slice = sliceOf(request);
  const shown = slice === 'all' ? ordered : ordered.slice(slice.offset, slice.offset + slice.limit);
  return pageEnvelope(seriesDtos(reader, shown.map(refOf)), ordered.length, request, sortParam !== undefined);
}

/** `/api/v1/series/{id}/books`: the series' books in order, with the book filters Komga takes here. */
export function seriesBooksPage(reader: KomgaReader, ref: SeriesRef, query: Query): JsonObject {
  const request = pageRequest(query);
  const { ids, total } = seriesBookIds(reader.store, reader.principal, ref, bookConditions(query, reader.principal.userId), sliceOf(request));
  return pageEnvelope(bookDtos(reader, loadBookRows(reader.store, ids)), total, request);
}

/** `/api/v1/collections`: every collection the reader may open, by name; `search` filters names, `library_id` the series. */
export function collectionsPage(reader: KomgaReader, query: Query): JsonObject {
  const search = textParam(query, 'search');
  const libraries = libraryIds(query);
  const rows = visibleCollections(reader.store, reader.principal)
    .filter((c) => search === undefined || textMatches(c.name, 'contains', search))
    .map((c) => collectionRow(reader.store, reader.principal, c, reader.groupUnknown))
    .filter((c) => libraries === undefined || c.seriesIds.some((id) => libraries.some((l) => id.startsWith(`${l}-`))));
  return pageOf(rows.map(collectionDto), pageRequest(query));
}

/** The reader's visible series of these books' ids, as the tracker and series marks need them. */
export function seriesBooks(reader: KomgaReader, ref: SeriesRef): { id: number; numberSort: number; state: KomgaReadState }[] {
  const { ids } = seriesBookIds(reader.store, reader.principal, ref, [], 'all');
  const rows = loadBookRows(reader.store, ids);
  const progress = bookProgress(reader.store, reader.principal.userId, ids);
  return rows.map((r) => ({ id: r.id, numberSort: r.seriesNumber ?? 1, state: progress.get(r.id)?.state ?? 'UNREAD' }));
}

/**
 * Mihon's tracker view of a series (`TachiyomiReadProgressV2Dto`): the counts, the highest number, and the number of
 * the last book of the unbroken run of read books from the first.
 */
export function tachiyomiProgress(reader: KomgaReader, ref: SeriesRef): JsonObject {
  const books = seriesBooks(reader, ref).sort((a, b) => a.numberSort - b.numberSort || a.id - b.id);
  let lastContinuous = 0;
  for (const b of books) {
    if (b.state !== 'READ') break;
    lastContinuous = b.numberSort;
  }
  const read = books.filter((b) => b.state === 'READ').length;
  const inProgress = books.filter((b) => b.state === 'IN_PROGRESS').length;
  return {
    booksCount: books.length,
    booksReadCount: read,
    booksUnreadCount: books.length - read - inProgress,
    booksInProgressCount: inProgress,
    lastReadContinuousNumberSort: lastContinuous,
    maxNumberSort: books.reduce((max, b) => Math.max(max, b.numberSort), 0),
  };
}
