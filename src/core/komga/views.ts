// The Komga API's JSON answers, each for one reader: pages of books and series with Komga's filters, one series or
// book, collections and the series in them, new and updated series, and the Mihon tracker’s read
// progress of a series. The routes (src/daemon/routes/komga.ts) sign in and pick the view.
import type { Principal } from '../auth/principal.ts';
import type { Store } from '../store/store.ts';
import { bookName, bookOrder, loadBookRows, pageOfBooks, type KomgaBookRow } from './catalog.ts';
import { collectionRows, findCollection, type Collection } from './collections.ts';
import { bookDto, collectionDto, JsonText, pageEnvelope, pageEnvelopeText, pageOf, pageRequest, seriesDto, seriesDtoLead, sliceOf, type Json, type Links, type PageRequest } from './dto.ts';
import { boolParam, bookConditions, libraryIds, listParam, readStatuses, seriesBookConditions, seriesCanMatch, textParam, type Query } from './filters.ts';
import { bookProgress, type KomgaReadState } from './read-progress.ts';
import { seriesOfBooks } from './book-series.ts';
import { libraryDates, refOf, seriesBookIds, seriesIndex, seriesKeysWhere, seriesReadCounts, type SeriesHead, type SeriesRef } from './series.ts';
import { keptDtoTail, summarizePage } from './series-figures.ts';
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
export async function bookDtos(reader: KomgaReader, rows: readonly KomgaBookRow[]): Promise<JsonObject[]> {
  const { store, principal } = reader;
  const series = await seriesOfBooks(
    store,
    principal,
    rows.map((r) => ({ id: r.id, libraryId: r.libraryId, seriesName: r.seriesName, name: bookName(r) })),
    reader.groupUnknown,
  );
  const progress = await bookProgress(store, principal.userId, rows.map((r) => r.id));
  return rows.map((row) => bookDto(row, series.get(row.id) ?? { id: `${row.libraryId}-`, title: '', oneshot: true }, reader.links, progress.get(row.id)));
}

/** `/api/v1/books`: Grimmory's listing by id, with Komga's filters and sorts; no `unpaged` (as Grimmory). */
export async function booksPage(reader: KomgaReader, query: Query): Promise<JsonObject> {
  const request = pageRequest(query, false);
  const order = bookOrder(reader.store.dialect, query.sort);
  const { ids, total } = await pageOfBooks(reader.store, reader.principal, bookConditions(reader.store.dialect, query, reader.principal.userId), order, sliceOf(request));
  return pageEnvelope(await bookDtos(reader, await loadBookRows(reader.store, ids)), total, request, order.sorted);
}

/**
 * The JSON of a SeriesDto per series, in the order given: from the text kept with the series' figures after the
 * reader's own part, or built from the summary and the first book.
 */
export async function seriesDtoTexts(reader: KomgaReader, refs: readonly SeriesRef[]): Promise<string[]> {
  const summaries = await summarizePage(reader.store, reader.principal, refs, reader.principal.userId);
  const firstIds = summaries.flatMap((s) => (s.firstBookId === undefined || keptDtoTail(s) !== undefined ? [] : [s.firstBookId]));
  const firsts = new Map(firstIds.length === 0 ? [] : (await loadBookRows(reader.store, firstIds, { files: false, authors: false })).map((r) => [r.id, r]));
  return summaries.map((s) => {
    const tail = keptDtoTail(s);
    if (tail !== undefined) return seriesDtoLead(s, reader.links) + tail;
    return JSON.stringify(seriesDto(s, s.firstBookId === undefined ? undefined : firsts.get(s.firstBookId), reader.links));
  });
}

/** One series' SeriesDto. */
export async function seriesDtoOf(reader: KomgaReader, ref: SeriesRef): Promise<JsonText> {
  return new JsonText((await seriesDtoTexts(reader, [ref]))[0] as string);
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
async function headDates(reader: KomgaReader, heads: readonly SeriesHead[]): Promise<Map<string, { created: string; modified: string }>> {
  const out = new Map<string, { created: string; modified: string }>();
  for (const head of heads) {
    const dates = head.kind === 'unknown' ? await libraryDates(reader.store, reader.principal, head.libraryId) : head;
    out.set(head.key, { created: dates.created ?? '', modified: dates.modified ?? '' });
  }
  return out;
}

/**
 * `/api/v1/series` (and a collection's series): the reader's series by name, with Komga's series filters. A series
 * meets a filter on genres, tags, publishers, languages, authors, age ratings or release years when one of its
 * visible books does.
 */
export async function seriesPage(reader: KomgaReader, query: Query, within?: Collection): Promise<JsonText> {
  return pageOfHeads(reader, await filteredHeads(reader, query, within), query.sort, pageRequest(query));
}

/** The reader's series meeting the query's series filters, by name. */
async function filteredHeads(reader: KomgaReader, query: Query, within?: Collection): Promise<SeriesHead[]> {
  const { store, principal, groupUnknown } = reader;
  if (!seriesCanMatch(query)) return [];
  let heads = (await seriesIndex(store, principal, groupUnknown)).heads;
  const libraries = libraryIds(query);
  if (libraries !== undefined) heads = heads.filter((h) => libraries.includes(h.libraryId));
  const search = textParam(query, 'search');
  if (search !== undefined) heads = heads.filter((h) => textMatches(h.name, 'contains', search));
  const oneshot = boolParam(query, 'oneshot');
  if (oneshot !== undefined) heads = heads.filter((h) => (h.count === 1) === oneshot);
  for (const condition of seriesBookConditions(query)) {
    const keys = await seriesKeysWhere(store, principal, groupUnknown, condition);
    heads = heads.filter((h) => keys.has(h.key));
  }
  const collectionIds = listParam(query, 'collection_id');
  if (collectionIds !== undefined && collectionIds.length > 0) {
    const found = [];
    for (const id of collectionIds) found.push(await findCollection(store, principal, id));
    const keys = await inCollections(reader, found);
    heads = heads.filter((h) => keys.has(h.key));
  }
  if (within) {
    const keys = await inCollections(reader, [within]);
    heads = heads.filter((h) => keys.has(h.key));
  }
  const states = readStatuses(query);
  if (states !== undefined) {
    const counts = await seriesReadCounts(store, principal, groupUnknown, principal.userId);
    heads = heads.filter((h) => states.includes(seriesState(h.count, counts.get(h.key))));
  }
  return heads;
}

/** `/api/v1/series/new`: the series, newest first (when their first book was added); `library_id`, `oneshot`, `deleted`. */
export async function newSeriesPage(reader: KomgaReader, query: Query): Promise<JsonText> {
  return pageOfHeads(reader, await filteredHeads(reader, query), 'created,desc', pageRequest(query));
}

/** `/api/v1/series/updated`: series that got books after their first, most recently changed first. */
export async function updatedSeriesPage(reader: KomgaReader, query: Query): Promise<JsonText> {
  const heads = await filteredHeads(reader, query);
  const dates = await headDates(reader, heads);
  const updated = heads.filter((h) => {
    const d = dates.get(h.key);
    return d !== undefined && d.created !== d.modified;
  });
  return pageOfHeads(reader, updated, 'lastModified,desc', pageRequest(query));
}

/** A page of series in the order `sort` asks for (by name when it names nothing known). */
export async function pageOfHeads(reader: KomgaReader, heads: readonly SeriesHead[], sortParam: unknown, request: PageRequest): Promise<JsonText> {
  const { sort, desc } = seriesSortOf(sortParam);
  let ordered = heads;
  if (sort !== 'name' || desc) {
    const dates = sort === 'created' || sort === 'modified' ? await headDates(reader, heads) : undefined;
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
  return pageEnvelopeText(await seriesDtoTexts(reader, shown.map((head) => refOf(reader.store.dialect, head))), ordered.length, request, sortParam !== undefined);
}

/** `/api/v1/series/{id}/books`: the series' books in order, with the book filters Komga takes here. */
export async function seriesBooksPage(reader: KomgaReader, ref: SeriesRef, query: Query): Promise<JsonObject> {
  const request = pageRequest(query);
  const { ids, total } = await seriesBookIds(reader.store, reader.principal, ref, bookConditions(reader.store.dialect, query, reader.principal.userId), sliceOf(request));
  return pageEnvelope(await bookDtos(reader, await loadBookRows(reader.store, ids)), total, request);
}

/** `/api/v1/collections`: every collection the reader may open, by name; `search` filters names, `library_id` the series. */
export async function collectionsPage(reader: KomgaReader, query: Query): Promise<JsonObject> {
  const search = textParam(query, 'search');
  const libraries = libraryIds(query);
  const rows = (await collectionRows(reader, (c) => search === undefined || textMatches(c.name, 'contains', search))).filter(
    (c) => libraries === undefined || c.seriesIds.some((id) => libraries.some((l) => id.startsWith(`${l}-`))),
  );
  return pageOf(rows.map(collectionDto), pageRequest(query));
}

/** The reader's visible series of these books' ids, as the tracker and series marks need them. */
export async function seriesBooks(reader: KomgaReader, ref: SeriesRef): Promise<{ id: number; numberSort: number; state: KomgaReadState }[]> {
  const { ids } = await seriesBookIds(reader.store, reader.principal, ref, [], 'all');
  const rows = await loadBookRows(reader.store, ids, { files: false, authors: false });
  const progress = await bookProgress(reader.store, reader.principal.userId, ids);
  return rows.map((r) => ({ id: r.id, numberSort: r.seriesNumber ?? 1, state: progress.get(r.id)?.state ?? 'UNREAD' }));
}

/**
 * Mihon's tracker view of a series (`TachiyomiReadProgressV2Dto`): the counts, the highest number, and the number of
 * the last book of the unbroken run of read books from the first.
 */
export async function tachiyomiProgress(reader: KomgaReader, ref: SeriesRef): Promise<JsonObject> {
  const books = (await seriesBooks(reader, ref)).sort((a, b) => a.numberSort - b.numberSort || a.id - b.id);
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
