// Plain SQL for the catalog's hot write paths, run either on the raw connection or inside a Kysely transaction.
import type Database from 'better-sqlite3';
import { CompiledQuery, type Transaction } from 'kysely';
import type { DB } from '../store/db-types.ts';

export type SqlValue = string | number | bigint | Buffer | null;
export type SqlRow = Record<string, unknown>;

/**
 * Scanning a book issues some twenty small statements; through the query builder each costs more than SQLite's own
 * work. Callers hold the transaction: `sqliteExec` must only be used inside one (a Kysely transaction on the same
 * connection is fine, and keeps `BEGIN IMMEDIATE` and the connection lock).
 */
export interface SqlExec {
  get(sql: string, params?: readonly SqlValue[]): SqlRow | undefined | Promise<SqlRow | undefined>;
  all(sql: string, params?: readonly SqlValue[]): SqlRow[] | Promise<SqlRow[]>;
  run(sql: string, params?: readonly SqlValue[]): void | Promise<void>;
}

/** The raw connection's flavour: every call completes before it returns. */
export interface SyncSqlExec extends SqlExec {
  get(sql: string, params?: readonly SqlValue[]): SqlRow | undefined;
  all(sql: string, params?: readonly SqlValue[]): SqlRow[];
  run(sql: string, params?: readonly SqlValue[]): void;
}

/** Statements prepared once per connection and SQL text. */
export function sqliteExec(sqlite: Database.Database): SyncSqlExec {
  const cache = new Map<string, Database.Statement>();
  const statement = (sql: string): Database.Statement => {
    let prepared = cache.get(sql);
    if (!prepared) {
      prepared = sqlite.prepare(sql);
      cache.set(sql, prepared);
    }
    return prepared;
  };
  return {
    get: (sql, params = []) => statement(sql).get(...params) as SqlRow | undefined,
    all: (sql, params = []) => statement(sql).all(...params) as SqlRow[],
    run: (sql, params = []) => {
      statement(sql).run(...params);
    },
  };
}

/** The same statements through a Kysely transaction, for callers that have nothing else. */
export function kyselyExec(trx: Transaction<DB>): SqlExec {
  const query = async (sql: string, params: readonly SqlValue[]): Promise<SqlRow[]> => (await trx.executeQuery<SqlRow>(CompiledQuery.raw(sql, [...params]))).rows;
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
