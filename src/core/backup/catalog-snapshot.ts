// A consistent copy of a live catalog with SQLite's online backup API. The copy is taken from a dedicated connection
// holding one read transaction, so every step sees the same state although the daemon (or any other process) keeps
// writing, and the backup never restarts; the copy proceeds in steps so an event loop it shares stays responsive.
import Database from 'better-sqlite3';

const PAGES_PER_STEP = 2048;

export interface SnapshotProgress {
  totalPages: number;
  copiedPages: number;
}

export async function snapshotCatalog(catalogPath: string, destPath: string, onProgress?: (p: SnapshotProgress) => void): Promise<void> {
  const source = new Database(catalogPath, { readonly: true, fileMustExist: true });
  try {
    source.pragma('busy_timeout = 15000');
    source.prepare('BEGIN').run();
    // The first read starts the transaction: the snapshot is the catalog as of this statement.
    source.prepare('SELECT count(*) FROM sqlite_master').get();
    await source.backup(destPath, {
      progress: ({ totalPages, remainingPages }) => {
        onProgress?.({ totalPages, copiedPages: totalPages - remainingPages });
        return PAGES_PER_STEP;
      },
    });
    source.prepare('COMMIT').run();
  } finally {
    source.close();
  }
  // A self-contained file: rollback-journal mode, so the copy carries no -wal beside it.
  const copy = new Database(destPath);
  try {
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
}

export interface CatalogFacts {
  schema: string;
  tables: Record<string, number>;
}

/** Row counts of every table and the newest migration of a catalog file. */
export function catalogFacts(path: string): CatalogFacts {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
    const tables: Record<string, number> = {};
    for (const name of names) tables[name] = db.prepare(`SELECT count(*) FROM "${name.replaceAll('"', '""')}"`).pluck().get() as number;
    const schema = names.includes('bindery_migration') ? ((db.prepare('SELECT max(name) FROM bindery_migration').pluck().get() as string | null) ?? '') : '';
    return { schema, tables };
  } finally {
    db.close();
  }
}

/** `PRAGMA integrity_check`: 'ok' or the problems SQLite found (the first ten). */
export function integrityCheck(path: string): string {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const rows = db.pragma('integrity_check(10)', { simple: false }) as { integrity_check: string }[];
    return rows.map((row) => row.integrity_check).join('; ');
  } catch (error) {
    return (error as Error).message;
  } finally {
    db.close();
  }
}
