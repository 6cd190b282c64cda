// A consistent copy of the whole catalog as one SQLite file, whichever engine holds it: what a backup archive carries.
// An embedded catalog is copied page by page with SQLite's online backup API, from a dedicated connection holding one
// read transaction (every step sees the same state while the daemon or another process keeps writing, the copy never
// restarts, and it proceeds in steps so a shared event loop stays responsive). A catalog on PostgreSQL is copied table
// by table through the stores, in one snapshot, with the same code and checks as `bindery db copy`.
import Database from 'better-sqlite3';
import { copyCatalog } from './catalog-copy.ts';
import { embeddedCatalogFile, openSqliteFile, openStore } from './store.ts';

const PAGES_PER_STEP = 2048;

export interface SnapshotProgress {
  /** Pages (embedded catalog) or rows (database server) copied so far, of `total`. */
  done: number;
  total: number;
}

async function backupSqliteFile(catalogPath: string, destPath: string, onProgress?: (p: SnapshotProgress) => void): Promise<void> {
  const source = new Database(catalogPath, { readonly: true, fileMustExist: true });
  try {
    source.pragma('busy_timeout = 15000');
    source.prepare('BEGIN').run();
    // The first read starts the transaction: the snapshot is the catalog as of this statement.
    source.prepare('SELECT count(*) FROM sqlite_master').get();
    await source.backup(destPath, {
      progress: ({ totalPages, remainingPages }) => {
        onProgress?.({ total: totalPages, done: totalPages - remainingPages });
        return PAGES_PER_STEP;
      },
    });
    source.prepare('COMMIT').run();
  } finally {
    source.close();
  }
}

async function copyServerCatalog(location: string, destPath: string, onProgress?: (p: SnapshotProgress) => void): Promise<void> {
  const source = await openStore(location, { poolSize: 2 });
  try {
    const target = await openSqliteFile(destPath);
    try {
      await copyCatalog(source, target, { onProgress: (p) => p.phase === 'copying' && onProgress?.({ done: p.done, total: p.total }) });
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/** Writes the catalog at `location` (a SQLite file or a postgres:// URL) into the new SQLite file `destPath`. */
export async function snapshotCatalog(location: string, destPath: string, onProgress?: (p: SnapshotProgress) => void): Promise<void> {
  const file = embeddedCatalogFile(location);
  if (file) await backupSqliteFile(file, destPath, onProgress);
  else await copyServerCatalog(location, destPath, onProgress);
  // A self-contained file: rollback-journal mode, so the copy carries no -wal beside it.
  const copy = new Database(destPath);
  try {
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
}
