// Reading the catalog cheaply: reads that belong together in one read transaction, and values cached for as long as
// the catalog is unchanged.
import type Database from 'better-sqlite3';
import { sqliteExec, type SqlValue, type SyncSqlExec } from './sql-exec.ts';
import type { WriteKind } from './write-kinds.ts';

interface Control {
  begin: Database.Statement;
  commit: Database.Statement;
  rollback: Database.Statement;
  dataVersion: Database.Statement;
  totalChanges: Database.Statement;
  /** The connection's data_version as last read, with when (see dataVersionOf). */
  seen?: { dataVersion: number; turn: number };
  /** Reads the reading state's version (migration 052), once prepared. */
  readingVersion?: Database.Statement;
  /** The reading state's version as last read, with the data_version and total_changes it was read at (see readingVersionOf). */
  seenReading?: { dataVersion: number; totalChanges: number; version: number };
}

const controls = new WeakMap<Database.Database, Control>();
/** The open connections of this process that controls were made for (each Store's: see sqliteBookkeeping). */
const connections = new Set<Database.Database>();
/** Connections inside a readSnapshot call (their `inTransaction` is ours, not a writer's). */
const inSnapshot = new WeakSet<Database.Database>();

function controlOf(sqlite: Database.Database): Control {
  let c = controls.get(sqlite);
  if (!c) {
    c = {
      begin: sqlite.prepare('BEGIN'),
      commit: sqlite.prepare('COMMIT'),
      rollback: sqlite.prepare('ROLLBACK'),
      dataVersion: sqlite.prepare('PRAGMA data_version').pluck(),
      totalChanges: sqlite.prepare('SELECT total_changes()').pluck(),
    };
    controls.set(sqlite, c);
    connections.add(sqlite);
  }
  return c;
}

function openSnapshot(sqlite: Database.Database): Control {
  const c = controlOf(sqlite);
  c.begin.run();
  inSnapshot.add(sqlite);
  return c;
}

/** Commits the read transaction when the reads completed, else rolls it back (SQLite may have ended it already). */
function closeSnapshot(sqlite: Database.Database, c: Control, completed: boolean): void {
  try {
    if (completed && sqlite.inTransaction) c.commit.run();
  } finally {
    if (sqlite.inTransaction) c.rollback.run();
    inSnapshot.delete(sqlite);
  }
}

/** Ends of the asynchronous snapshots open on a connection, for a writer that must wait for them. */
const snapshotEnds = new WeakMap<Database.Database, Promise<void>>();

/**
 * Runs reads in one read transaction: they see one consistent state, and in WAL mode they take the shared-memory read
 * lock once instead of once per statement (taking and dropping it is most of the cost of a small query). Inside a
 * transaction already open on the connection, `read` simply runs in it. The connection is not locked meanwhile: other
 * reads of this process run inside the same read transaction (one consistent state, which is all they ask), and a
 * write transaction waits for it to end (`snapshotsEnded`) before it begins.
 */
export async function readSnapshot<T>(sqlite: Database.Database, read: () => Promise<T> | T): Promise<T> {
  if (sqlite.inTransaction) return read();
  const c = openSnapshot(sqlite);
  let ended!: () => void;
  snapshotEnds.set(sqlite, new Promise<void>((resolve) => (ended = resolve)));
  let done = false;
  try {
    const out = await read();
    done = true;
    return out;
  } finally {
    closeSnapshot(sqlite, c, done);
    snapshotEnds.delete(sqlite);
    ended();
  }
}

/** Resolves once no asynchronous read snapshot is open on the connection. */
export async function snapshotsEnded(sqlite: Database.Database): Promise<void> {
  for (let end = snapshotEnds.get(sqlite); end; end = snapshotEnds.get(sqlite)) await end;
}

/**
 * Identifies the catalog's content as this connection sees it: `dataVersion` changes when another connection (the
 * CLI, another process) commits, `changes` whenever this connection writes a row (including writes later rolled
 * back, so it can only over-report a change).
 */
export interface Generation {
  dataVersion: number;
  changes: number;
  /** Also the reading state's generation, for values that show or filter by it (reading-state.ts `readingAware`). */
  reading?: Generation;
}

/** Rows this connection changed through its bookkeeping statements (Store.bookkeeping): not changes of the catalog. */
const bookkeepingChanges = new WeakMap<Database.Database, number>();
/** Rows this connection changed through Store.readingState: counted in its reading generation, not the catalog's. */
const readingChanges = new WeakMap<Database.Database, number>();

/** Runs one statement and adds the rows it changed (triggers' included) to `tally`'s count for the connection. */
function countedIn<T>(tally: WeakMap<Database.Database, number>, sqlite: Database.Database, statement: () => T): T {
  const c = controlOf(sqlite);
  const before = c.totalChanges.get() as number;
  try {
    return statement();
  } finally {
    const changed = (c.totalChanges.get() as number) - before;
    if (changed > 0) tally.set(sqlite, (tally.get(sqlite) ?? 0) + changed);
  }
}

/** Counts event-loop turns, for the data_version read once per turn. */
let turn = 0;
let turnEnding = false;

/**
 * The turn now. The immediate that ends it is kept referenced: an unreferenced one lets an idle loop block in its poll
 * phase, and then runs only after the next event's callbacks (a request arriving after a quiet spell), so that
 * request still counted as the old turn and was answered from the data_version read before the quiet spell: another
 * process's commit in between went unseen (and a page list it changed was rebuilt on the request after). A
 * referenced immediate makes the poll return at once; it runs once, so it keeps no process alive.
 */
function currentTurn(): number {
  if (!turnEnding) {
    turnEnding = true;
    setImmediate(() => {
      turn++;
      turnEnding = false;
    });
  }
  return turn;
}

/** Whether this process has more than one catalog connection open (closed ones are forgotten here). */
function sharedProcess(): boolean {
  if (connections.size < 2) return false;
  for (const sqlite of connections) if (!sqlite.open) connections.delete(sqlite);
  return connections.size > 1;
}

/**
 * The connection's data_version, read at most once per event-loop turn: the PRAGMA takes and drops the WAL read lock
 * (~6 µs), and a page asks for the generation dozens of times. Another process's commit is therefore seen from the
 * next turn on. This connection's own writes never move its data_version (they show in `changes`, read every time);
 * while this process has a second connection open (a restore, a copy), whose commits must show at once, it is read
 * every time.
 */
function dataVersionOf(c: Control): number {
  if (sharedProcess()) return c.dataVersion.get() as number;
  const now = currentTurn();
  if (c.seen?.turn === now) return c.seen.dataVersion;
  const dataVersion = c.dataVersion.get() as number;
  c.seen = { dataVersion, turn: now };
  return dataVersion;
}

export function catalogGeneration(sqlite: Database.Database): Generation {
  const c = controlOf(sqlite);
  return { dataVersion: dataVersionOf(c), changes: (c.totalChanges.get() as number) - (bookkeepingChanges.get(sqlite) ?? 0) - (readingChanges.get(sqlite) ?? 0) };
}

/**
 * The counter every write to a reading-state table moves (migration 052), whichever process or statement writes (a
 * catalog write that moves or deletes progress included): read again once another connection committed or this one
 * changed rows. Inside a read snapshot it is read as of the snapshot, which is as new as the data_version given or
 * newer (a value kept under it may only be dropped too soon); inside a write transaction of this process it may count
 * writes that roll back, so it is not read. Undefined when it cannot be read so (a catalog not migrated yet, a write
 * transaction open).
 */
function readingVersionOf(sqlite: Database.Database, c: Control, dataVersion: number): number | undefined {
  const totalChanges = c.totalChanges.get() as number;
  const seen = c.seenReading;
  if (seen?.dataVersion === dataVersion && seen.totalChanges === totalChanges) return seen.version;
  if (writeInFlight(sqlite)) return undefined;
  if (c.readingVersion === undefined) {
    try {
      c.readingVersion = sqlite.prepare('SELECT version FROM reading_state_version').pluck();
    } catch {
      // Not migrated yet (a catalog opened read-only): try again next time.
      return undefined;
    }
  }
  const version = c.readingVersion.get() as number | undefined;
  if (version === undefined) return undefined;
  c.seenReading = { dataVersion, totalChanges, version };
  return version;
}

/**
 * Store.readingState.generation() on SQLite: moves whenever reading state is written, by this connection or another
 * (the version migration 052 keeps), and with this connection's reading-state statements. Where that version cannot be
 * read, with those statements and any commit of another connection (data_version does not tell what was written),
 * negative so that it never equals a version.
 */
export function sqliteReadingGeneration(sqlite: Database.Database): Generation {
  const c = controlOf(sqlite);
  const dataVersion = dataVersionOf(c);
  return { dataVersion: readingVersionOf(sqlite, c, dataVersion) ?? -1 - dataVersion, changes: readingChanges.get(sqlite) ?? 0 };
}

/**
 * Runs one statement marked with a write kind (synchronously, as better-sqlite3 does) and files the rows it changed,
 * triggers' and foreign-key actions' included, under that kind. Counted as it runs: a catalog generation read at any
 * moment after it already leaves them out.
 */
export function countedAs<T>(kind: WriteKind, sqlite: Database.Database, statement: () => T): T {
  return countedIn(kind === 'reading' ? readingChanges : bookkeepingChanges, sqlite, statement);
}

/**
 * Store.bookkeeping on SQLite: the rows its statements change are left out of this connection's catalog generation.
 * Another process sharing the file still sees them as a change (SQLite's data_version counts any commit to the file).
 * The bookkeeping generation moves with this connection's bookkeeping changes and with any commit of another
 * connection (which may have been bookkeeping: data_version does not tell).
 */
export function sqliteBookkeeping(sqlite: Database.Database): { exec: SyncSqlExec; generation(): Generation; tryRun(sql: string, params?: readonly SqlValue[]): Promise<boolean> } {
  const c = controlOf(sqlite);
  const exec = sqliteExec(sqlite);
  const counted = <T>(statement: () => T): T => countedIn(bookkeepingChanges, sqlite, statement);
  return {
    exec: {
      get: (sql, params) => counted(() => exec.get(sql, params)),
      all: (sql, params) => counted(() => exec.all(sql, params)),
      run: (sql, params) => counted(() => exec.run(sql, params)),
    },
    generation: () => ({ dataVersion: dataVersionOf(c), changes: bookkeepingChanges.get(sqlite) ?? 0 }),
    tryRun: async (sql, params) => {
      // A statement now would join the transaction open on this connection (a read snapshot or another request's write).
      if (sqlite.inTransaction) return false;
      const waits = sqlite.pragma('busy_timeout', { simple: true }) as number;
      sqlite.pragma('busy_timeout = 0');
      try {
        counted(() => exec.run(sql, params));
        return true;
      } catch (error) {
        if ((error as { code?: string }).code === 'SQLITE_BUSY') return false;
        throw error;
      } finally {
        sqlite.pragma(`busy_timeout = ${waits}`);
      }
    },
  };
}

/** What a cache asks of the catalog: the Store of either engine. */
export interface GenerationSource {
  generation(): Generation;
  writeInFlight(): boolean;
}

/**
 * What to keep a value read through `reader` under: the generation its snapshot began at when it is one (see
 * ReadScope.snapshotGeneration), otherwise the store's own.
 */
export function readerSource(store: GenerationSource, reader: { snapshotGeneration?: Generation } | undefined): GenerationSource {
  const generation = reader?.snapshotGeneration;
  return generation ? { generation: () => generation, writeInFlight: () => store.writeInFlight() } : store;
}

export function sameGeneration(a: Generation, b: Generation): boolean {
  if (a.dataVersion !== b.dataVersion || a.changes !== b.changes) return false;
  if (a.reading === undefined || b.reading === undefined) return a.reading === b.reading;
  return sameGeneration(a.reading, b.reading);
}

/**
 * Whether a write transaction is open on the connection (an async one awaiting between statements): what is read now
 * may be rolled back without the generation moving again, so it must not be cached.
 */
export function writeInFlight(sqlite: Database.Database): boolean {
  return sqlite.inTransaction && !inSnapshot.has(sqlite);
}

/** Loads in progress by key, each shared by the callers asking for its key at the generation it started at. */
export class SharedLoads<K, V> {
  private readonly running = new Map<K, { generation: Generation; value: Promise<V> }>();

  share(key: K, generation: Generation, load: () => Promise<V>): Promise<V> {
    const known = this.running.get(key);
    if (known && sameGeneration(known.generation, generation)) return known.value;
    const value = load().finally(() => {
      if (this.running.get(key)?.value === value) this.running.delete(key);
    });
    this.running.set(key, { generation, value });
    return value;
  }
}

/**
 * One CatalogMemo per owner (a store, a daemon's context), made on its first use and gone with its owner: a module's
 * kept values for each catalog it serves.
 */
export function memosPerOwner<K, V>(limit: number): (owner: object) => CatalogMemo<K, V> {
  const memos = new WeakMap<object, CatalogMemo<K, V>>();
  return (owner) => {
    let memo = memos.get(owner);
    if (!memo) memos.set(owner, (memo = new CatalogMemo<K, V>(limit)));
    return memo;
  };
}

/**
 * Values derived from the catalog, each kept until anything in the catalog changes (see Generation); at most `limit`
 * keys, the least recently used dropped first.
 */
export class CatalogMemo<K, V> {
  private readonly entries = new Map<K, { generation: Generation; value: V }>();
  private readonly loads = new SharedLoads<K, V>();
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** The cached value, or undefined when there is none or the catalog changed since it was computed. */
  private fresh(key: K, generation: Generation): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (!sameGeneration(entry.generation, generation)) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Undefined values are not kept: `fresh` could not tell them from a miss. */
  private remember(key: K, generation: Generation, value: V): void {
    if (value === undefined) return;
    this.entries.set(key, { generation, value });
    if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value as K);
  }

  /** The value kept for the catalog as it is now, if any: for callers that can answer at once without a load. */
  peek(source: GenerationSource, key: K): V | undefined {
    return this.peekAt(source.generation(), key);
  }

  /** The value kept for the catalog as it was at `generation` (taken once by a caller looking up many keys). */
  peekAt(generation: Generation, key: K): V | undefined {
    return this.fresh(key, generation);
  }

  /**
   * Keeps values a caller loaded together, under `generation`, which it took from `source` before reading them (a
   * write made meanwhile then shows as a change); nothing while a write of this process is open (it may roll back).
   */
  keepAll(source: GenerationSource, generation: Generation, entries: Iterable<readonly [K, V]>): void {
    if (source.writeInFlight()) return;
    for (const [key, value] of entries) this.remember(key, generation, value);
  }

  get(source: GenerationSource, key: K, compute: () => V): V {
    const generation = source.generation();
    const cached = this.fresh(key, generation);
    if (cached !== undefined) return cached;
    const value = compute();
    if (!source.writeInFlight()) this.remember(key, generation, value);
    return value;
  }

  /**
   * For values loaded through Kysely, which waits for a write transaction in flight to end before it reads (so what
   * it reads is committed), or through Store.readAside. The generation is taken first: a write made while loading
   * shows as a change next time. Callers asking for a key while it loads at the same generation share that load (a
   * load read aside takes tens of ms, and every request of a busy feed would otherwise start its own).
   */
  async getAsync(source: GenerationSource, key: K, compute: () => Promise<V>): Promise<V> {
    const generation = source.generation();
    const cached = this.fresh(key, generation);
    if (cached !== undefined) return cached;
    return this.loads.share(key, generation, async () => {
      const value = await compute();
      this.remember(key, generation, value);
      return value;
    });
  }
}
