// Which catalog engine this run of the suite uses: scripts/test runs it once on SQLite and once on PostgreSQL
// (BINDERY_TEST_DATABASE_SERVER gives every catalog path a database of its own there).
export const onPostgres = Boolean(process.env.BINDERY_TEST_DATABASE_SERVER);
