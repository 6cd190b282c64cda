// Which catalog engine this run of the suite uses: scripts/test runs it once on SQLite and once on PostgreSQL
// (BINDERY_TEST_DATABASE_SERVER gives every catalog path a database of its own there).
export const onPostgres = Boolean(process.env.BINDERY_TEST_DATABASE_SERVER);

/**
 * After a test copied a data directory (catalog file included) to another place: on PostgreSQL the catalog is a
 * database, copied here too (the source must have no open connections). On SQLite the file copy was the catalog copy.
 */
export async function copyCatalog(fromCatalogPath: string, toCatalogPath: string): Promise<void> {
  const server = process.env.BINDERY_TEST_DATABASE_SERVER;
  if (!server) return;
  const { testDatabaseName } = await import('../../src/core/store/test-databases.ts');
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${testDatabaseName(toCatalogPath)} TEMPLATE ${testDatabaseName(fromCatalogPath)} STRATEGY file_copy`);
  } finally {
    await client.end();
  }
}
