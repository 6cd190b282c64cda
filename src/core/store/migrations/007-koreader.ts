// KOReader sync: the per-user sync account (Grimmory's koreader_user) and positions pushed for documents that match
// no book the user can see (kept per user, as KOReader's own sync server keeps every document it is sent).
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('koreader_user')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('username', 'text', (c) => c.notNull().unique())
    // Kept readable because Grimmory's settings page shows it back (GET /api/v1/koreader-users/me).
    .addColumn('password', 'text', (c) => c.notNull())
    // Lowercase hex MD5 of the password: what KOReader sends as x-auth-key.
    .addColumn('password_md5', 'text', (c) => c.notNull())
    .addColumn('sync_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    // JSON `syncWithWebReader`.
    .addColumn('sync_with_booklore_reader', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('booklore_user_id', 'integer', (c) => c.unique().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'text', (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable('koreader_document_progress')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('progress', 'text', (c) => c.notNull())
    .addColumn('percentage', 'real', (c) => c.notNull())
    .addColumn('device', 'text', (c) => c.notNull())
    .addColumn('device_id', 'text')
    .addColumn('synced_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('koreader_document_progress_unique', ['user_id', 'document'])
    .execute();
}
