// The audit log: who did what, to which entity, from where. Rows name the user by id and by name at the time, with no
// foreign key: the trail of a deleted user (or of a failed sign-in under a name that never existed) stays readable.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('user_id', 'integer')
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('entity_type', 'text')
    .addColumn('entity_id', 'integer')
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('ip_address', 'text')
    .addColumn('country_code', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now))
    .execute();
  // The page is newest first, filtered by any of these; retention deletes by age.
  await db.schema.createIndex('audit_log_created_idx').on('audit_log').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('audit_log_user_idx').on('audit_log').columns(['user_id', 'created_at']).execute();
  await db.schema.createIndex('audit_log_action_idx').on('audit_log').columns(['action', 'created_at']).execute();
  await db.schema.createIndex('audit_log_username_idx').on('audit_log').columns(['username', 'created_at']).execute();
}
