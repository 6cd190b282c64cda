// Which catalog engine this run of the suite uses: scripts/test runs it once on SQLite and once on PostgreSQL
// (BINDERY_TEST_DATABASE_SERVER gives every catalog path a database of its own there).
export const onPostgres = Boolean(process.env.BINDERY_TEST_DATABASE_SERVER);

let databases = 0;

async function onTestServer(statement: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: process.env.BINDERY_TEST_DATABASE_SERVER });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A new, empty database (no tables: Bindery migrates it when it opens it) on the PostgreSQL test server. */
export async function emptyTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `empty_${process.pid}_${Date.now()}_${databases++}`;
  await onTestServer(`CREATE DATABASE ${name}`);
  const url = new URL(process.env.BINDERY_TEST_DATABASE_SERVER as string);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => onTestServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
