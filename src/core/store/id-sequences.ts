// Rows copied in with their ids (imports, restores, `db copy`) leave PostgreSQL's identity sequences behind: the next
// insert would take an id already used. SQLite picks max(rowid)+1 by itself, so there it is nothing to do.
import { sql, type Kysely } from 'kysely';
import { engineOf } from './engine.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema, or a transaction of it
export async function syncIdSequences(db: Kysely<any>): Promise<void> {
  if (engineOf(db) !== 'postgres') return;
  const columns = await sql<{ table_name: string; column_name: string }>`
    select table_name, column_name from information_schema.columns
     where table_schema = current_schema() and is_identity = 'YES'`.execute(db);
  for (const { table_name: table, column_name: column } of columns.rows) {
    await sql`select setval(pg_get_serial_sequence(${table}, ${column}), coalesce((select max(${sql.ref(column)}) from ${sql.table(table)}), 0) + 1, false)`.execute(db);
  }
}

/** The same for one table, before it takes a numbered insert after rows were copied in with their ids. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any schema, or a transaction of it
export async function syncIdSequence(db: Kysely<any>, table: string, column = 'id'): Promise<void> {
  if (engineOf(db) !== 'postgres') return;
  await sql`select setval(seq, coalesce((select max(${sql.ref(column)}) from ${sql.table(table)}), 0) + 1, false)
              from (select pg_get_serial_sequence(${table}, ${column}) as seq) s where seq is not null`.execute(db);
}
