// What the OPDS feeds list, as SQL: a page of the visible books for a filter and an order (LIMIT/OFFSET over the visible
// ids, never a list built in memory), and the navigation lists (libraries, shelves, magic shelves, authors, series)
// counted by what the reader may see.
import type { Expression, SqlBool } from 'kysely';
import { sql } from 'kysely';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import type { SqlDialect } from '../store/dialect.ts';
import { compiledOnce, type Compiled } from '../store/compiled-once.ts';
import { firstColumn, type SqlValue } from '../store/sql-exec.ts';
import { sourceForSql } from '../store/reading-state.ts';
import type { Store } from '../store/store.ts';
import { searchKey } from '../text/search-key.ts';
import { idList, IdListMemo, type IdList } from './id-lists.ts';
import { all, allAside, column, firstAside, nocaseSql, positionSql, remembered, spelled, type Lag } from '../komga/sql.ts';
import { booksWithMetadata } from '../books/books-with-metadata.ts';

export const OPDS_SORT_ORDERS = ['RECENT', 'TITLE_ASC', 'TITLE_DESC', 'AUTHOR_ASC', 'AUTHOR_DESC', 'SERIES_ASC', 'SERIES_DESC', 'RATING_ASC', 'RATING_DESC'] as const;
export type OpdsSortOrder = (typeof OPDS_SORT_ORDERS)[number];

/** The user's order, or the order of a series (by number) for a series feed. */
export type BookOrder = OpdsSortOrder | 'SERIES_NUMBER';

export interface BookFilter {
  /** Words searched in title, subtitle, authors, series and ISBNs. */
  q?: string;
  libraryId?: number;
  shelfIds?: number[];
  author?: string;
  series?: string;
  /** Books with a book file of this type (`EPUB`, `PDF`, `CBX`, …). */
  format?: string;
  /** A compiled magic shelf (see magic-shelf-rules.ts). */
  rules?: Expression<SqlBool>;
  /** Match no book at all (a magic shelf whose rules cannot be read). */
  nothing?: boolean;
}

export interface PageOfIds {
  ids: number[];
  total: number;
}

const NEWEST = 'book.added_on DESC, book.id DESC';
const FIRST_AUTHOR = `(SELECT a.name FROM book_metadata_author_mapping x JOIN author a ON a.id = x.author_id WHERE x.book_id = book.id ORDER BY x.sort_order, x.author_id LIMIT 1)`;
const POSITIVE = (column: string): string => `CASE WHEN m.${column} > 0 THEN m.${column} END`;
const RATING_PARTS = ['hardcover_rating', 'amazon_rating', 'goodreads_rating'];
/** Grimmory's OPDS rating: the mean of the positive Hardcover, Amazon and Goodreads ratings; none → unrated. */
const RATING = `((${RATING_PARTS.map((c) => `coalesce(${POSITIVE(c)}, 0)`).join(' + ')}) / nullif(${RATING_PARTS.map((c) => `(CASE WHEN m.${c} > 0 THEN 1 ELSE 0 END)`).join(' + ')}, 0))`;
const NO_SERIES = `(CASE WHEN m.series_name IS NULL OR m.series_name = '' THEN 1 ELSE 0 END)`;

/**
 * ORDER BY for each order. Ties fall back to the newest first, as Grimmory's orders are stable over its
 * newest-first pages; books without an author, series or rating are placed as Grimmory places them.
 */
function orderBy(d: SqlDialect, order: BookOrder): string {
  switch (order) {
    case 'RECENT':
      return NEWEST;
    case 'TITLE_ASC':
    case 'TITLE_DESC':
      return `${d.nocase(`coalesce(m.title, '')`)} ${order === 'TITLE_ASC' ? 'ASC' : 'DESC'}, ${NEWEST}`;
    case 'AUTHOR_ASC':
    case 'AUTHOR_DESC':
      return `${d.nocase(`coalesce(${FIRST_AUTHOR}, '')`)} ${order === 'AUTHOR_ASC' ? 'ASC' : 'DESC'}, ${NEWEST}`;
    case 'SERIES_ASC':
      return `${NO_SERIES} ASC, ${d.nocase('m.series_name')} ASC, coalesce(m.series_number, 3.4e38) ASC, ${NEWEST}`;
    case 'SERIES_DESC':
      return `${NO_SERIES} ASC, ${d.nocase('m.series_name')} DESC, coalesce(m.series_number, 3.4e38) DESC, ${NEWEST}`;
    case 'RATING_ASC':
      return `(CASE WHEN ${RATING} IS NULL THEN 1 ELSE 0 END) ASC, ${RATING} ASC, ${NEWEST}`;
    case 'RATING_DESC':
      return `(CASE WHEN ${RATING} IS NULL THEN 1 ELSE 0 END) ASC, ${RATING} DESC, ${NEWEST}`;
    case 'SERIES_NUMBER':
      return `coalesce(m.series_number, 999999) ASC, ${NEWEST}`;
  }
}

/**
 * Not deleted, not physical. Written as literals rather than parameters: SQLite plans with the values it can see,
 * and with `?` it may walk the wrong index.
 */
const LISTED = sql<SqlBool>`book.deleted = 0 and book.is_physical = 0`;

/** Orders that read the book's metadata (every order but the newest first). */
const ORDERS_WITH_METADATA = new Set<BookOrder>(OPDS_SORT_ORDERS.filter((o) => o !== 'RECENT'));
ORDERS_WITH_METADATA.add('SERIES_NUMBER');

/**
 * The visible books that match: not deleted, not physical (a paper book has nothing to download), and the filter.
 * The metadata join is made only when a condition or the order reads it: SQLite keeps an unused LEFT JOIN in a
 * count(*), which then cannot be answered from the book index alone.
 */
function filteredBooks(store: Store, principal: Principal, filter: BookFilter, options: { withMetadata?: boolean; walkNewest?: boolean } = {}) {
  const d = store.dialect;
  const needsMetadata = options.withMetadata === true || filter.series !== undefined || filter.rules !== undefined;
  // Every condition on `m` below is only added when the join is there.
  let query = booksWithMetadata(store.db, needsMetadata);
  // Walking the newest-first index: library conditions are written so SQLite cannot answer them from the library
  // index (`+column`), which it would otherwise prefer, then sort every book of the library.
  const walk = options.walkNewest === true;
  query = query.where(visibleBookFilter(principal, { libraryIndex: !walk })).where(LISTED);
  if (filter.libraryId !== undefined) query = query.where(walk ? sql<SqlBool>`+book.library_id = ${filter.libraryId}` : sql<SqlBool>`book.library_id = ${filter.libraryId}`);
  if (filter.shelfIds && filter.shelfIds.length > 0) {
    const shelves = filter.shelfIds;
    query = query.where(sql<SqlBool>`book.id in (select s.book_id from book_shelf_mapping s where s.shelf_id in (${sql.join(shelves)}))`);
  }
  if (filter.author !== undefined) {
    query = query.where(
      sql<SqlBool>`book.id in (select x.book_id from book_metadata_author_mapping x join author a on a.id = x.author_id where ${nocaseSql(d, sql.ref('a.name'))} = ${nocaseSql(d, filter.author)})`,
    );
  }
  if (filter.series !== undefined) query = query.where(sql<SqlBool>`${nocaseSql(d, sql.ref('m.series_name'))} = ${nocaseSql(d, filter.series)}`);
  if (filter.q !== undefined && filter.q.trim() !== '') {
    // search_text is stored as a search key: a plain substring test of the query's key, over the metadata table read
    // in one pass.
    query = query.where(sql<SqlBool>`book.id in (select s.book_id from book_metadata s where ${positionSql(d, sql.ref('s.search_text'), searchKey(filter.q))} > 0)`);
  }
  if (filter.format !== undefined) {
    // Per book through the file index: a page walks its order and stops when full (no index leads from a type).
    query = query.where(sql<SqlBool>`exists (select 1 from book_file f where f.book_id = book.id and f.is_book = 1 and f.book_type = ${filter.format})`);
  }
  if (filter.rules) query = query.where(filter.rules);
  if (filter.nothing) query = query.where(sql<SqlBool>`1 = 0`);
  return query;
}

/**
 * A statement about the principal's books matching `filter`, compiled once per principal (see compiled-once.ts):
 * building and compiling it costs more than answering it from what is remembered. Magic shelf rules are compiled
 * afresh (they may depend on the time of day).
 */
function compiledForFilter(store: Store, principal: Principal, filter: BookFilter, purpose: string, compile: () => Compiled): Compiled {
  if (filter.rules) return compile();
  return compiledOnce(principal, `opds ${store.engine} ${purpose} ${JSON.stringify(filter)}`, [], compile);
}

/**
 * How long a list, total or count of `filter` is kept on an unchanged catalog: until it changes, unless a magic shelf's
 * rules may depend on the time of day (books added in the last week).
 */
const keptFor = (filter: BookFilter): number => (filter.rules ? LIST_MAX_AGE_MS : Infinity);

async function countMatching(store: Store, compiled: Compiled, filter: BookFilter = {}): Promise<number> {
  return remembered(store, compiled, async () => Number((await firstAside<number>(store, compiled)) ?? 0), undefined, keptFor(filter));
}

/** How many visible books match (remembered until the catalog changes). */
export function countBooks(store: Store, principal: Principal, filter: BookFilter): Promise<number> {
  return countMatching(
    store,
    compiledForFilter(store, principal, filter, 'count', () => filteredBooks(store, principal, filter).select(sql<number>`count(*)`.as('n')).compile()),
    filter,
  );
}

/** Ids of every book's kept list, at most: 4 bytes each (a list of 100,000 books is 400 KB). */
const LIST_BUDGET = 2_000_000;
/** No list of a magic shelf is older than this (its rules may depend on the time of day); see `keptFor`. */
const LIST_MAX_AGE_MS = 60_000;
const lists = new WeakMap<Store, IdListMemo>();

/**
 * Every matching visible book in the given order, kept until the catalog changes. One statement answers the whole
 * list as one JSON array (100,000 ids in one text, not 100,000 rows): it costs about what counting them does, and every
 * page after it is a slice. Sorting a page at a time costs a sort of the whole feed for each page (tens of ms for most
 * orders at 100,000 books). Requests asking for a list while it loads share that load.
 */
async function orderedBookIds(store: Store, principal: Principal, filter: BookFilter, order: BookOrder): Promise<IdList> {
  // Newest first is read straight off its index, which also holds every column the visibility and library filters
  // test: no sort at all. (A search is a set built once before the walk.) Filters on the metadata (series, magic
  // shelves) are left to the planner: they may match few books.
  const compiled = compiledForFilter(store, principal, filter, `ids ${order}`, () => {
    const walkNewest = order === 'RECENT' && filter.series === undefined && filter.rules === undefined;
    const ordered = filteredBooks(store, principal, filter, { withMetadata: ORDERS_WITH_METADATA.has(order), walkNewest })
      .select('book.id as v')
      .orderBy(sql.raw(orderBy(store.dialect, order)))
      .compile();
    return { sql: store.dialect.orderedJsonArray(ordered.sql), parameters: ordered.parameters };
  });
  let memo = lists.get(store);
  if (!memo) lists.set(store, (memo = new IdListMemo(LIST_BUDGET)));
  return memo.get(
    // A magic shelf's rules may test read status: its list is then kept under the reading state's generation too.
    sourceForSql(store, compiled.sql),
    `${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`,
    async () => {
      // A sort over the whole feed (tens of ms at 100,000 books): read aside, other requests are answered meanwhile.
      const [text] = firstColumn<string>(await store.readAside(compiled.sql, compiled.parameters as SqlValue[]));
      return idList(JSON.parse(text ?? '[]') as number[]);
    },
    keptFor(filter),
  );
}

/** One page (1-based) of the matching visible books in the given order, and how many match in all. */
export async function pageOfBooks(store: Store, principal: Principal, filter: BookFilter, order: BookOrder, page: number, size: number): Promise<PageOfIds> {
  const ids = await orderedBookIds(store, principal, filter, order);
  const start = Math.max(0, (page - 1) * size);
  return { ids: Array.from(ids.subarray(start, start + size)), total: ids.length };
}

/**
 * `count` visible books at random. Large catalogs probe random ids instead of sorting every row by random(): each
 * probe is the first visible book at or after a random id, all probes in one statement.
 */
export async function randomBooks(store: Store, principal: Principal, count: number): Promise<number[]> {
  const base = filteredBooks(store, principal, {});
  const total = await countMatching(store, base.select(sql<number>`count(*)`.as('n')).compile());
  if (!total) return [];
  if (total <= 2000) {
    return column<number>(store, base.select('book.id').orderBy(sql.raw('random()')).limit(count).compile());
  }
  const [bounds] = await all<{ lo: number; hi: number }>(store, { sql: 'SELECT min(id) AS lo, max(id) AS hi FROM book', parameters: [] });
  if (!bounds) return [];
  const starts = Array.from({ length: count * 4 }, () => bounds.lo + Math.floor(Math.random() * (bounds.hi - bounds.lo + 1)));
  const probe = base.select('book.id').where(sql<SqlBool>`book.id >= r.value`).orderBy('book.id').limit(1);
  const starting = spelled((parameter) => store.dialect.jsonValues('integer', parameter), [JSON.stringify(starts)]);
  const probed = await column<number | null>(store, sql`SELECT ${probe} AS id FROM (${starting}) AS r`.compile(store.db));
  const found = new Set<number>();
  for (const id of probed) if (id !== null && found.size < count) found.add(id);
  const ids = [...found];
  // Shuffle: the probes favour books after gaps in the ids.
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [ids[i], ids[j]] = [ids[j] as number, ids[i] as number];
  }
  return ids;
}

/**
 * Format counts over this many books may lag behind catalog changes for a minute: counting them again costs ~100 ms of
 * CPU per 10,000 books, and they only guide the reader's choice of facet.
 */
const FACET_LAG: Lag<{ n: number }[]> = { ms: 60_000, when: (rows) => rows.reduce((sum, r) => sum + Number(r.n), 0) >= 10_000 };

/**
 * How many of the matching visible books have a book file of each type (`EPUB` → 12, …), for the format facets of
 * that feed: only types present in it are offered. Remembered with the totals (until the catalog changes).
 */
export async function formatCounts(store: Store, principal: Principal, filter: BookFilter): Promise<Map<string, number>> {
  const { format: _format, ...unformatted } = filter;
  const compiled = compiledForFilter(store, principal, unformatted, 'formats', () =>
    store.db
      .selectFrom('book_file as f')
      .select(['f.book_type as type', sql<number>`count(distinct f.book_id)`.as('n')])
      .where('f.is_book', '=', 1)
      .where('f.book_type', 'is not', null)
      .where('f.book_id', 'in', filteredBooks(store, principal, unformatted).select('book.id'))
      .groupBy('f.book_type')
      .orderBy('f.book_type')
      .compile(),
  );
  const rows = await remembered(store, compiled, () => allAside<{ type: string; n: number }>(store, compiled), FACET_LAG, keptFor(unformatted));
  return new Map(rows.map((r) => [r.type, r.n]));
}

export interface Named {
  id: number;
  name: string;
  count: number;
}

/** Counts per key (of every visible book: nothing that depends on the time of day), remembered like totals. */
function countsBy(store: Store, compiled: Compiled): Promise<Map<number, number>> {
  return remembered(store, compiled, async () => new Map((await allAside<{ k: number; n: number }>(store, compiled)).map((r) => [r.k, r.n])), undefined, Infinity);
}

function bookCounts(store: Store, principal: Principal, groupBy: 'book.library_id'): Promise<Map<number, number>> {
  return countsBy(store, filteredBooks(store, principal, {}).select([sql<number>`${sql.raw(groupBy)}`.as('k'), sql<number>`count(*)`.as('n')]).groupBy(sql.raw(groupBy)).compile());
}

/** Libraries the reader may see (admins: all), by name regardless of case, with their visible book counts. */
export async function visibleLibraries(store: Store, principal: Principal): Promise<Named[]> {
  const rows = (await store.exec.all(`SELECT id, name FROM library ORDER BY ${store.dialect.nocase('name')}, id`)) as { id: number; name: string }[];
  const counts = await bookCounts(store, principal, 'book.library_id');
  return rows.filter((l) => isAdmin(principal) || principal.libraryIds.includes(l.id)).map((l) => ({ ...l, count: counts.get(l.id) ?? 0 }));
}

async function shelfCounts(store: Store, principal: Principal, ids: number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  return countsBy(
    store,
    filteredBooks(store, principal, {})
      .innerJoin('book_shelf_mapping as sm', 'sm.book_id', 'book.id')
      .select([sql<number>`sm.shelf_id`.as('k'), sql<number>`count(*)`.as('n')])
      .where('sm.shelf_id', 'in', ids)
      .groupBy('sm.shelf_id')
      .compile(),
  );
}

/** Shelves (plain or magic) the reader may open: their own first, then other users' public ones, each by name. */
async function readable(store: Store, table: 'shelf' | 'magic_shelf', userId: number): Promise<{ id: number; name: string }[]> {
  return (await store.exec.all(
    `SELECT id, name FROM ${table} WHERE user_id = ? OR is_public = 1 ORDER BY (CASE WHEN user_id = ? THEN 0 ELSE 1 END), ${store.dialect.nocase('name')}, id`,
    [userId, userId],
  )) as { id: number; name: string }[];
}

/** The reader's own shelves, then other users' public ones, with the visible books on each. */
export async function readableShelves(store: Store, principal: Principal): Promise<Named[]> {
  const rows = await readable(store, 'shelf', principal.userId);
  const counts = await shelfCounts(store, principal, rows.map((r) => r.id));
  return rows.map((r) => ({ id: r.id, name: r.name, count: counts.get(r.id) ?? 0 }));
}

/** The reader's own magic shelves, then other users' public ones. */
export function readableMagicShelves(store: Store, principal: Principal): Promise<{ id: number; name: string }[]> {
  return readable(store, 'magic_shelf', principal.userId);
}

/** Authors with at least one visible book, by name, a page at a time (the name index is walked in order). */
export async function pageOfAuthors(store: Store, principal: Principal, page: number, size: number): Promise<{ items: Named[]; total: number }> {
  // Correlated through the author's mappings (an index probe each), not `book_id in (visible books)`, which SQLite
  // would re-scan for every author.
  const hasVisibleBook = (authorRef: string) =>
    sql<SqlBool>`exists ${filteredBooks(store, principal, {}).innerJoin('book_metadata_author_mapping as x', 'x.book_id', 'book.id').select(sql`1`.as('one')).where(sql<SqlBool>`x.author_id = ${sql.ref(authorRef)}`)}`;
  const total = await countMatching(store, store.db.selectFrom('author').select(sql<number>`count(*)`.as('n')).where(hasVisibleBook('author.id')).compile());
  const rows = await all<{ id: number; name: string }>(
    store,
    store.db.selectFrom('author').select(['author.id', 'author.name']).where(hasVisibleBook('author.id')).orderBy('author.name').orderBy('author.id').limit(size).offset((page - 1) * size).compile(),
  );
  const counts = new Map<number, number>();
  if (rows.length > 0) {
    const counted = await all<{ k: number; n: number }>(
      store,
      filteredBooks(store, principal, {})
        .innerJoin('book_metadata_author_mapping as x', 'x.book_id', 'book.id')
        .select([sql<number>`x.author_id`.as('k'), sql<number>`count(*)`.as('n')])
        .where('x.author_id', 'in', rows.map((r) => r.id))
        .groupBy('x.author_id')
        .compile(),
    );
    for (const r of counted) counts.set(r.k, r.n);
  }
  return { items: rows.map((r) => ({ ...r, count: counts.get(r.id) ?? 0 })), total };
}

/**
 * Series names of the visible books (case-insensitively distinct), by name, a page at a time: read in the order of
 * the series index, joining each book of a series to test it is visible.
 */
export async function pageOfSeries(store: Store, principal: Principal, page: number, size: number): Promise<{ items: { name: string; count: number }[]; total: number }> {
  const seriesName = nocaseSql(store.dialect, sql.ref('m.series_name'));
  const grouped = store.db
    .selectFrom('book_metadata as m')
    .innerJoin('book', 'book.id', 'm.book_id')
    // A range on the index (no NULL, no empty name), so the walk starts at the first series.
    .where(sql<SqlBool>`${seriesName} > ''`)
    .where(visibleBookFilter(principal))
    .where(LISTED)
    .select([sql<string>`min(m.series_name)`.as('name'), sql<number>`count(*)`.as('n')])
    .groupBy(seriesName);
  const total = await countMatching(store, store.db.selectFrom(grouped.as('g')).select(sql<number>`count(*)`.as('n')).compile());
  const rows = await all<{ name: string; n: number }>(store, grouped.orderBy(seriesName).limit(size).offset((page - 1) * size).compile());
  return { items: rows.map((r) => ({ name: r.name, count: r.n })), total };
}
