// OPDS account names are unique regardless of letter case (readers often capitalise the first letter). On SQLite the
// column's own collation (NOCASE, migration 009) already says so; a PostgreSQL column has no such collation, so there
// the uniqueness is an index on the name as lower() folds it (ASCII letters, as NOCASE), which sign-ins look up through.
import { sql, type Kysely } from 'kysely';
import { engineOf } from '../engine.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (engineOf(db) !== 'postgres') return;
  await db.schema.createIndex('opds_user_v2_username_lower_idx').unique().on('opds_user_v2').expression(sql`lower(username)`).execute();
}
