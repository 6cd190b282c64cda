// The server engine: a PostgreSQL 15+ database shared by any number of Bindery processes (CLI, replicas, workers).
// Values come back as SQLite gives them (64-bit integers and numerics as numbers), so answers are the same bytes.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { CompiledQuery, Kysely, PostgresDialect, PostgresDriver, type DatabaseConnection, type Driver, type QueryResult, type TransactionSettings } from 'kysely';
import type { DB } from './db-types.ts';
import { dialectOf } from './dialect.ts';
import { redactedLocation } from './engine.ts';
import { postgresLeases } from './leases-postgres.ts';
import { postgresLiveness } from './liveness-postgres.ts';
import { migrate } from './migrate.ts';
import { PostgresSchemaPlugin } from './postgres-schema.ts';
import type { Generation } from './snapshot.ts';
import { kyselyExec } from './sql-exec.ts';
import { StoreError, type OpenStoreOptions, type Store } from './store.ts';
import { markWriteKind, writeKindOf, WriteKindPlugin, type WriteKind } from './write-kinds.ts';
import { touchesReadingState } from './reading-state.ts';

/** Every committed write of every Bindery process is announced here, so the others drop what they cached. */
export const CATALOG_CHANNEL = 'bindery_catalog';
/** Bookkeeping rows changed (Store.bookkeeping): the others drop what they knew of those rows, and nothing else. */
export const BOOKKEEPING_CHANNEL = 'bindery_bookkeeping';
/** Reading state committed (Store.readingState): the others drop what shows progress, and keep the catalog's lists. */
export const READING_STATE_CHANNEL = 'bindery_reading_state';

const INT8 = 20;
const NUMERIC = 1700;

const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  }) as typeof pg.types.getTypeParser,
};

const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i;
/** Statements a connection keeps prepared at most; past that it is replaced (dynamic SQL has many shapes). */
const PREPARED_PER_CONNECTION = 500;

/**
 * A connection that prepares each statement once by name and reuses it: PostgreSQL then parses and plans a query
 * shape once per connection instead of on every execution (a book's answer runs a handful of small queries, whose
 * parsing was most of their cost). As the JDBC driver does for Grimmory.
 */
class PreparingClient extends pg.Client {
  private readonly names = new Map<string, string>();

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- pg's overloads; only (text, values) is rewritten
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config === 'string' && Array.isArray(values) && PREPARABLE.test(config) && this.names.size < PREPARED_PER_CONNECTION) {
      let name = this.names.get(config);
      if (!name) {
        name = `b${this.names.size.toString(36)}`;
        this.names.set(config, name);
      }
      return super.query({ name, text: config, values }, callback);
    }
    return super.query(config, values, callback);
  }
}

const READ_ONLY_START = /^\s*(select|show|explain|listen|unlisten|notify|set|reset|begin|start|commit|rollback|savepoint|release)\b/i;
const WRITE_WORD = /\b(insert|update|delete|merge|create|alter|drop|truncate)\b/i;

function isWrite(query: CompiledQuery): boolean {
  const kind = query.query.kind;
  if (kind === 'SelectQueryNode') return false;
  if (kind !== 'RawNode') return true;
  // A WITH statement writes only when it says so; a read of one (a materialized list) moves no generation.
  return /^\s*with\b/i.test(query.sql) ? WRITE_WORD.test(query.sql) : !READ_ONLY_START.test(query.sql);
}

/** What this process knows of the catalog's changes. */
class ChangeTracker {
  readonly instance = randomUUID();
  /** Notifications from other processes. */
  remote = 0;
  /** Writes committed by this process. */
  local = 0;
  /** Bookkeeping changes: notifications from other processes, and this process's own. */
  bookkeepingRemote = 0;
  bookkeepingLocal = 0;
  /** Reading-state changes: notifications from other processes, and this process's own commits. */
  readingRemote = 0;
  readingLocal = 0;
  openWrites = 0;
  listening = false;
  private blind = 0;

  generation(): Generation {
    // Without the notification channel nothing tells us of others' writes: never reuse what was cached.
    if (!this.listening) return { dataVersion: -1, changes: ++this.blind };
    return { dataVersion: this.remote, changes: this.local };
  }

  bookkeepingGeneration(): Generation {
    if (!this.listening) return { dataVersion: -1, changes: ++this.blind };
    return { dataVersion: this.bookkeepingRemote, changes: this.bookkeepingLocal };
  }

  readingGeneration(): Generation {
    if (!this.listening) return { dataVersion: -1, changes: ++this.blind };
    return { dataVersion: this.readingRemote, changes: this.readingLocal };
  }
}

/** What a write statement changed: the catalog, or rows of a kind kept apart from it (write-kinds.ts). */
type Changed = 'catalog' | WriteKind;

const CHANNEL_OF: Record<Changed, string> = { catalog: CATALOG_CHANNEL, reading: READING_STATE_CHANNEL, bookkeeping: BOOKKEEPING_CHANNEL };

/**
 * What a write statement changes: its kind's rows, or the catalog's; a catalog statement that names a reading-state
 * table (a merge moving progress to the kept book) changes reading state as well. Rows a catalog statement's cascades
 * delete are not named: what is kept of them is kept under the catalog's generation too.
 */
function changedBy(query: CompiledQuery): Changed[] {
  const kind = writeKindOf(query);
  if (kind !== undefined) return [kind];
  return touchesReadingState(query.sql) ? ['catalog', 'reading'] : ['catalog'];
}

/** This process's own committed changes of each kind. */
function countLocal(tracker: ChangeTracker, changed: Changed): void {
  if (changed === 'catalog') tracker.local++;
  else if (changed === 'reading') tracker.readingLocal++;
  else tracker.bookkeepingLocal++;
}

/**
 * Counts write transactions, and announces each committed write to the other processes: on the catalog's channel, or
 * for statements marked with a write kind (Store.readingState, Store.bookkeeping.db) on that kind's.
 */
class AnnouncingDriver extends PostgresDriver {
  private readonly tracker: ChangeTracker;
  private readonly inTransaction = new WeakSet<DatabaseConnection>();
  /** What the open transaction of each connection wrote so far. */
  private readonly written = new WeakMap<DatabaseConnection, Set<Changed>>();
  /** The pool hands the same connection out again and again: it is wrapped once, not once per use. */
  private readonly wrapped = new WeakSet<DatabaseConnection>();

  constructor(config: ConstructorParameters<typeof PostgresDriver>[0], tracker: ChangeTracker) {
    super(config);
    this.tracker = tracker;
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    if (this.wrapped.has(connection)) return connection;
    this.wrapped.add(connection);
    const execute = connection.executeQuery.bind(connection);
    connection.executeQuery = (async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
      const result = await execute<R>(query);
      if (isWrite(query)) {
        for (const changed of changedBy(query)) {
          if (this.inTransaction.has(connection)) {
            const written = this.written.get(connection) ?? new Set<Changed>();
            written.add(changed);
            this.written.set(connection, written);
          } else {
            countLocal(this.tracker, changed);
            await execute(CompiledQuery.raw('select pg_notify($1, $2)', [CHANNEL_OF[changed], this.tracker.instance]));
          }
        }
      }
      return result;
    }) as typeof connection.executeQuery;
    return connection;
  }

  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await super.beginTransaction(connection, settings);
    this.inTransaction.add(connection);
    if (settings.accessMode !== 'read only') this.tracker.openWrites++;
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const written = this.written.get(connection) ?? new Set<Changed>();
    this.written.delete(connection);
    try {
      // Delivered at commit, and only if the transaction commits.
      for (const changed of written) await connection.executeQuery(CompiledQuery.raw('select pg_notify($1, $2)', [CHANNEL_OF[changed], this.tracker.instance]));
      await super.commitTransaction(connection);
    } finally {
      this.endTransaction(connection);
      for (const changed of written) countLocal(this.tracker, changed);
    }
  }

  override async rollbackTransaction(connection: Parameters<PostgresDriver['rollbackTransaction']>[0]): Promise<void> {
    this.written.delete(connection);
    try {
      await super.rollbackTransaction(connection);
    } finally {
      this.endTransaction(connection);
    }
  }

  private endTransaction(connection: DatabaseConnection): void {
    if (!this.inTransaction.delete(connection)) return;
    // Read-only snapshots never counted.
    if (this.tracker.openWrites > 0) this.tracker.openWrites--;
  }
}

class AnnouncingDialect extends PostgresDialect {
  private readonly driverConfig: ConstructorParameters<typeof PostgresDriver>[0];
  private readonly tracker: ChangeTracker;
  constructor(config: ConstructorParameters<typeof PostgresDriver>[0], tracker: ChangeTracker) {
    super(config);
    this.driverConfig = config;
    this.tracker = tracker;
  }
  override createDriver(): Driver {
    return new AnnouncingDriver(this.driverConfig, this.tracker);
  }
}

/** Keeps a LISTEN connection open (reconnecting after a database restart) and counts others' writes and bookkeeping. */
function listenForChanges(url: string, tracker: ChangeTracker, onError: (error: Error) => void): { ready: Promise<void>; stop: () => Promise<void> } {
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    if (closed) return;
    const next = new pg.Client({ connectionString: url, application_name: 'bindery-listen' });
    next.on('notification', (message) => {
      if (message.payload === tracker.instance) return;
      if (message.channel === BOOKKEEPING_CHANNEL) tracker.bookkeepingRemote++;
      else if (message.channel === READING_STATE_CHANNEL) tracker.readingRemote++;
      else tracker.remote++;
    });
    next.on('error', (error) => {
      tracker.listening = false;
      onError(error);
      void next.end().catch(() => undefined);
      schedule();
    });
    try {
      client = next;
      await next.connect();
      await next.query(`LISTEN ${CATALOG_CHANNEL}; LISTEN ${BOOKKEEPING_CHANNEL}; LISTEN ${READING_STATE_CHANNEL}`);
      if (closed) return;
      // Whatever happened while deaf counts as a change.
      tracker.remote++;
      tracker.bookkeepingRemote++;
      tracker.readingRemote++;
      tracker.listening = true;
    } catch (error) {
      void next.end().catch(() => undefined);
      onError(error as Error);
      schedule();
    }
  };
  const schedule = (): void => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      connecting = connect();
    }, 1000);
    retry.unref();
  };
  connecting = connect();
  const stop = async (): Promise<void> => {
    closed = true;
    if (retry) clearTimeout(retry);
    tracker.listening = false;
    await connecting;
    await client?.end().catch(() => undefined);
  };
  return { ready: connecting, stop };
}

export async function openPostgresStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  const location = redactedLocation(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    application_name: 'bindery',
    types: TYPES,
    // A database that does not answer fails the request soon, instead of queueing it for ever.
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    Client: PreparingClient,
  });
  // An idle connection the server dropped (a restart) must not bring the process down; the pool replaces it.
  pool.on('error', () => undefined);
  // A connection checked out (a transaction between two statements) when the server goes away reports it as an
  // 'error' event, which would end the process: the statement in flight or the next one fails instead, the request
  // answers 503, and the pool replaces the connection.
  pool.on('connect', (client) => client.on('error', () => undefined));
  try {
    const probe = await pool.connect();
    probe.release();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new StoreError(`cannot reach the catalog database at ${location}: ${(error as Error).message}`, { cause: error });
  }
  const tracker = new ChangeTracker();
  const db = new Kysely<DB>({ dialect: new AnnouncingDialect({ pool }, tracker) });
  if (!options.readonly) await migrate(db.withPlugin(new PostgresSchemaPlugin()), url);
  const listener = listenForChanges(url, tracker, () => undefined);
  // Until the channel listens, every generation is new and nothing can be kept: a store opened is a store that listens
  // (or has tried once; it keeps trying in the background).
  await listener.ready;
  const stopListening = listener.stop;
  const exec = kyselyExec(db);
  const readingDb = db.withPlugin(new WriteKindPlugin('reading'));
  const liveness = postgresLiveness(url, exec);
  // The same pool, without the announcing driver: bookkeeping is announced on its own channel.
  const unannounced = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  const bookkeepingExec = kyselyExec(unannounced, async () => {
    tracker.bookkeepingLocal++;
    await unannounced.executeQuery(CompiledQuery.raw('select pg_notify($1, $2)', [BOOKKEEPING_CHANNEL, tracker.instance]));
  });
  return {
    db,
    engine: 'postgres',
    dialect: dialectOf('postgres'),
    path: location,
    exec,
    // A query through the pool already leaves the event loop free; the pool's connections see only committed state.
    readAside: async (sql, params) => exec.all(sql, params),
    read: (reader) => {
      const generation = tracker.generation();
      const readingGeneration = tracker.readingGeneration();
      return db
        .transaction()
        .setIsolationLevel('repeatable read')
        .setAccessMode('read only')
        .execute(async (trx) => reader({ db: trx, exec: kyselyExec(trx), snapshotGeneration: generation, snapshotReadingGeneration: readingGeneration }));
    },
    write: (writer) => db.transaction().execute((trx) => writer({ db: trx, exec: kyselyExec(trx) })),
    generation: () => tracker.generation(),
    bookkeeping: {
      exec: bookkeepingExec,
      db: db.withPlugin(new WriteKindPlugin('bookkeeping')),
      generation: () => tracker.bookkeepingGeneration(),
      // A row lock held by another transaction is waited for off this thread, and only as long as that transaction lasts.
      tryRun: async (sql, params) => (await bookkeepingExec.run(sql, params), true),
    },
    readingState: { db: readingDb, exec: kyselyExec(readingDb, undefined, markWriteKind('reading')), generation: () => tracker.readingGeneration() },
    writeInFlight: () => tracker.openWrites > 0,
    leases: (instance) => postgresLeases(url, exec, instance),
    liveness,
    get sqlite(): never {
      throw new StoreError('this code path still needs the embedded SQLite catalog; it does not run on PostgreSQL yet');
    },
    close: async () => {
      await liveness.close();
      await stopListening();
      await db.destroy();
    },
  };
}
