// Reading a catalog file from a test, read-only, the way another process would see it.
import Database from 'better-sqlite3';

export function readRows<T>(catalog: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(catalog, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** Every table's rows in primary-key order, for before/after comparisons. */
export function catalogSnapshot(catalog: string): Record<string, unknown[]> {
  const tables = readRows<{ name: string }>(catalog, "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'bindery_migration%' order by name");
  return Object.fromEntries(tables.map(({ name }) => [name, readRows(catalog, `select * from ${name} order by 1`)]));
}
