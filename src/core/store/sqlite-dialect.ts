// Kysely's SQLite dialect, adjusted for several processes sharing one database file.
import type Database from 'better-sqlite3';
import type { DatabaseConnection, Driver } from 'kysely';
import { CompiledQuery, SqliteDialect, SqliteDriver } from 'kysely';
import { countedAs, snapshotsEnded } from './snapshot.ts';
import { statementPreparer } from './sql-exec.ts';
import { writeKindOf } from './write-kinds.ts';

/**
 * Write transactions start with BEGIN IMMEDIATE: a deferred transaction that reads and then writes can fail at once
 * with SQLITE_BUSY when another process wrote in between, and busy_timeout cannot help it. Taking the write lock up
 * front makes the second writer wait (up to busy_timeout) instead.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  /** The connection itself (what Kysely is given is a wrapper caching statements). */
  private readonly database: Database.Database;
  constructor(database: Database.Database) {
    super({ database: withStatementCache(database) });
    this.database = database;
  }

  /** The driver has one connection: its statements are wrapped once. */
  private readonly wrapped = new WeakSet<DatabaseConnection>();

  /** Statements marked with a write kind (write-kinds.ts) have their changes filed under it (see snapshot.ts). */
  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    if (this.wrapped.has(connection)) return connection;
    this.wrapped.add(connection);
    const execute = connection.executeQuery.bind(connection);
    // Kysely's SQLite connection runs the statement synchronously when called: counting around the call is exact.
    connection.executeQuery = ((query) => {
      const kind = writeKindOf(query);
      return kind === undefined ? execute(query) : countedAs(kind, this.database, () => execute(query));
    }) as typeof connection.executeQuery;
    return connection;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    // An asynchronous read snapshot (Store.read) holds a read transaction on this same connection.
    await snapshotsEnded(this.database);
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  /**
   * SQLite ends the transaction itself when a statement fails with SQLITE_FULL, SQLITE_IOERR, SQLITE_BUSY or
   * SQLITE_NOMEM. A ROLLBACK after that fails with "cannot rollback - no transaction is active", and that error would
   * replace the one that says what went wrong (a full disk): roll back only what is still open.
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (!this.database.inTransaction) return;
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }
}

export class ConcurrentSqliteDialect extends SqliteDialect {
  private readonly database: Database.Database;
  constructor(database: Database.Database) {
    super({ database: withStatementCache(database) });
    this.database = database;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.database);
  }
}

/** Kysely prepares every statement anew; the connection's cached statements save most of a small query's cost. */
function withStatementCache(database: Database.Database): Database.Database {
  const prepare = statementPreparer(database);
  return new Proxy(database, {
    get(target, property, receiver) {
      if (property === 'prepare') return prepare;
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

