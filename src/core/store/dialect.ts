// The few SQL spellings that differ between SQLite and PostgreSQL, named once. Domain code writes portable SQL and
// asks this module for the rest; it never tests the engine itself.
import type { Kysely } from 'kysely';
import { engineOf, type Engine } from './engine.ts';
import { POSTGRES_NOW } from './postgres-schema.ts';

export interface SqlDialect {
  engine: Engine;
  /** An expression compared and sorted as SQLite's NOCASE does: ASCII letters folded, bytes otherwise. */
  nocase(expression: string): string;
  /** `expression LIKE pattern`, ASCII letters folded, `\` the escape character. */
  likeNocase(expression: string, pattern: string): string;
  /**
   * A subquery of the values of a JSON array (one parameter, or the given SQL expression), as column `value`:
   * `id IN (${dialect.jsonValues('integer')})` with `JSON.stringify(ids)` as the parameter.
   */
  jsonValues(type: 'integer' | 'text', parameter?: string): string;
  /** Values of a group joined by a separator (a SQL string literal such as `','`). */
  groupConcat(expression: string, separatorLiteral: string): string;
  /** The larger / smaller of two values (SQLite's two-argument max/min). */
  greatest(a: string, b: string): string;
  least(a: string, b: string): string;
  /** The time now as the catalog stores it: ISO 8601 text in UTC with milliseconds. */
  now: string;
  /** A real rounded to `digits` decimals. */
  round(expression: string, digits: number): string;
  /** Whole seconds since 1970 (UTC) of a stored ISO 8601 instant. */
  epochSeconds(expression: string): string;
  /** Milliseconds since 1970 (UTC), rounded, of a stored ISO 8601 instant. */
  epochMs(expression: string): string;
  /** `yyyy-MM` of an instant given as seconds since 1970, read in UTC. */
  utcMonthOfSeconds(seconds: string): string;
  /** Position (1-based) of `needle` in `haystack`, 0 when absent. */
  position(haystack: string, needle: string): string;
  /** A JSON array of the group's values (text). */
  jsonGroupArray(expression: string): string;
  /**
   * A statement answering one row whose column `list` is a JSON array (text) of the values of column `v` of the
   * subquery's rows, in the subquery's order (`[]` when it has none).
   */
  orderedJsonArray(subquery: string): string;
  /** Text read as a number the way SQLite's CAST(x AS REAL) reads it: its leading number, 0 when it has none, NULL stays NULL. */
  numberFromText(expression: string): string;
  /** A number's integer part, truncated toward zero as SQLite's CAST(x AS INTEGER) does (PostgreSQL's cast rounds). */
  integerPart(expression: string): string;
  /**
   * Appended to a SELECT inside a write transaction to lock the rows it reads until commit. Empty on SQLite, whose write
   * transactions hold the database's write lock from their start (BEGIN IMMEDIATE).
   */
  forUpdate: string;
  /**
   * A statement, run first in a write transaction, that keeps other writers of the table waiting until commit (readers
   * still read): for "create it unless it exists" where no row exists yet to lock. On SQLite a harmless query, the
   * write transaction holding the database's write lock already.
   */
  lockTable(table: string): string;
  /**
   * A statement (one text parameter: the key) that makes every write transaction naming the same key, in any process,
   * wait for this one to end. Empty on SQLite, where a write transaction already excludes every other writer.
   */
  transactionKeyLock: string;
}

const SQLITE: SqlDialect = {
  engine: 'sqlite',
  nocase: (e) => `${e} COLLATE NOCASE`,
  likeNocase: (e, p) => `${e} LIKE ${p} ESCAPE '\\'`,
  jsonValues: (_type, parameter = '?') => `SELECT value FROM json_each(${parameter})`,
  groupConcat: (e, sep) => `group_concat(${e}, ${sep})`,
  greatest: (a, b) => `max(${a}, ${b})`,
  least: (a, b) => `min(${a}, ${b})`,
  now: `strftime('%Y-%m-%dT%H:%M:%fZ','now')`,
  round: (e, digits) => `round(${e}, ${digits})`,
  epochSeconds: (e) => `unixepoch(${e})`,
  epochMs: (e) => `cast(round(unixepoch(${e}, 'subsec') * 1000) as integer)`,
  utcMonthOfSeconds: (s) => `strftime('%Y-%m', ${s}, 'unixepoch')`,
  position: (h, n) => `instr(${h}, ${n})`,
  jsonGroupArray: (e) => `json_group_array(${e})`,
  // SQLite keeps the ORDER BY of a FROM-clause subquery whose rows feed an aggregate other than count, min or max.
  orderedJsonArray: (q) => `SELECT json_group_array(v) AS list FROM (${q}) AS ordered`,
  numberFromText: (e) => `CAST(${e} AS REAL)`,
  integerPart: (e) => `CAST(${e} AS INTEGER)`,
  forUpdate: '',
  lockTable: () => 'SELECT 1',
  transactionKeyLock: '',
};

const POSTGRES: SqlDialect = {
  engine: 'postgres',
  nocase: (e) => `lower(${e})`,
  likeNocase: (e, p) => `${e} ILIKE ${p} ESCAPE '\\'`,
  jsonValues: (type, parameter = '?') =>
    type === 'integer' ? `SELECT value::bigint AS value FROM json_array_elements_text(${parameter}::json) AS value` : `SELECT value FROM json_array_elements_text(${parameter}::json) AS value`,
  groupConcat: (e, sep) => `string_agg((${e})::text, ${sep})`,
  greatest: (a, b) => `greatest(${a}, ${b})`,
  least: (a, b) => `least(${a}, ${b})`,
  now: POSTGRES_NOW,
  round: (e, digits) => `round((${e})::numeric, ${digits})::double precision`,
  epochSeconds: (e) => `floor(extract(epoch from (${e})::timestamptz))::bigint`,
  epochMs: (e) => `round(extract(epoch from (${e})::timestamptz) * 1000)::bigint`,
  utcMonthOfSeconds: (s) => `to_char(to_timestamp(${s}) at time zone 'UTC', 'YYYY-MM')`,
  position: (h, n) => `strpos(${h}, ${n})`,
  jsonGroupArray: (e) => `coalesce(json_agg(${e})::text, '[]')`,
  // An array built from a subquery holds its rows in the subquery's order.
  orderedJsonArray: (q) => `SELECT array_to_json(ARRAY(${q}))::text AS list`,
  numberFromText: (e) =>
    `(CASE WHEN (${e}) IS NULL THEN NULL ELSE coalesce(CAST(substring(ltrim((${e})::text) from '^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?') AS double precision), 0) END)`,
  integerPart: (e) => `CAST(trunc(${e}) AS bigint)`,
  forUpdate: ' FOR UPDATE',
  lockTable: (table) => `LOCK TABLE ${table} IN SHARE ROW EXCLUSIVE MODE`,
  transactionKeyLock: 'SELECT pg_advisory_xact_lock(hashtextextended(?, 0))',
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema, or a transaction of it
export function dialectOf(db: Kysely<any> | Engine): SqlDialect {
  const engine = typeof db === 'string' ? db : engineOf(db);
  return engine === 'postgres' ? POSTGRES : SQLITE;
}
