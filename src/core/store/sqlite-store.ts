// The embedded engine: one SQLite file in WAL mode, shared by the CLI, the daemon and its workers.
import Database from 'better-sqlite3';
import { Kysely } from 'kysely';
import { dirname } from 'node:path';
import type { DB } from './db-types.ts';
import { dialectOf } from './dialect.ts';
import { prepareCatalogFile, prepareDataDir, tightenCatalogFiles } from './file-modes.ts';
import { sqliteLeases } from './leases.ts';
import { localLiveness } from './liveness.ts';
import { migrate } from './migrate.ts';
import { registerReadAside, sqliteReadAside, type ReadAside } from './read-aside.ts';
import { catalogGeneration, readSnapshot, sqliteBookkeeping, sqliteReadingGeneration, writeInFlight } from './snapshot.ts';
import { ConcurrentSqliteDialect } from './sqlite-dialect.ts';
import { kyselyExec, sqliteExec, type SqlValue } from './sql-exec.ts';
import { markWriteKind, WriteKindPlugin } from './write-kinds.ts';
import { StoreError, type OpenStoreOptions, type Store } from './store.ts';

export async function openSqliteStore(path: string, options: OpenStoreOptions = {}): Promise<Store> {
  let sqlite: Database.Database;
  const busyTimeoutMs = options.busyTimeoutMs ?? 15_000;
  try {
    if (path !== ':memory:') {
      prepareDataDir(dirname(path));
      if (!options.readonly) prepareCatalogFile(path);
    }
    sqlite = new Database(path, { readonly: options.readonly ?? false });
  } catch (error) {
    throw new StoreError(`cannot open the catalog at ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    sqlite.pragma(`busy_timeout = ${busyTimeoutMs}`);
    if (!options.readonly) sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('cache_size = -16000');
    sqlite.pragma('temp_store = MEMORY');
    // -wal and -shm exist now; ones left by an older version may be looser than the catalog.
    if (path !== ':memory:' && !options.readonly) tightenCatalogFiles(path);
  } catch (error) {
    sqlite.close();
    throw new StoreError(`cannot use the catalog at ${path}: ${(error as Error).message}`, { cause: error });
  }

  const db = new Kysely<DB>({ dialect: new ConcurrentSqliteDialect(sqlite) });
  if (!options.readonly) await migrate(db, path);
  const exec = sqliteExec(sqlite);
  // An in-memory catalog has no file a second connection could open: it is read on its own connection.
  // (There the statement also sees a write transaction of this process still open.)
  const aside: ReadAside =
    path === ':memory:'
      ? { read: async (sql: string, params?: readonly SqlValue[]) => exec.all(sql, params), threads: () => 0, close: async () => undefined }
      : sqliteReadAside(path, { busyTimeoutMs, idleMs: options.readAsideIdleMs });
  const readingDb = db.withPlugin(new WriteKindPlugin('reading'));
  const write: Store['write'] = (writer) => db.transaction().execute((trx) => writer({ db: trx, exec }));
  return registerReadAside<Store>({
    db,
    engine: 'sqlite',
    dialect: dialectOf('sqlite'),
    sqlite,
    path,
    exec,
    readAside: (sql, params) => aside.read(sql, params),
    read: (reader) => {
      const generation = catalogGeneration(sqlite);
      const readingGeneration = sqliteReadingGeneration(sqlite);
      return readSnapshot(sqlite, () => reader({ db, exec, snapshotGeneration: generation, snapshotReadingGeneration: readingGeneration }));
    },
    write,
    generation: () => catalogGeneration(sqlite),
    bookkeeping: { ...sqliteBookkeeping(sqlite), db: db.withPlugin(new WriteKindPlugin('bookkeeping')) },
    readingState: { db: readingDb, exec: kyselyExec(readingDb, undefined, markWriteKind('reading')), generation: () => sqliteReadingGeneration(sqlite) },
    writeInFlight: () => writeInFlight(sqlite),
    leases: (instance) => sqliteLeases({ exec, write }, instance),
    liveness: localLiveness,
    close: async () => {
      await aside.close();
      await db.destroy();
    },
  }, aside);
}
