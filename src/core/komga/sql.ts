// SQL shared by the Komga queries: the books a reader may list, the series a book belongs to (as SQL over `book` and its
// metadata `m`), the order of books in a series, and running compiled statements with remembered results.
import type { RawBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import { CatalogMemo, cachedStatement } from '../store/snapshot.ts';
import type { Store } from '../store/store.ts';

export const UNKNOWN_SERIES = 'Unknown Series';

type Cond = RawBuilder<SqlBool>;

/** A book that has a series name (not blank). */
export const HAS_SERIES = sql<SqlBool>`(m.series_name is not null and trim(m.series_name) <> '')`;

/** A file name without its extension (`x.cbz` → `x`), as `name.replace(/\.[^.]+$/, '')`. */
const stem = (name: string): string =>
  `CASE WHEN instr(${name}, '.') > 0 AND substr(${name}, -1) <> '.' THEN substr(${name}, 1, length(rtrim(${name}, replace(${name}, '.', ''))) - 1) ELSE ${name} END`;

/** The book's display name: its title, else its oldest book file's name without extension, else `Book <id>`. */
export const BOOK_NAME = sql<string>`(CASE WHEN trim(coalesce(m.title, '')) <> '' THEN m.title ELSE coalesce((SELECT ${sql.raw(stem('f.file_name'))} FROM book_file f WHERE f.book_id = book.id AND f.is_book = 1 ORDER BY f.id LIMIT 1), 'Book ' || book.id) END)`;

/** The name of the series the book belongs to under the `komga_group_unknown` setting. */
export function seriesNameSql(groupUnknown: boolean): RawBuilder<string> {
  return groupUnknown ? sql<string>`(CASE WHEN ${HAS_SERIES} THEN m.series_name ELSE ${UNKNOWN_SERIES} END)` : sql<string>`(CASE WHEN ${HAS_SERIES} THEN m.series_name ELSE ${BOOK_NAME} END)`;
}

/** Books within a series: by number (books without one last), then name, then id. */
export const SERIES_ORDER = sql`(m.series_number IS NULL), m.series_number, ${BOOK_NAME} COLLATE NOCASE, book.id`;

/**
 * The books a reader may list: visible to the owner, not deleted, not physical (a paper book has no file to read).
 * The owner's libraries are tested per row (`+library_id`) rather than through the library index, which SQLite would
 * otherwise prefer to the index a Komga query is driven by (series name, id order) and then read every book of the
 * library. `perRow` tests content restrictions per row, for queries that read a few books (a series through its
 * name index). `metadata: false` leaves out the metadata join (SQLite keeps an unused LEFT JOIN, which costs a count
 * its index-only plan); conditions on `m` must not be added then.
 */
export function listedBooks(store: Store, principal: Principal, options: { perRow?: boolean; metadata?: boolean } = {}) {
  const from = store.db.selectFrom('book');
  const joined = (options.metadata === false ? from : from.leftJoin('book_metadata as m', 'm.book_id', 'book.id')) as ReturnType<typeof _joinedShape>;
  return joined.where(visibleBookFilter(principal, { libraryIndex: false, perRow: options.perRow })).where(sql<SqlBool>`book.deleted = 0 and book.is_physical = 0`);
}

/** The shape of `listedBooks` (the builder with the metadata join), for typing only. */
function _joinedShape(store: Store) {
  return store.db.selectFrom('book').leftJoin('book_metadata as m', 'm.book_id', 'book.id');
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

export function all<T>(store: Store, compiled: Compiled): T[] {
  return cachedStatement(store.sqlite, compiled.sql).all(...(compiled.parameters as unknown[])) as T[];
}

export function column<T>(store: Store, compiled: Compiled): T[] {
  return cachedStatement(store.sqlite, compiled.sql).pluck().all(...(compiled.parameters as unknown[])) as T[];
}

const memos = new WeakMap<Store, CatalogMemo<string, unknown>>();

/**
 * A result over the whole catalog (a total, the series of a reader), kept until the catalog changes. Paging through a
 * list asks for the same total again and again; with content restrictions counting is most of a page's cost.
 */
export function remembered<T>(store: Store, compiled: Compiled, compute: () => T): T {
  let memo = memos.get(store);
  if (!memo) memos.set(store, (memo = new CatalogMemo(64)));
  const key = `${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`;
  return memo.get(store, key, compute) as T;
}

/** SQLite's NOCASE: ASCII letters folded, everything else compared as is. */
export function nocase(text: string): string {
  // eslint-disable-next-line no-control-regex
  return /^[\u0000-\u007f]*$/.test(text) ? text.toLowerCase() : text.replace(/[A-Z]+/g, (c) => c.toLowerCase());
}

/** Orders strings as `ORDER BY x COLLATE NOCASE` does (binary after folding ASCII letters). */
export function compareNocase(a: string, b: string): number {
  const x = nocase(a);
  const y = nocase(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
