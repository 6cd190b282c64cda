// Every table's rows of a catalog in primary-key order, read through the store so on either engine: the state two
// catalogs (a source and its copy, a catalog and its restore) are compared by.
import { catalogTables, DERIVED_TABLES, MIGRATION_TABLES, quoteName, tableFacts } from '../../src/core/store/schema-facts.ts';
import type { SqlRow } from '../../src/core/store/sql-exec.ts';
import { openSqliteFile, openStore, type Store } from '../../src/core/store/store.ts';

export async function storeRows(store: Store): Promise<Record<string, SqlRow[]>> {
  return store.read(async ({ exec }) => {
    const out: Record<string, SqlRow[]> = {};
    for (const table of await catalogTables(exec, store.dialect)) {
      // What the catalog's own triggers derive (the Komga series log and figures, SQLite's reading version) is left
      // out of a copy, and a SQLite-only table has no counterpart on PostgreSQL to compare with.
      if (MIGRATION_TABLES.includes(table) || DERIVED_TABLES.includes(table)) continue;
      const facts = await tableFacts(exec, store.dialect, table);
      const columns = (facts?.columns ?? []).map((c) => quoteName(c.name)).join(', ');
      out[table] = await exec.all(`select ${columns} from ${quoteName(table)} order by ${(facts?.primaryKey ?? []).map(quoteName).join(', ')}`);
    }
    return out;
  });
}

async function rowsOf(opening: Promise<Store>): Promise<Record<string, SqlRow[]>> {
  const store = await opening;
  try {
    return await storeRows(store);
  } finally {
    await store.close();
  }
}

/** `location`: a catalog path as the suite opens it (either engine), or a postgres:// URL. */
export const catalogRows = (location: string): Promise<Record<string, SqlRow[]>> => rowsOf(openStore(location));

/** A SQLite file as such (a copy written by `db copy --to FILE`), whatever engine the suite runs on. */
export const sqliteFileRows = (path: string): Promise<Record<string, SqlRow[]>> => rowsOf(openSqliteFile(path));
