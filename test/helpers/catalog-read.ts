// Reading a catalog from a test the way another process would see it: through a store of its own, so on either
// engine (the suite maps catalog paths to PostgreSQL databases on its PostgreSQL run).
import type { SqlValue } from '../../src/core/store/sql-exec.ts';
import { openStore } from '../../src/core/store/store.ts';

export async function readRows<T>(catalog: string, sql: string, ...params: SqlValue[]): Promise<T[]> {
  const store = await openStore(catalog);
  try {
    return (await store.exec.all(sql, params)) as T[];
  } finally {
    await store.close();
  }
}

/** Every table's rows in primary-key order, for before/after comparisons. */
export { catalogRows as catalogSnapshot } from './catalog-rows.ts';
