// What the OPDS feeds list, as SQL: a page of the visible books for a filter and an order (LIMIT/OFFSET over the visible
// ids, never a list built in memory), and the navigation lists (libraries, shelves, magic shelves, authors, series)
// counted by what the reader may see.
import type { Expression, SqlBool } from 'kysely';
import { sql } from 'kysely';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import type { Store } from '../store/store.ts';
import { searchKey } from '../text/search-key.ts';

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
const RATING = `((${RATING_PARTS.map((c) => `coalesce(${POSITIVE(c)}, 0)`).join(' + ')}) / nullif(${RATING_PARTS.map((c) => `coalesce(m.${c} > 0, 0)`).join(' + ')}, 0))`;
const NO_SERIES = `(m.series_name IS NULL OR m.series_name = '')`;

/**
 * ORDER BY for each order. Ties fall back to the newest first, as Grimmory's orders are stable over its
 * newest-first pages; books without an author, series or rating are placed as Grimmory places them.
 */
const ORDER_BY: Record<BookOrder, string> = {
  RECENT: NEWEST,
  TITLE_ASC: `coalesce(m.title, '') COLLATE NOCASE ASC, ${NEWEST}`,
  TITLE_DESC: `coalesce(m.title, '') COLLATE NOCASE DESC, ${NEWEST}`,
  AUTHOR_ASC: `coalesce(${FIRST_AUTHOR}, '') COLLATE NOCASE ASC, ${NEWEST}`,
  AUTHOR_DESC: `coalesce(${FIRST_AUTHOR}, '') COLLATE NOCASE DESC, ${NEWEST}`,
  SERIES_ASC: `${NO_SERIES} ASC, m.series_name COLLATE NOCASE ASC, coalesce(m.series_number, 3.4e38) ASC, ${NEWEST}`,
  SERIES_DESC: `${NO_SERIES} ASC, m.series_name COLLATE NOCASE DESC, coalesce(m.series_number, 3.4e38) DESC, ${NEWEST}`,
  RATING_ASC: `${RATING} IS NULL ASC, ${RATING} ASC, ${NEWEST}`,
  RATING_DESC: `${RATING} IS NULL ASC, ${RATING} DESC, ${NEWEST}`,
  SERIES_NUMBER: `coalesce(m.series_number, 999999) ASC, ${NEWEST}`,
};

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
  const needsMetadata = options.withMetadata === true || filter.series !== undefined || filter.rules !== undefined;
  const from = store.db.selectFrom('book');
  // Both shapes are typed as the joined one: every condition on `m` below is only added when the join is there.
  let query = (needsMetadata ? from.leftJoin('book_metadata as m', 'm.book_id', 'book.id') : from) as ReturnType<typeof _joined>;
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
    query = query.where(sql<SqlBool>`book.id in (select x.book_id from book_metadata_author_mapping x join author a on a.id = x.author_id where a.name = ${filter.author} collate nocase)`);
  }
  if (filter.series !== undefined) query = query.where(sql<SqlBool>`m.series_name = ${filter.series} collate nocase`);
  if (filter.q !== undefined && filter.q.trim() !== '') {
    // search_text is stored as a search key: a plain substring test of the query's key, over the metadata table read
    // in one pass.
    query = query.where(sql<SqlBool>`book.id in (select s.book_id from book_metadata s where instr(s.search_text, ${searchKey(filter.q)}) > 0)`);
  }
  if (filter.format !== undefined) {
    // Per book through the file index: a page walks its order and stops when full (no index leads from a type).
    query = query.where(sql<SqlBool>`exists (select 1 from book_file f where f.book_id = book.id and f.is_book = 1 and f.book_type = ${filter.format})`);
  }
  if (filter.rules) query = query.where(filter.rules);
  if (filter.nothing) query = query.where(sql<SqlBool>`1 = 0`);
  return query;
}

/** The shape of `filteredBooks` (the builder with the metadata join), for typing only. */
function _joined(store: Store) {
  return store.db.selectFrom('book').leftJoin('book_metadata as m', 'm.book_id', 'book.id');
}

function run<T>(store: Store, compiled: { sql: string; parameters: readonly unknown[] }, pluck: boolean): T[] {
  const statement = store.sqlite.prepare(compiled.sql);
  return (pluck ? statement.pluck() : statement).all(...(compiled.parameters as unknown[])) as T[];
}

interface Remembered {
  value: unknown;
  version: string;
  expires: number;
  computedAt: number;
  /** Milliseconds the computation took. */
  cost: number;
}

const remembered = new WeakMap<Store['sqlite'], Map<string, Remembered>>();
const REMEMBER_MS = 60_000;
const MAX_REMEMBERED = 200;
/** A result that took at least this long may be served for a while after the catalog changed (see `lagMs`). */
const COSTLY_MS = 15;

/**
 * Something in the catalog changed since: a commit by another connection (data_version) or by this one
 * (total_changes). Cheap to read, so remembered results are checked on every use.
 */
function catalogVersion(store: Store): string {
  const other = store.sqlite.pragma('data_version', { simple: true }) as number;
  const own = store.sqlite.prepare('SELECT total_changes()').pluck().get() as number;
  return `${other}:${own}`;
}

/**
 * The result of a query that counts over the whole catalog, kept until the catalog changes (or a minute at most). A
 * reader paging through a feed asks the same totals again and again, and with content restrictions they are the
 * costly part of a page. With `lagMs`, a costly result (COSTLY_MS or more) outlives changes for that long after it
 * was computed: figures that only guide (facet counts) are then worked out at most once per `lagMs` however often the
 * catalog is written, while cheap ones stay exact.
 */
function remember<T>(store: Store, compiled: { sql: string; parameters: readonly unknown[] }, compute: () => T, lagMs = 0): T {
  let cache = remembered.get(store.sqlite);
  if (!cache) remembered.set(store.sqlite, (cache = new Map()));
  const key = `${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`;
  const version = catalogVersion(store);
  const now = Date.now();
  const hit = cache.get(key);
  if (hit && hit.expires > now && (hit.version === version || (hit.cost >= COSTLY_MS && now - hit.computedAt < lagMs))) return hit.value as T;
  const started = performance.now();
  const value = compute();
  cache.delete(key);
  if (cache.size >= MAX_REMEMBERED) cache.delete(cache.keys().next().value as string);
  cache.set(key, { value, version, expires: now + REMEMBER_MS, computedAt: now, cost: performance.now() - started });
  return value;
}

function countMatching(store: Store, compiled: { sql: string; parameters: readonly unknown[] }): number {
  return remember(store, compiled, () => Number(run<number>(store, compiled, true)[0] ?? 0));
}

/** How many visible books match (remembered until the catalog changes). */
export function countBooks(store: Store, principal: Principal, filter: BookFilter): number {
  return countMatching(store, filteredBooks(store, principal, filter).select(sql<number>`count(*)`.as('n')).compile());
}

/** One page (1-based) of the matching visible books in the given order, and how many match in all. */
export function pageOfBooks(store: Store, principal: Principal, filter: BookFilter, order: BookOrder, page: number, size: number): PageOfIds {
  const total = countBooks(store, principal, filter);
  // Newest first is read straight off its index, which also holds every column the visibility and library filters
  // test: a few milliseconds even deep into a large catalog, where sorting a large library costs tens. (A search is a
  // set built once before the walk.) Filters on the metadata (series, magic shelves) are left to the planner: they
  // may match few books.
  const walkNewest = order === 'RECENT' && filter.series === undefined && filter.rules === undefined;
  const ids = run<number>(
    store,
    filteredBooks(store, principal, filter, { withMetadata: ORDERS_WITH_METADATA.has(order), walkNewest })
      .select('book.id')
      .orderBy(sql.raw(ORDER_BY[order]))
      .limit(size)
      .offset((page - 1) * size)
      .compile(),
    true,
  );
  return { ids, total };
}

/**
 * `count` visible books at random. Large catalogs probe random ids instead of sorting every row by random().
 */
export function randomBooks(store: Store, principal: Principal, count: number): number[] {
  const base = filteredBooks(store, principal, {});
  const total = countMatching(store, base.select(sql<number>`count(*)`.as('n')).compile());
  if (!total) return [];
  if (total <= 2000) {
    return run<number>(store, base.select('book.id').orderBy(sql.raw('random()')).limit(count).compile(), true);
  }
  const bounds = store.sqlite.prepare('SELECT min(id) AS lo, max(id) AS hi FROM book').get() as { lo: number; hi: number };
  // One statement for every probe: the starting id is the parameter that holds the sentinel.
  const SENTINEL = -7_351_962;
  const compiled = base.select('book.id').where('book.id', '>=', SENTINEL).orderBy('book.id').limit(1).compile();
  const slot = compiled.parameters.indexOf(SENTINEL);
  const probe = store.sqlite.prepare(compiled.sql).pluck();
  const args = [...(compiled.parameters as unknown[])];
  const found = new Set<number>();
  for (let tries = 0; found.size < Math.min(count, total) && tries < count * 4; tries++) {
    args[slot] = bounds.lo + Math.floor(Math.random() * (bounds.hi - bounds.lo + 1));
    const id = probe.get(...args) as number | undefined;
    if (id !== undefined) found.add(id);
  }
  const ids = [...found];
  // Shuffle: the probes favour books after gaps in the ids.
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [ids[i], ids[j]] = [ids[j] as number, ids[i] as number];
  }
  return ids;
}

/** How long costly facet counts may lag behind catalog changes. */
const FACET_LAG_MS = 60_000;

/**
 * How many of the matching visible books have a book file of each type (`EPUB` → 12, …), for the format facets of
 * that feed: only types present in it are offered. Remembered with the totals (until the catalog changes).
 */
export function formatCounts(store: Store, principal: Principal, filter: BookFilter): Map<string, number> {
  const { format: _format, ...unformatted } = filter;
  const books = filteredBooks(store, principal, unformatted).select('book.id');
  const compiled = store.db
    .selectFrom('book_file as f')
    .select(['f.book_type as type', sql<number>`count(distinct f.book_id)`.as('n')])
    .where('f.is_book', '=', 1)
    .where('f.book_type', 'is not', null)
    .where('f.book_id', 'in', books)
    .groupBy('f.book_type')
    .orderBy('f.book_type')
    .compile();
  const rows = remember(store, compiled, () => run<{ type: string; n: number }>(store, compiled, false), FACET_LAG_MS);
  return new Map(rows.map((r) => [r.type, r.n]));
}

export interface Named {
  id: number;
  name: string;
  count: number;
}

/** Counts per key, remembered like totals. */
function countsBy(store: Store, compiled: { sql: string; parameters: readonly unknown[] }): Map<number, number> {
  return remember(store, compiled, () => new Map(run<{ k: number; n: number }>(store, compiled, false).map((r) => [r.k, r.n])));
}

function bookCounts(store: Store, principal: Principal, groupBy: 'book.library_id'): Map<number, number> {
  return countsBy(store, filteredBooks(store, principal, {}).select([sql<number>`${sql.raw(groupBy)}`.as('k'), sql<number>`count(*)`.as('n')]).groupBy(sql.raw(groupBy)).compile());
}

/** Libraries the reader may see (admins: all), by name regardless of case, with their visible book counts. */
export function visibleLibraries(store: Store, principal: Principal): Named[] {
  const rows = store.sqlite.prepare('SELECT id, name FROM library ORDER BY name COLLATE NOCASE, id').all() as { id: number; name: string }[];
  const counts = bookCounts(store, principal, 'book.library_id');
  return rows.filter((l) => isAdmin(principal) || principal.libraryIds.includes(l.id)).map((l) => ({ ...l, count: counts.get(l.id) ?? 0 }));
}

function shelfCounts(store: Store, principal: Principal, ids: number[]): Map<number, number> {
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

/** The reader's own shelves, then other users' public ones, with the visible books on each. */
export function readableShelves(store: Store, principal: Principal): Named[] {
  const rows = store.sqlite
    .prepare('SELECT id, name, user_id FROM shelf WHERE user_id = ? OR is_public = 1 ORDER BY (user_id != ?), name COLLATE NOCASE, id')
    .all(principal.userId, principal.userId) as { id: number; name: string }[];
  const counts = shelfCounts(store, principal, rows.map((r) => r.id));
  return rows.map((r) => ({ id: r.id, name: r.name, count: counts.get(r.id) ?? 0 }));
}

/** The reader's own magic shelves, then other users' public ones. */
export function readableMagicShelves(store: Store, principal: Principal): { id: number; name: string }[] {
  return store.sqlite
    .prepare('SELECT id, name FROM magic_shelf WHERE user_id = ? OR is_public = 1 ORDER BY (user_id != ?), name COLLATE NOCASE, id')
    .all(principal.userId, principal.userId) as { id: number; name: string }[];
}

/** Authors with at least one visible book, by name, a page at a time (the name index is walked in order). */
export function pageOfAuthors(store: Store, principal: Principal, page: number, size: number): { items: Named[]; total: number } {
  // Correlated through the author's mappings (an index probe each), not `book_id in (visible books)`, which SQLite
  // would re-scan for every author.
  const hasVisibleBook = (authorRef: string) =>
    sql<SqlBool>`exists ${filteredBooks(store, principal, {}).innerJoin('book_metadata_author_mapping as x', 'x.book_id', 'book.id').select(sql`1`.as('one')).where(sql<SqlBool>`x.author_id = ${sql.ref(authorRef)}`)}`;
  const total = countMatching(store, store.db.selectFrom('author').select(sql<number>`count(*)`.as('n')).where(hasVisibleBook('author.id')).compile());
  const rows = run<{ id: number; name: string }>(
    store,
    store.db.selectFrom('author').select(['author.id', 'author.name']).where(hasVisibleBook('author.id')).orderBy('author.name').orderBy('author.id').limit(size).offset((page - 1) * size).compile(),
    false,
  );
  const counts = new Map<number, number>();
  if (rows.length > 0) {
    const counted = run<{ k: number; n: number }>(
      store,
      filteredBooks(store, principal, {})
        .innerJoin('book_metadata_author_mapping as x', 'x.book_id', 'book.id')
        .select([sql<number>`x.author_id`.as('k'), sql<number>`count(*)`.as('n')])
        .where('x.author_id', 'in', rows.map((r) => r.id))
        .groupBy('x.author_id')
        .compile(),
      false,
    );
    for (const r of counted) counts.set(r.k, r.n);
  }
  return { items: rows.map((r) => ({ ...r, count: counts.get(r.id) ?? 0 })), total };
}

/**
 * Series names of the visible books (case-insensitively distinct), by name, a page at a time: read in the order of
 * the series index, joining each book of a series to test it is visible.
 */
export function pageOfSeries(store: Store, principal: Principal, page: number, size: number): { items: { name: string; count: number }[]; total: number } {
  const grouped = store.db
    .selectFrom('book_metadata as m')
    .innerJoin('book', 'book.id', 'm.book_id')
    // A range on the index (no NULL, no empty name), so the walk starts at the first series.
    .where(sql<SqlBool>`m.series_name collate nocase > ''`)
    .where(visibleBookFilter(principal))
    .where(LISTED)
    .select([sql<string>`min(m.series_name)`.as('name'), sql<number>`count(*)`.as('n')])
    .groupBy(sql`m.series_name collate nocase`);
  const total = countMatching(store, store.db.selectFrom(grouped.as('g')).select(sql<number>`count(*)`.as('n')).compile());
  const rows = run<{ name: string; n: number }>(store, grouped.orderBy(sql`m.series_name collate nocase`).limit(size).offset((page - 1) * size).compile(), false);
  return { items: rows.map((r) => ({ name: r.name, count: r.n })), total };
}
