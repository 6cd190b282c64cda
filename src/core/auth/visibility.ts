// Which books a user may see: admins every book; others the books of their assigned libraries that pass their
// content restrictions. Every route that returns, streams or changes a book goes through here.
import type { CompiledQuery, ExpressionBuilder, Expression, SelectQueryBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { DB } from '../store/db-types.ts';
import type { SqlExec, SqlValue } from '../store/sql-exec.ts';
import type { Db } from '../store/store.ts';
import { isAdmin, type ContentRestriction, type Principal } from './principal.ts';

type BookEb = ExpressionBuilder<DB, 'book'>;

const NAME_TABLES = {
  CATEGORY: ['book_metadata_category_mapping', 'category', 'category_id'],
  TAG: ['book_metadata_tag_mapping', 'tag', 'tag_id'],
  MOOD: ['book_metadata_mood_mapping', 'mood', 'mood_id'],
} as const;

/**
 * Books carrying one of the names. As a set (`book.id [not] in (…)`), SQLite collects the matching books once per
 * statement (through the name's mapping index) and then probes that set per row: a third of the time of a correlated
 * `exists` per row when a query reads many books (a count over 100,000 books: 287 → 97 ms). A query about one book
 * asks per row instead: collecting the set would cost more than the single probe.
 */
function hasName(type: keyof typeof NAME_TABLES, values: string[], exclude: boolean, perRow: boolean): Expression<SqlBool> {
  const [mapping, table, column] = NAME_TABLES[type];
  const lowered = values.map((v) => v.toLowerCase());
  if (perRow) {
    // The names' ids are collected once per statement; each book is then one probe of the mapping's primary key per
    // id, not a walk of all its names.
    const ids = sql`select n.id from ${sql.table(table)} n where lower(n.name) in (${sql.join(lowered)})`;
    const match = sql<SqlBool>`exists (select 1 from ${sql.table(mapping)} m where m.book_id = book.id and ${sql.ref(`m.${column}`)} in (${ids}))`;
    return exclude ? sql<SqlBool>`not ${match}` : match;
  }
  return sql<SqlBool>`book.id ${sql.raw(exclude ? 'not in' : 'in')} (${booksNamed(type, values)})`;
}

/** The ids of the books carrying one of the names: found through the names' index, then the mapping's. */
function booksNamed(type: keyof typeof NAME_TABLES, values: string[]): Expression<number> {
  const [mapping, table, column] = NAME_TABLES[type];
  const join = sql`${sql.table(mapping)} m join ${sql.table(table)} n on n.id = ${sql.ref(`m.${column}`)}`;
  return sql<number>`select m.book_id from ${join} where lower(n.name) in (${sql.join(values.map((v) => v.toLowerCase()))})`;
}

/** Grimmory only honours EXCLUDE for age ratings: an age rating in any other mode hides nothing. */
const hidesNothing = (type: ContentRestriction['type'], mode: ContentRestriction['mode']): boolean => type === 'AGE_RATING' && mode !== 'EXCLUDE';

function restrictionFilter(type: ContentRestriction['type'], mode: ContentRestriction['mode'], values: string[], perRow: boolean): Expression<SqlBool> {
  if (hidesNothing(type, mode)) return sql<SqlBool>`1 = 1`;
  if (type === 'CATEGORY' || type === 'TAG' || type === 'MOOD') return hasName(type, values, mode === 'EXCLUDE', perRow);
  // The ratings stay per row (a primary-key lookup): as a set they would read every book's metadata even for a page of 20.
  if (type === 'AGE_RATING') {
    // The lowest value is an age limit hiding books rated that or older; unrated books stay visible.
    const limit = Math.min(...values.map((v) => (/^-?\d+$/.test(v.trim()) ? Number(v) : Number.NaN)).filter(Number.isFinite));
    if (!Number.isFinite(limit)) return sql<SqlBool>`1 = 1`;
    const rating = sql<number | null>`(select age_rating from book_metadata where book_id = book.id)`;
    return sql<SqlBool>`coalesce(${rating} < ${limit}, true)`;
  }
  // CONTENT_RATING, compared case-insensitively; an unrated book passes EXCLUDE but fails ALLOW_ONLY.
  const rating = sql<string | null>`(select lower(content_rating) from book_metadata where book_id = book.id)`;
  const lowered = values.map((v) => v.toLowerCase());
  return mode === 'EXCLUDE'
    ? sql<SqlBool>`coalesce(${rating} not in (${sql.join(lowered)}), true)`
    : sql<SqlBool>`coalesce(${rating} in (${sql.join(lowered)}), false)`;
}

export interface VisibilityOptions {
  /**
   * Let SQLite look books up by library (the default). `false` keeps it from using book_library_idx, so that a query
   * ordered by another index walks that index and filters instead of sorting every visible book.
   */
  libraryIndex?: boolean;
  /** Test the content restrictions row by row: for statements about one or a few books (see hasName). */
  perRow?: boolean;
}

/** A where-clause for `selectFrom('book')` queries limiting rows to what the principal may see. */
export function visibleBookFilter(principal: Principal, options: VisibilityOptions = {}): (eb: BookEb) => Expression<SqlBool> {
  return (eb) => {
    if (isAdmin(principal)) return sql<SqlBool>`1 = 1`;
    const ids = principal.libraryIds;
    const inLibraries = options.libraryIndex === false ? sql<SqlBool>`+book.library_id in (${sql.join(ids)})` : eb('book.library_id', 'in', ids);
    const parts: Expression<SqlBool>[] = [ids.length > 0 ? inLibraries : sql<SqlBool>`1 = 0`];
    const groups = new Map<string, string[]>();
    for (const r of principal.restrictions) {
      const key = `${r.type}:${r.mode}`;
      groups.set(key, [...(groups.get(key) ?? []), r.value]);
    }
    for (const [key, values] of groups) {
      const [type, mode] = key.split(':') as [ContentRestriction['type'], ContentRestriction['mode']];
      parts.push(restrictionFilter(type, mode, values, options.perRow === true));
    }
    return eb.and(parts);
  };
}

/**
 * For books of the principal's libraries: a filter true for exactly those their content restrictions hide, when every
 * restriction that can hide a book excludes names (categories, tags, moods). The hidden books are then collected from
 * the names' mapping rows, without reading the others: a few hundred rows instead of every book. Undefined when some
 * restriction allows only some books or looks at a rating (each book must then be read), and for a principal who sees
 * every book of their libraries.
 */
export function hiddenByExcludedNames(principal: Principal): Expression<SqlBool> | undefined {
  if (isAdmin(principal)) return undefined;
  const excluded = new Map<keyof typeof NAME_TABLES, string[]>();
  for (const r of principal.restrictions) {
    if (hidesNothing(r.type, r.mode)) continue;
    if (r.mode !== 'EXCLUDE' || !(r.type in NAME_TABLES)) return undefined;
    const type = r.type as keyof typeof NAME_TABLES;
    excluded.set(type, [...(excluded.get(type) ?? []), r.value]);
  }
  if (excluded.size === 0) return undefined;
  return sql<SqlBool>`book.id in (${sql.join(
    [...excluded].map(([type, values]) => booksNamed(type, values)),
    sql` union `,
  )})`;
}

/**
 * For counts over many books: whom to count the books of (the principal's libraries, no restrictions), and the filter
 * of those the restrictions hide (hiddenByExcludedNames), when there is one. Counting both tests no book against the
 * restrictions; the difference is what the principal sees.
 */
export function countedLessHidden(principal: Principal): { libraries: Principal; hidden: Expression<SqlBool> } | undefined {
  const hidden = hiddenByExcludedNames(principal);
  return hidden && { libraries: { ...principal, restrictions: [] }, hidden };
}

/**
 * count(*) of a listing's books for the principal, as one statement; `listing(who)` gives the listing's books for
 * `who`. When every restriction excludes names, that is the count for the principal's libraries less the count of
 * those books the names hide: neither tests a book against the restrictions (see countedLessHidden).
 */
export function countVisible<D, T extends keyof D>(db: Db, principal: Principal, listing: (who: Principal) => SelectQueryBuilder<D, T, object>): CompiledQuery<unknown> {
  const counted = (books: SelectQueryBuilder<D, T, object>) => books.select(sql<number>`count(*)`.as('n'));
  const split = countedLessHidden(principal);
  if (!split) return counted(listing(principal)).compile();
  return db.selectNoFrom(sql<number>`${counted(listing(split.libraries))} - ${counted(listing(split.libraries).where(split.hidden))}`.as('n')).compile();
}

export type BookAccess = 'ok' | 'hidden' | 'missing';

/** Whether the principal may touch this book: 'missing' (no such book → 404) or 'hidden' (exists, not theirs → 403). */
export async function bookAccess(db: Db, principal: Principal, bookId: number): Promise<BookAccess> {
  const exists = await db.selectFrom('book').select('id').where('id', '=', bookId).executeTakeFirst();
  if (!exists) return 'missing';
  if (isAdmin(principal)) return 'ok';
  const visible = await db.selectFrom('book').select('id').where('id', '=', bookId).where(visibleBookFilter(principal, { perRow: true })).executeTakeFirst();
  return visible ? 'ok' : 'hidden';
}

interface AccessQuery {
  text: string;
  /** The filter's parameters; the book id follows them. */
  parameters: SqlValue[];
}

/** Per principal (cached principals are shared by many requests): its access query, compiled once. */
const accessQueries = new WeakMap<Principal, AccessQuery>();

function accessQuery(db: Db, principal: Principal): AccessQuery {
  const cached = accessQueries.get(principal);
  if (cached) return cached;
  const { sql: text, parameters } = db
    .selectFrom('book')
    .select((eb) => eb.case().when(visibleBookFilter(principal, { perRow: true })(eb)).then(1).else(0).end().as('visible'))
    .where('book.id', '=', 0)
    .compile();
  // The book id is the last parameter (the where clause follows the select list). Kysely numbers PostgreSQL's
  // placeholders itself, and exec passes text without `?` through unchanged.
  const query = { text, parameters: parameters.slice(0, -1) as SqlValue[] };
  accessQueries.set(principal, query);
  return query;
}

/**
 * bookAccess in one statement, compiled once per principal: for request paths. `scope` is the Store, or a read or
 * write scope when the check belongs with other reads.
 */
export async function bookAccessOf(scope: { db: Db; exec: SqlExec }, principal: Principal, bookId: number): Promise<BookAccess> {
  const { text, parameters } = accessQuery(scope.db, principal);
  const row = await scope.exec.get(text, [...parameters, bookId]);
  if (!row) return 'missing';
  return row.visible === 1 ? 'ok' : 'hidden';
}

/** Book ids among `ids` the principal may see. */
export async function visibleAmong(db: Db, principal: Principal, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const out = new Set<number>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db.selectFrom('book').select('id').where('id', 'in', ids.slice(i, i + 500)).where(visibleBookFilter(principal)).execute();
    for (const r of rows) out.add(r.id);
  }
  return out;
}

export function canSeeLibrary(principal: Principal, libraryId: number): boolean {
  return isAdmin(principal) || principal.libraryIds.includes(libraryId);
}
