// Opening the catalog: one SQLite file in the data directory, shared by the CLI and the daemon.
import Database from 'better-sqlite3';
import { Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import { dirname } from 'node:path';
import type { DB } from './db-types.ts';
import { prepareCatalogFile, prepareDataDir, tightenCatalogFiles } from './file-modes.ts';
import { migrationProvider } from './migrations/index.ts';
import { ConcurrentSqliteDialect } from './sqlite-dialect.ts';

export type Db = Kysely<DB>;

export interface Store {
  db: Db;
  /** The raw better-sqlite3 handle, for the few places that need synchronous bulk work. */
  sqlite: Database.Database;
  path: string;
  close(): Promise<void>;
}

export class StoreError extends Error {
  override name = 'StoreError';
}

export interface OpenStoreOptions {
  /** How long a writer waits for another process's write lock before failing (ms). */
  busyTimeoutMs?: number;
  readonly?: boolean;
}

export async function openStore(path: string, options: OpenStoreOptions = {}): Promise<Store> {
  let sqlite: Database.Database;
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
    sqlite.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 15_000}`);
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
  return {
    db,
    sqlite,
    path,
    close: async () => {
      await db.destroy();
    },
  };
}

/** Applies pending migrations in one transaction; on failure the previous schema stays as it was. */
async function migrate(db: Db, path: string): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider, migrationTableName: 'bindery_migration', migrationLockTableName: 'bindery_migration_lock' });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    await db.destroy();
    throw new StoreError(`migration ${failed} failed on ${path}; the catalog was left unchanged: ${(error as Error).message}`, { cause: error });
  }
}
