// SQL shared by the Komga queries: the books a reader may list, the series a book belongs to (as SQL over `book` and its
// metadata `m`), the order of books in a series, and running compiled statements with remembered results.
import type { RawBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { SqlDialect } from '../store/dialect.ts';
import { countedLessHidden, countVisible, visibleBookFilter } from '../auth/visibility.ts';
import { sameGeneration, SharedLoads, type Generation } from '../store/snapshot.ts';
import { sourceForSql } from '../store/reading-state.ts';
import { firstColumn, type SqlValue } from '../store/sql-exec.ts';
import type { Store } from '../store/store.ts';
import { booksWithMetadata } from '../books/books-with-metadata.ts';

export const UNKNOWN_SERIES = 'Unknown Series';

type Cond = RawBuilder<SqlBool>;

/**
 * Books a statement may read (skipped and returned) for content restrictions to be tested book by book: a restriction
 * collected as a set costs ~0.15 ms to collect at 100,000 books, tested per book ~0.2 µs more per book.
 */
export const PER_ROW_ROWS = 1000;

/** A book that has a series name (not blank). */
export const HAS_SERIES = sql<SqlBool>`(m.series_name is not null and trim(m.series_name) <> '')`;

/** A file name without its extension (`x.cbz` → `x`), as `name.replace(/\.[^.]+$/, '')`. */
const stem = (d: SqlDialect, name: string): string =>
  `CASE WHEN ${d.position(name, "'.'")} > 0 AND substr(${name}, length(${name})) <> '.' THEN substr(${name}, 1, length(rtrim(${name}, replace(${name}, '.', ''))) - 1) ELSE ${name} END`;

/** The book's display name: its title, else its oldest book file's name without extension, else `Book <id>`. */
const bookNameText = (d: SqlDialect): string =>
  `(CASE WHEN trim(coalesce(m.title, '')) <> '' THEN m.title ELSE coalesce((SELECT ${stem(d, 'f.file_name')} FROM book_file f WHERE f.book_id = book.id AND f.is_book = 1 ORDER BY f.id LIMIT 1), 'Book ' || book.id) END)`;

export function bookNameSql(d: SqlDialect): RawBuilder<string> {
  return sql.raw<string>(bookNameText(d));
}

/** The name of the series the book belongs to under the `komga_group_unknown` setting. */
export function seriesNameSql(d: SqlDialect, groupUnknown: boolean): RawBuilder<string> {
  return groupUnknown ? sql<string>`(CASE WHEN ${HAS_SERIES} THEN m.series_name ELSE ${sql.lit(UNKNOWN_SERIES)} END)` : sql<string>`(CASE WHEN ${HAS_SERIES} THEN m.series_name ELSE ${bookNameSql(d)} END)`;
}

/** A dialect's spelling (`d.nocase`, `d.position`) filled with SQL fragments or parameters instead of SQL text. */
export function spelled<T>(form: (...holes: string[]) => string, values: readonly unknown[]): RawBuilder<T> {
  const holes = values.map((_, i) => `\uE000${i}\uE001`);
  const parts = form(...holes).split(/\uE000(\d+)\uE001/);
  // Text at even indexes, hole numbers at odd ones.
  return sql<T>`${sql.join(
    parts.map((part, i) => (i % 2 === 0 ? sql.raw(part) : sql`${values[Number(part)]}`)),
    sql``,
  )}`;
}

/**
 * A value (a parameter or an SQL expression) as the dialect compares and sorts it regardless of ASCII letter case:
 * `${nocaseSql(d, sql.ref('x'))} = ${nocaseSql(d, name)}`.
 */
export function nocaseSql(d: SqlDialect, value: unknown): RawBuilder<string> {
  return spelled(d.nocase, [value]);
}

/** Where `needle` starts in `haystack` (1-based, 0 when absent); either may be a parameter or an SQL expression. */
export function positionSql(d: SqlDialect, haystack: unknown, needle: unknown): RawBuilder<number> {
  return spelled(d.position, [haystack, needle]);
}

/**
 * Whether the text starts with the shape given, `d` standing for a digit and any other character for itself
 * (`dddd-dd-dd`), on both engines (SQLite's GLOB is its own).
 */
export function startsWithShape(column: string, shape: string): string {
  return [...shape].map((c, i) => `substr(${column}, ${i + 1}, 1) ${c === 'd' ? "BETWEEN '0' AND '9'" : `= '${c}'`}`).join(' AND ');
}

/** Books within a series: by number (books without one last), then name, then id. */
export function seriesOrderSql(d: SqlDialect): RawBuilder<unknown> {
  return sql`(CASE WHEN m.series_number IS NULL THEN 1 ELSE 0 END), m.series_number, ${sql.raw(d.nocase(bookNameText(d)))}, book.id`;
}

/**
 * The books a reader may list: visible to the owner, not deleted, not physical (a paper book has no file to read).
 * The owner's libraries are tested per row (`+library_id`) rather than through the library index, which SQLite would
 * otherwise prefer to the index a Komga query is driven by (series name, id order) and then read every book of the
 * library. `perRow` tests content restrictions per row, for queries that read a few books (a series through its
 * name index). `metadata: false` leaves out the metadata join (SQLite keeps an unused LEFT JOIN, which costs a count
 * its index-only plan); conditions on `m` must not be added then.
 */
export function listedBooks(store: Store, principal: Principal, options: { perRow?: boolean; metadata?: boolean } = {}) {
  return booksWithMetadata(store.db, options.metadata !== false).where(visibleBookFilter(principal, { libraryIndex: false, perRow: options.perRow })).where(sql<SqlBool>`book.deleted = 0 and book.is_physical = 0`);
}

/**
 * count(*) of the books a listing (`narrow` of listedBooks) gives the principal, for statements over many books. When
 * every restriction excludes names, the count for the principal's libraries without restrictions less the count of
 * those books the names hide: neither tests a book against the restrictions (at 100,000 books ~25 → ~10 ms).
 */
export function countListed(store: Store, principal: Principal, metadata: boolean, narrow: (listed: ListedBooks) => ListedBooks): Compiled {
  return countVisible(store.db, principal, (who) => narrow(listedBooks(store, who, { metadata })));
}

/** The books each library gives the principal (`l`, `n`), counted as countListed counts. */
export function countListedByLibrary(store: Store, principal: Principal): Compiled {
  const byLibrary = (who: Principal) =>
    listedBooks(store, who, { metadata: false }).select([sql<number>`book.library_id`.as('l'), sql<number>`count(*)`.as('n')]).groupBy('book.library_id');
  const split = countedLessHidden(principal);
  if (!split) return byLibrary(principal).compile();
  return store.db
    .selectFrom(byLibrary(split.libraries).as('a'))
    .leftJoin(byLibrary(split.libraries).where(split.hidden).as('h'), 'h.l', 'a.l')
    .select([sql<number>`a.l`.as('l'), sql<number>`a.n - coalesce(h.n, 0)`.as('n')])
    .compile();
}

export type ListedBooks = ReturnType<typeof listedBooks>;

export function andAll(conditions: readonly Cond[]): Cond {
  return conditions.length === 0 ? sql<SqlBool>`1 = 1` : sql<SqlBool>`(${sql.join(conditions, sql` and `)})`;
}

export const NOTHING = sql<SqlBool>`1 = 0`;

export interface Compiled {
  sql: string;
  parameters: readonly unknown[];
}

/** The rows of a compiled query, on either engine. */
export async function all<T>(store: Store, compiled: Compiled): Promise<T[]> {
  return (await store.exec.all(compiled.sql, compiled.parameters as readonly SqlValue[])) as T[];
}

/**
 * The rows of a statement over the whole catalog, read beside the thread that answers requests (Store.readAside): it
 * sees the committed catalog, never a snapshot the caller has open, so its result is only for `remembered`, which
 * takes the generation before it reads.
 */
export async function allAside<T>(store: Store, compiled: Compiled): Promise<T[]> {
  return (await store.readAside(compiled.sql, compiled.parameters as readonly SqlValue[])) as T[];
}

/** The first column of the first row of a statement over the whole catalog (a count), read aside as `allAside` reads. */
export async function firstAside<T>(store: Store, compiled: Compiled): Promise<T | undefined> {
  return firstColumn<T>(await store.readAside(compiled.sql, compiled.parameters as readonly SqlValue[]))[0];
}

/** The first column of each row of a compiled query. */
export async function column<T>(store: Store, compiled: Compiled): Promise<T[]> {
  const rows = await store.exec.all(compiled.sql, compiled.parameters as readonly SqlValue[]);
  if (rows.length === 0) return [];
  const [name] = Object.keys(rows[0] as object);
  return rows.map((row) => row[name as string] as T);
}

interface Remembered {
  value: unknown;
  generation: Generation;
  expires: number;
  computedAt: number;
  /** May be served for `lag.ms` after the catalog changed (`lag.when` said so of the value). */
  lags: boolean;
}

const rememberedByStore = new WeakMap<Store, Map<string, Remembered>>();
/** Loads under way, so that requests arriving while one runs wait for it rather than run it again. */
const loadsByStore = new WeakMap<Store, SharedLoads<string, unknown>>();
const REMEMBER_MS = 60_000;
const MAX_REMEMBERED = 200;
/** A result that may outlive changes of the catalog for `ms` after it was computed, when `when` says so of it. */
export interface Lag<T> {
  ms: number;
  when: (value: T) => boolean;
}

/**
 * A result over the whole catalog (a total, the series of a reader, facet counts), kept until the catalog changes (or
 * a minute at most). Paging through a list asks for the same total again and again; with content restrictions counting
 * is most of a page's cost. With `lag`, a result that `lag.when` finds costly to work out again (decided on the value,
 * e.g. how many books it counts, never on how long it took, so that a busy machine behaves as a quiet one) outlives
 * changes for `lag.ms` after it was computed: figures that only guide (facet counts) are then worked out at most once
 * per `lag.ms` however often the catalog is written, while small ones stay exact. The generation is read before the queries run, so a change made
 * meanwhile shows as a change next time; what is read while this process has a write open is not kept. `keepMs`
 * bounds how long a result is kept on an unchanged catalog: results that cannot depend on the time of day may pass
 * Infinity.
 */
export async function remembered<T>(store: Store, compiled: Compiled, compute: () => Promise<T>, lag?: Lag<T>, keepMs = REMEMBER_MS): Promise<T> {
  // `compiled` must name every table `compute` reads: a result that reads reading state is kept under its generation too.
  let cache = rememberedByStore.get(store);
  if (!cache) rememberedByStore.set(store, (cache = new Map()));
  const key = `${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`;
  const generation = sourceForSql(store, compiled.sql).generation();
  const now = Date.now();
  const hit = cache.get(key);
  if (hit && hit.expires > now && (sameGeneration(hit.generation, generation) || (hit.lags && lag !== undefined && now - hit.computedAt < lag.ms))) return hit.value as T;
  let loads = loadsByStore.get(store);
  if (!loads) loadsByStore.set(store, (loads = new SharedLoads()));
  const value = (await loads.share(key, generation, compute)) as T;
  cache.delete(key);
  if (store.writeInFlight()) return value;
  if (cache.size >= MAX_REMEMBERED) cache.delete(cache.keys().next().value as string);
  cache.set(key, { value, generation, expires: now + keepMs, computedAt: now, lags: lag?.when(value) ?? false });
  return value;
}

/** SQLite's NOCASE: ASCII letters folded, everything else compared as is. */
export function nocase(text: string): string {
  // eslint-disable-next-line no-control-regex
  return /^[\u0000-\u007f]*$/.test(text) ? text.toLowerCase() : text.replace(/[A-Z]+/g, (c) => c.toLowerCase());
}

/** The names in NOCASE order (ties keep their order), each folded once rather than at every comparison. */
export function sortedNocase(names: Iterable<string>): string[] {
  const keyed = Array.from(names, (name) => ({ name, folded: nocase(name) }));
  keyed.sort((a, b) => (a.folded < b.folded ? -1 : a.folded > b.folded ? 1 : 0));
  return keyed.map((k) => k.name);
}

/** Orders strings as `ORDER BY x COLLATE NOCASE` does (binary after folding ASCII letters). */
export function compareNocase(a: string, b: string): number {
  const x = nocase(a);
  const y = nocase(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
