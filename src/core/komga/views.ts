// The Komga API's JSON answers, each for one reader: pages of books and series with Komga's filters, one series or
// book, collections and the series in them, the values Mihon offers as filters, and the Mihon tracker's read
// progress of a series. The routes (src/daemon/routes/komga.ts) sign in and pick the view.
import type { RawBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Store } from '../store/store.ts';
import { bookOrder, loadBookRows, pageOfBooks, type KomgaBookRow } from './catalog.ts';
import { collectionRow, findCollection, visibleCollections, type Collection } from './collections.ts';
import { bookDto, collectionDto, pageEnvelope, pageOf, pageRequest, seriesDto, sliceOf, type Json, type Links } from './dto.ts';
import { boolParam, bookConditions, libraryIds, listParam, readStatuses, seriesBookConditions, seriesCanMatch, textParam, type Query } from './filters.ts';
import { bookProgress, type KomgaReadState } from './read-progress.ts';
import { libraryDates, refOf, seriesBookIds, seriesIndex, seriesKeysWhere, seriesOfBooks, seriesReadCounts, summarizeMany, type SeriesHead, type SeriesRef } from './series.ts';
import { column, compareNocase, listedBooks, NOTHING, remembered } from './sql.ts';
import { searchKey, searchKeyOf } from '../text/search-key.ts';

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
    rows.map((r) => ({ id: r.id, libraryId: r.libraryId, seriesName: r.seriesName, name: bookNameOf(r) })),
    reader.groupUnknown,
  );
  const progress = bookProgress(store, principal.userId, rows.map((r) => r.id));
  return rows.map((row) => bookDto(row, series.get(row.id) ?? { id: `${row.libraryId}-`, title: '', oneshot: true }, reader.links, progress.get(row.id)));
}

function bookNameOf(row: KomgaBookRow): string {
  if (row.title && row.title.trim() !== '') return row.title;
  if (row.fileName) return row.fileName.replace(/\.[^.]+$/, '');
  return `Book ${row.id}`;
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

/** Series a reader can open that have a visible book in the collection. */
function inCollections(reader: KomgaReader, collections: (Collection | undefined)[]): Set<string> {
  const keys = new Set<string>();
  for (const c of collections) if (c) for (const key of seriesKeysWhere(reader.store, reader.principal, reader.groupUnknown, c.books as RawBuilder<SqlBool>).keys()) keys.add(key);
  return keys;
}

/** The read state of a whole series: read when every book is, unread when none is read or begun. */
function seriesState(count: number, counts: { read: number; inProgress: number } | undefined): KomgaReadState {
  if (!counts || counts.read + counts.inProgress === 0) return 'UNREAD';
  return counts.read >= count ? 'READ' : 'IN_PROGRESS';
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
  const request = pageRequest(query);
  const { store, principal, groupUnknown } = reader;
  if (!seriesCanMatch(query)) return pageEnvelope([], 0, request);
  let heads = seriesIndex(store, principal, groupUnknown).heads;
  const libraries = libraryIds(query);
  if (libraries !== undefined) heads = heads.filter((h) => libraries.includes(h.libraryId));
  const search = searchKeyOf(textParam(query, 'search'));
  if (search !== null) heads = heads.filter((h) => searchKey(h.name).includes(search));
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
  const { sort, desc } = seriesSortOf(query.sort);
  if (sort !== 'name' || desc) {
    const dates = sort === 'created' || sort === 'modified' ? headDates(reader, heads) : undefined;
    const value = (h: SeriesHead): string | number => (sort === 'count' ? h.count : sort === 'name' ? '' : (dates?.get(h.key)?.[sort] ?? ''));
    heads = [...heads].sort((a, b) => {
      const x = value(a);
      const y = value(b);
      const byValue = x < y ? -1 : x > y ? 1 : 0;
      const byName = compareNocase(a.name, b.name) || a.libraryId - b.libraryId;
      return sort === 'name' ? (desc ? -byName : byName) : (desc ? -byValue : byValue) || byName;
    });
  }
  const slice = sliceOf(request);
  const shown = slice === 'all' ? heads : heads.slice(slice.offset, slice.offset + slice.limit);
  return pageEnvelope(seriesDtos(reader, shown.map(refOf)), heads.length, request, query.sort !== undefined);
}

/** `/api/v1/series/{id}/books`: the series' books in order, with the book filters Komga takes here. */
export function seriesBooksPage(reader: KomgaReader, ref: SeriesRef, query: Query): JsonObject {
  const request = pageRequest(query);
  const { ids, total } = seriesBookIds(reader.store, reader.principal, ref, bookConditions(query, reader.principal.userId), sliceOf(request));
  return pageEnvelope(bookDtos(reader, loadBookRows(reader.store, ids)), total, request);
}

/** `/api/v1/collections`: every collection the reader may open, by name; `search` filters names, `library_id` the series. */
export function collectionsPage(reader: KomgaReader, query: Query): JsonObject {
  const search = searchKeyOf(textParam(query, 'search'));
  const libraries = libraryIds(query);
  const rows = visibleCollections(reader.store, reader.principal)
    .filter((c) => search === null || searchKey(c.name).includes(search))
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

type NameKind = 'genres' | 'tags' | 'publishers';

/**
 * Genres, tags or publishers of the books a reader can see (optionally in some libraries or one collection), by name,
 * as Mihon loads them for its filters. Remembered until the catalog changes.
 */
export function namesOf(reader: KomgaReader, kind: NameKind, query: Query): string[] {
  const { store, principal } = reader;
  const libraries = libraryIds(query);
  const collectionId = textParam(query, 'collection_id');
  const collection = collectionId === undefined ? undefined : findCollection(store, principal, collectionId);
  let books = listedBooks(store, principal);
  if (libraries !== undefined) books = books.where(libraries.length === 0 ? NOTHING : sql<SqlBool>`+book.library_id IN (${sql.join(libraries)})`);
  if (collectionId !== undefined) books = books.where((collection?.books as RawBuilder<SqlBool> | undefined) ?? NOTHING);
  const compiled =
    kind === 'publishers'
      ? books.where(sql<SqlBool>`trim(coalesce(m.publisher, '')) <> ''`).select(sql<string>`m.publisher`.as('name')).distinct().compile()
      : store.db
          .selectFrom(sql.table(kind === 'genres' ? 'category' : 'tag').as('t'))
          .select(sql<string>`t.name`.as('name'))
          .where(
            sql<SqlBool>`exists (SELECT 1 FROM ${sql.table(kind === 'genres' ? 'book_metadata_category_mapping' : 'book_metadata_tag_mapping')} x WHERE ${sql.ref(kind === 'genres' ? 'x.category_id' : 'x.tag_id')} = t.id AND x.book_id IN ${books.select('book.id')})`,
          )
          .compile();
  return remembered(store, compiled, () => [...new Set(column<string>(store, compiled))].sort(compareNocase));
}

/** `/api/v1/authors` (Komga's older form): every author of a visible book, as writers, by name; `search` filters. */
export function authorsOf(reader: KomgaReader, query: Query): JsonObject[] {
  const { store, principal } = reader;
  const search = searchKeyOf(textParam(query, 'search'));
  const libraries = libraryIds(query);
  let books = listedBooks(store, principal);
  if (libraries !== undefined) books = books.where(libraries.length === 0 ? NOTHING : sql<SqlBool>`+book.library_id IN (${sql.join(libraries)})`);
  const compiled = store.db
    .selectFrom('author as a')
    .select('a.name')
    .where(sql<SqlBool>`exists (SELECT 1 FROM book_metadata_author_mapping x WHERE x.author_id = a.id AND x.book_id IN ${books.select('book.id')})`)
    .orderBy(sql`a.name COLLATE NOCASE`)
    .compile();
  const names = remembered(store, compiled, () => column<string>(store, compiled));
  return names.filter((n) => search === null || searchKey(n).includes(search)).map((name) => ({ name, role: 'writer' }));
}
