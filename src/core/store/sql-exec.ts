// Plain SQL with `?` placeholders, for hot paths where the query builder costs more than the database's own work.
// The same text runs on both engines: on PostgreSQL the placeholders become $1, $2, ...
import type Database from 'better-sqlite3';
import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import type { DB } from './db-types.ts';
import { engineOf } from './engine.ts';

export type SqlValue = string | number | bigint | Buffer | null;
export type SqlRow = Record<string, unknown>;

/**
 * Results come back at once on SQLite and as promises on PostgreSQL: write `await exec.all(...)` and the code runs on
 * both. Callers hold the transaction (see Store.write): outside one, each statement commits by itself.
 */
export interface SqlExec {
  get(sql: string, params?: readonly SqlValue[]): SqlRow | undefined | Promise<SqlRow | undefined>;
  all(sql: string, params?: readonly SqlValue[]): SqlRow[] | Promise<SqlRow[]>;
  run(sql: string, params?: readonly SqlValue[]): void | Promise<void>;
}

/** The raw SQLite connection's flavour: every call completes before it returns. */
export interface SyncSqlExec extends SqlExec {
  get(sql: string, params?: readonly SqlValue[]): SqlRow | undefined;
  all(sql: string, params?: readonly SqlValue[]): SqlRow[];
  run(sql: string, params?: readonly SqlValue[]): void;
}

/** The rows of a statement, typed as the statement selects them (either engine). */
export async function rowsOf<T>(exec: SqlExec, sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
  return (await exec.all(sql, params)) as unknown as T[];
}

/** The first column of every row (a count's one value, an id list's ids). */
export function firstColumn<T>(rows: readonly SqlRow[]): T[] {
  return rows.map((row) => {
    for (const key in row) return row[key];
    return undefined;
  }) as T[];
}

const preparers = new WeakMap<Database.Database, (sql: string) => Database.Statement>();

/**
 * The connection's statements prepared once per SQL text (the 500 most recent kept), shared by `sqliteExec` and
 * Kysely's driver: preparing is most of a small query's cost.
 */
export function statementPreparer(sqlite: Database.Database): (sql: string) => Database.Statement {
  let prepare = preparers.get(sqlite);
  if (!prepare) {
    const cache = new Map<string, Database.Statement>();
    prepare = (sql) => {
      let prepared = cache.get(sql);
      if (!prepared) {
        prepared = sqlite.prepare(sql);
        if (cache.size >= 500) cache.delete(cache.keys().next().value as string);
        cache.set(sql, prepared);
      }
      return prepared;
    };
    preparers.set(sqlite, prepare);
  }
  return prepare;
}

const sqliteExecs = new WeakMap<Database.Database, SyncSqlExec>();

/** Statements prepared once per connection and SQL text. */
export function sqliteExec(sqlite: Database.Database): SyncSqlExec {
  const known = sqliteExecs.get(sqlite);
  if (known) return known;
  const statement = statementPreparer(sqlite);
  const exec: SyncSqlExec = {
    get: (sql, params = []) => statement(sql).get(...params) as SqlRow | undefined,
    all: (sql, params = []) => statement(sql).all(...params) as SqlRow[],
    run: (sql, params = []) => {
      statement(sql).run(...params);
    },
  };
  sqliteExecs.set(sqlite, exec);
  return exec;
}

/**
 * `?` placeholders as PostgreSQL numbers them. Question marks inside quoted strings and identifiers are left alone;
 * the `?|`, `?&` and `?` JSON operators are not used anywhere in the catalog's SQL.
 */
export function numberedPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  let quote: string | undefined;
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = undefined;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else if (ch === '?') {
      out += `$${++n}`;
    } else {
      out += ch;
    }
  }
  return out;
}

const translated = new Map<string, string>();

function forPostgres(sql: string): string {
  let text = translated.get(sql);
  if (text === undefined) {
    text = numberedPlaceholders(sql);
    if (translated.size >= 2000) translated.delete(translated.keys().next().value as string);
    translated.set(sql, text);
  }
  return text;
}

/**
 * The same statements through Kysely (a transaction, or the pool on PostgreSQL), on either engine. `afterChange` runs
 * after each statement that inserted, updated or deleted rows; `mark` is given each statement before it runs
 * (Store.readingState marks its own).
 */
export function kyselyExec(db: Kysely<DB> | Transaction<DB>, afterChange?: () => Promise<void>, mark: (query: CompiledQuery) => CompiledQuery = (query) => query): SqlExec {
  const postgres = engineOf(db) === 'postgres';
  const query = async (sql: string, params: readonly SqlValue[]): Promise<SqlRow[]> => {
    const result = await db.executeQuery<SqlRow>(mark(CompiledQuery.raw(postgres ? forPostgres(sql) : sql, [...params])));
    if (afterChange && (result.numAffectedRows ?? 0n) > 0n) await afterChange();
    return result.rows;
  };
  return {
    get: async (sql, params = []) => (await query(sql, params))[0],
    all: (sql, params = []) => query(sql, params),
    run: async (sql, params = []) => {
      await query(sql, params);
    },
  };
}

export function isSqlExec(value: Transaction<DB> | SqlExec): value is SqlExec {
  return typeof (value as Partial<SqlExec>).run === 'function' && typeof (value as Partial<SqlExec>).all === 'function';
}
