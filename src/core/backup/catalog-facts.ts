// What the SQLite catalog file inside a backup holds (row counts, schema version) and whether SQLite finds it whole.
// This file is always SQLite, whichever engine the catalog it was copied from runs on.
import Database from 'better-sqlite3';

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
