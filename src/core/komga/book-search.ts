// Komga's book search conditions compiled to one SQL condition over `book` and its metadata `m`: the whole tree
// becomes a WHERE clause, so a page of `POST /api/v1/books/list` is one ordered, limited statement and one count,
// whatever the tree holds. See search-condition.ts for the shapes.
import type { RawBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Store } from '../store/store.ts';
import { hasAuthor, hasTag, inReadStates, matchesSearch, metadataCondition } from './filters.ts';
import { READ_STATES } from './read-progress.ts';
import type { BookLeaf, Condition, DateOp, Equality, EqualityNullable, NumericNullable, Search } from './search-condition.ts';
import { findSeries } from './series.ts';
import type { SqlDialect } from '../store/dialect.ts';
import { andAll, bookNameSql, HAS_SERIES, nocaseSql, NOTHING, startsWithShape } from './sql.ts';
import { textCondition } from './text-match.ts';

type Cond = RawBuilder<SqlBool>;

export interface SearchScope {
  store: Store;
  principal: Principal;
  groupUnknown: boolean;
}

export const EVERYTHING = sql<SqlBool>`1 = 1`;

/** NOT that treats an unknown (NULL) as false first: a book without metadata is not in a series named X. */
export const not = (condition: Cond): Cond => sql<SqlBool>`NOT coalesce(${condition}, FALSE)`;

export function anyOf(conditions: readonly Cond[]): Cond {
  return conditions.length === 0 ? EVERYTHING : sql<SqlBool>`(${sql.join(conditions.map((c) => sql`coalesce(${c}, FALSE)`), sql` or `)})`;
}

/** `is` → the condition, `isNot` → its negation. */
const equal = (op: { operator: string }, condition: Cond): Cond => (op.operator === 'isNot' ? not(condition) : condition);

/** A constant answer for `is v` / `isNot v`, when Bindery knows whether v can hold. */
const constant = (op: Equality<unknown>, holds: boolean): Cond => ((op.operator === 'is') === holds ? EVERYTHING : NOTHING);

/** The book's release date as `yyyy-MM-dd` (a bare year counts as its first of January), NULL when it has none. */
export const RELEASE_DATE = sql<string>`(CASE WHEN ${sql.raw(startsWithShape('m.published_date', 'dddd-dd-dd'))} THEN substr(m.published_date, 1, 10) WHEN ${sql.raw(
  startsWithShape('m.published_date', 'dddd'),
)} THEN substr(m.published_date, 1, 4) || '-01-01' END)`;

/** The day `ms` milliseconds before now, as `yyyy-MM-dd`. */
export const daysAgo = (ms: number, now = Date.now()): string => new Date(now - ms).toISOString().slice(0, 10);

export function releaseCondition(op: DateOp): Cond {
  switch (op.operator) {
    case 'before':
      return metadataCondition(sql<SqlBool>`${RELEASE_DATE} < ${op.date}`);
    case 'after':
      return metadataCondition(sql<SqlBool>`${RELEASE_DATE} > ${op.date}`);
    case 'isInTheLast':
      return metadataCondition(sql<SqlBool>`${RELEASE_DATE} >= ${daysAgo(op.durationMs)}`);
    case 'isNotInTheLast':
      return metadataCondition(sql<SqlBool>`${RELEASE_DATE} < ${daysAgo(op.durationMs)}`);
    case 'isNull':
      return metadataCondition(sql<SqlBool>`${RELEASE_DATE} IS NULL`);
    default:
      return metadataCondition(sql<SqlBool>`${RELEASE_DATE} IS NOT NULL`);
  }
}

/** Books with any tag at all. */
const TAGGED = sql<SqlBool>`book.id IN (SELECT x.book_id FROM book_metadata_tag_mapping x)`;

export function tagCondition(op: EqualityNullable<string>): Cond {
  if (!('value' in op)) return op.operator === 'isNull' ? not(TAGGED) : TAGGED;
  return equal(op, hasTag([op.value]));
}

/** Bindery's authors are all writers: a match on another role finds nobody; no name means any author. */
export function authorCondition(op: Equality<{ name?: string; role?: string }>): Cond {
  const { name, role } = op.value;
  const positive =
    role !== undefined && role.toLowerCase() !== 'writer'
      ? NOTHING
      : name !== undefined
        ? hasAuthor([name])
        : sql<SqlBool>`book.id IN (SELECT x.book_id FROM book_metadata_author_mapping x)`;
  return equal(op, positive);
}

export function numericCondition(expression: RawBuilder<unknown>, op: NumericNullable): Cond {
  switch (op.operator) {
    case 'isNull':
      return sql<SqlBool>`${expression} IS NULL`;
    case 'isNotNull':
      return sql<SqlBool>`${expression} IS NOT NULL`;
    case 'is':
      return sql<SqlBool>`${expression} = ${op.value}`;
    case 'isNot':
      return not(sql<SqlBool>`${expression} = ${op.value}`);
    case 'greaterThan':
      return sql<SqlBool>`${expression} > ${op.value}`;
    default:
      return sql<SqlBool>`${expression} < ${op.value}`;
  }
}

/** A numeric library id, or undefined (a library id that is not a number names no library). */
export const libraryNumber = (id: string): number | undefined => (/^\d{1,15}$/.test(id) ? Number(id) : undefined);

/** The profile Komga's media type gives each of Bindery's book types. */
const PROFILE_TYPES: Record<string, string[]> = { EPUB: ['EPUB', 'MOBI', 'AZW3'], PDF: ['PDF'], DIVINA: ['CBX', 'FB2'] };

const PRIMARY_TYPE = sql`(SELECT f.book_type FROM book_file f WHERE f.book_id = book.id AND f.is_book = 1 ORDER BY f.id LIMIT 1)`;

/** How many listed books share the book's series (Komga's `oneShot`: a series of one book). */
function seriesSize(d: SqlDialect, groupUnknown: boolean): RawBuilder<number> {
  const listed = sql`b2.deleted = 0 AND b2.is_physical = 0 AND b2.library_id = book.library_id`;
  const named = sql`(SELECT count(*) FROM book_metadata m2 JOIN book b2 ON b2.id = m2.book_id WHERE ${nocaseSql(d, sql.ref('m2.series_name'))} = ${nocaseSql(d, sql.ref('m.series_name'))} AND ${listed})`;
  const unnamed = groupUnknown
    ? sql`(SELECT count(*) FROM book b2 LEFT JOIN book_metadata m2 ON m2.book_id = b2.id WHERE ${listed} AND (m2.series_name IS NULL OR trim(m2.series_name) = ''))`
    : sql`1`;
  return sql<number>`(CASE WHEN ${HAS_SERIES} THEN ${named} ELSE ${unnamed} END)`;
}

async function leafCondition(scope: SearchScope, leaf: BookLeaf): Promise<Cond> {
  const d = scope.store.dialect;
  switch (leaf.field) {
    case 'libraryId': {
      const id = libraryNumber(leaf.op.value);
      return id === undefined ? constant(leaf.op, false) : equal(leaf.op, sql<SqlBool>`+book.library_id = ${id}`);
    }
    case 'seriesId': {
      const series = await findSeries(scope.store, scope.principal, leaf.op.value, scope.groupUnknown);
      return series === undefined ? constant(leaf.op, false) : equal(leaf.op, metadataCondition(series.members));
    }
    case 'readListId':
      return constant(leaf.op, false);
    case 'readStatus':
      return inReadStates(d, scope.principal.userId, leaf.op.operator === 'is' ? [leaf.op.value] : READ_STATES.filter((s) => s !== leaf.op.value));
    case 'mediaStatus':
      return constant(leaf.op, leaf.op.value === 'READY');
    case 'mediaProfile':
      return equal(leaf.op, sql<SqlBool>`${PRIMARY_TYPE} IN (${sql.join(PROFILE_TYPES[leaf.op.value] ?? [''])})`);
    case 'deleted':
      return leaf.op.operator === 'isTrue' ? NOTHING : EVERYTHING;
    case 'oneShot':
      return metadataCondition(leaf.op.operator === 'isTrue' ? sql<SqlBool>`${seriesSize(d, scope.groupUnknown)} = 1` : sql<SqlBool>`${seriesSize(d, scope.groupUnknown)} <> 1`);
    case 'title':
      return metadataCondition(textCondition(d, bookNameSql(d), leaf.op.operator, leaf.op.value));
    case 'releaseDate':
      return releaseCondition(leaf.op);
    case 'tag':
      return tagCondition(leaf.op);
    case 'numberSort':
      return metadataCondition(numericCondition(sql`coalesce(m.series_number, 1)`, leaf.op));
    case 'author':
      return authorCondition(leaf.op);
    case 'poster': {
      // Each book has one cover, taken from its file (Komga's GENERATED) and selected.
      const { type, selected } = leaf.op.value;
      return constant(leaf.op, (type === undefined || type === 'GENERATED') && selected !== false);
    }
  }
}

async function each(scope: SearchScope, conditions: readonly Condition<BookLeaf>[]): Promise<Cond[]> {
  const out: Cond[] = [];
  for (const c of conditions) out.push(await bookCondition(scope, c));
  return out;
}

export async function bookCondition(scope: SearchScope, condition: Condition<BookLeaf>): Promise<Cond> {
  if ('allOf' in condition) return andAll(await each(scope, condition.allOf));
  if ('anyOf' in condition) return anyOf(await each(scope, condition.anyOf));
  return leafCondition(scope, condition);
}

/** The conditions of a whole search body (its tree and its full-text search). */
export async function bookSearchConditions(scope: SearchScope, search: Search<BookLeaf>): Promise<Cond[]> {
  const out: Cond[] = [];
  if (search.condition !== undefined) out.push(metadataCondition(await bookCondition(scope, search.condition)));
  if (search.fullTextSearch !== undefined) out.push(matchesSearch(scope.store.dialect, search.fullTextSearch));
  return out;
}
