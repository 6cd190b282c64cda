// Opening the catalog: the embedded SQLite file in the data directory by default, or a PostgreSQL database given by
// URL. Both are reached through the same Store; the engines' differences stay in this folder.
import type Database from 'better-sqlite3';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from './db-types.ts';
import type { SqlDialect } from './dialect.ts';
import { isDatabaseUrl, type Engine } from './engine.ts';
import type { LeaseInstance, Leases } from './leases.ts';
import type { Liveness } from './liveness.ts';
import type { Generation } from './snapshot.ts';
import type { SqlExec, SqlRow, SqlValue } from './sql-exec.ts';

export type Db = Kysely<DB>;

export interface ReadScope {
  /** Queries through the builder, inside the snapshot. */
  db: Db;
  exec: SqlExec;
  /**
   * The catalog's generation taken before the snapshot began. What is read in the snapshot may be kept under it, never
   * under store.generation() read later: a change committed meanwhile would be filed as already seen.
   */
  snapshotGeneration: Generation;
  /** The reading state's generation taken with snapshotGeneration (for values that show reading state). */
  snapshotReadingGeneration?: Generation;
}

export interface WriteScope {
  db: Transaction<DB>;
  exec: SqlExec;
}

/**
 * Bookkeeping kept in the catalog that is not catalog content (sign-in failure counts, the Kobo sync snapshots and
 * sessions). Statements through `exec` or `db` (and the transactions of `db`) do not move the catalog's generation(),
 * so no process drops its caches because of them. This generation() moves instead whenever such a statement changes
 * rows, in any process (it may move more often; PostgreSQL: its own NOTIFY channel; SQLite: another process's commit
 * moves both). Nothing cached against the catalog's generation may read a table written this way.
 */
export interface Bookkeeping {
  exec: SqlExec;
  /**
   * Queries, and transactions that read the catalog and write bookkeeping alone. A transaction of `db` still counts as
   * a write in flight (Store.writeInFlight) while it is open.
   */
  db: Db;
  generation(): Generation;
  /**
   * One statement that gives up instead of waiting for the catalog: false, having done nothing, when another writer
   * holds it (on SQLite another process's write lock, or a transaction open on this connection; blocking there would
   * stop this thread). For bookkeeping that may as well be done by the next request.
   */
  tryRun(sql: string, params?: readonly SqlValue[]): Promise<boolean>;
}

/**
 * Reading state (reading-state.ts READING_STATE_TABLES: progress, read status, device positions, reading sessions),
 * written apart from the catalog: statements through `db` or `exec` (and the transactions of `db`) move this
 * generation() and not the catalog's, in every process (SQLite: another process's commit moves both; PostgreSQL: its
 * own NOTIFY channel). They must write nothing else (but the events outbox, whose poller watches both generations):
 * lists, counts and pages kept under the catalog's generation would not see it. What shows or filters by reading state is kept under both generations (reading-state.ts readingAware).
 */
export interface ReadingState {
  db: Db;
  exec: SqlExec;
  generation(): Generation;
}

export interface Store {
  db: Db;
  engine: Engine;
  dialect: SqlDialect;
  /** The SQLite file, or the PostgreSQL URL without its password. */
  path: string;
  /** Raw statements with `?` placeholders; outside `write`, each commits by itself. */
  exec: SqlExec;
  /**
   * One read-only statement over much of the catalog (a count or an ordered id list of every visible book), run where
   * it does not hold up this thread: on SQLite in a worker thread with its own read-only connection to the file,
   * started on first use and ended after 30 s unused; on PostgreSQL the ordinary query through the pool. A worker
   * round trip costs ~0.1–0.3 ms, so it pays only for statements of several milliseconds, not per-page queries.
   *
   * It reads the committed state as of when it runs: not inside any snapshot (`read`) of the caller, and never this
   * process's write transaction still open. A value kept under a generation must take that generation BEFORE calling
   * it (CatalogMemo.getAsync does), and must not be kept while writeInFlight(). Failures (a bad statement, a busy or
   * closed catalog, a crashed worker) reject; a store that closes rejects the reads still waiting.
   */
  readAside(sql: string, params?: readonly SqlValue[]): Promise<SqlRow[]>;
  /** Reads that must see one consistent state of the catalog. */
  read<T>(reader: (scope: ReadScope) => Promise<T> | T): Promise<T>;
  /** One write transaction: all of it commits, or none. */
  write<T>(writer: (scope: WriteScope) => Promise<T>): Promise<T>;
  /** Changes whenever any process (any replica) commits to the catalog; cheap, synchronous. */
  generation(): Generation;
  /** Writes that are not catalog changes, and how to tell that they happened (see Bookkeeping). */
  bookkeeping: Bookkeeping;
  /** Progress and read status, written without moving the catalog's generation (see ReadingState). */
  readingState: ReadingState;
  /** Whether this process has a write transaction open: what is read now may yet roll back, so must not be cached. */
  writeInFlight(): boolean;
  /**
   * The raw better-sqlite3 handle, for the few places that still need synchronous bulk work on SQLite.
   * On PostgreSQL reading it throws: such code must move to `exec`, `read` or `write`.
   */
  sqlite: Database.Database;
  /** Leases on singleton jobs for this process (see leases.ts); close them before the store. */
  leases(instance: LeaseInstance): Leases;
  /** Whether the owner recorded for some work (a move batch, an import) still runs, on any machine sharing the catalog. */
  liveness: Liveness;
  close(): Promise<void>;
}

export class StoreError extends Error {
  override name = 'StoreError';
}

export interface OpenStoreOptions {
  /** How long a writer waits for another process's write lock before failing (ms). */
  busyTimeoutMs?: number;
  readonly?: boolean;
  /** PostgreSQL: connections this process holds at most. */
  poolSize?: number;
  /** SQLite: how long the thread of `readAside` lives unused (ms; tests). */
  readAsideIdleMs?: number;
}

/** `location`: a SQLite file path, or a postgres:// URL. */
export async function openStore(location: string, options: OpenStoreOptions = {}): Promise<Store> {
  if (isDatabaseUrl(location)) {
    const { openPostgresStore } = await import('./postgres-store.ts');
    return openPostgresStore(location, options);
  }
  const testServer = process.env.BINDERY_TEST_DATABASE_SERVER;
  if (testServer && location !== ':memory:') {
    const { testDatabaseFor } = await import('./test-databases.ts');
    const { openPostgresStore } = await import('./postgres-store.ts');
    return openPostgresStore(await testDatabaseFor(testServer, location), options);
  }
  return openSqliteFile(location, options);
}

/**
 * A SQLite file as such, even while the test suite maps catalog paths to PostgreSQL databases: the catalog copy inside
 * a backup archive, or the file `bindery db copy --to FILE` writes, is a SQLite file whatever the catalog's engine.
 */
export async function openSqliteFile(path: string, options: OpenStoreOptions = {}): Promise<Store> {
  const { openSqliteStore } = await import('./sqlite-store.ts');
  return openSqliteStore(path, options);
}

/** The SQLite file the catalog at `location` is, or undefined when the catalog lives in a database server. */
export function embeddedCatalogFile(location: string): string | undefined {
  if (isDatabaseUrl(location) || (process.env.BINDERY_TEST_DATABASE_SERVER && location !== ':memory:')) return undefined;
  return location;
}
