// Kobo sync: each user's Kobo settings and device token, the snapshots of what was synced (a sync session pages
// through one snapshot and the next session diffs against it), the books a session already reported removed, and the
// reading states devices send. Every sync page reads these by index: a 10,000-book shelf is never loaded whole per page.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('kobo_user_settings')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('user_id', 'integer', (c) => c.notNull().unique().references('users.id').onDelete('cascade'))
    // The device's store URL carries it: /api/kobo/<token>.
    .addColumn('token', 'text', (c) => c.notNull().unique())
    .addColumn('sync_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('progress_mark_as_reading_threshold', 'real', (c) => c.defaultTo(1))
    .addColumn('progress_mark_as_finished_threshold', 'real', (c) => c.defaultTo(99))
    .addColumn('auto_add_to_shelf', 'integer', (c) => c.notNull().defaultTo(0))
    // Books with a larger id were added after this point and are shelved automatically while auto-add is on.
    .addColumn('auto_add_after_book_id', 'integer')
    .addColumn('hardcover_api_key', 'text')
    .addColumn('hardcover_sync_enabled', 'integer', (c) => c.defaultTo(0))
    .addColumn('two_way_progress_sync', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now))
    .execute();

  await db.schema
    .createTable('kobo_library_snapshot')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_date', 'text', (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex('kobo_library_snapshot_user_idx').on('kobo_library_snapshot').columns(['user_id', 'created_date']).execute();

  await db.schema
    .createTable('kobo_library_snapshot_book')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('snapshot_id', 'text', (c) => c.notNull().references('kobo_library_snapshot.id').onDelete('cascade'))
    .addColumn('book_id', 'integer', (c) => c.notNull())
    .addColumn('synced', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('file_hash', 'text')
    .addColumn('metadata_updated_at', 'text')
    // A new cover is a change the device should see too (its CoverImageId changes).
    .addColumn('cover_hash', 'text')
    .execute();
  // Membership probes (is this book in the other snapshot?) and removal by snapshot.
  await db.schema.createIndex('kobo_snapshot_book_unique').on('kobo_library_snapshot_book').columns(['snapshot_id', 'book_id']).unique().execute();
  // A page: the next unsynced books of a snapshot in id order.
  await db.schema.createIndex('kobo_snapshot_book_unsynced_idx').on('kobo_library_snapshot_book').columns(['snapshot_id', 'synced', 'book_id']).execute();

  await db.schema
    .createTable('kobo_removed_books_tracking')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('snapshot_id', 'text', (c) => c.notNull().references('kobo_library_snapshot.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('book_id_synced', 'integer', (c) => c.notNull())
    .addUniqueConstraint('kobo_removed_books_unique', ['snapshot_id', 'user_id', 'book_id_synced'])
    .execute();

  await db.schema
    .createTable('kobo_reading_state')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    // The book id as the device names it.
    .addColumn('entitlement_id', 'text', (c) => c.notNull())
    .addColumn('created', 'text')
    .addColumn('last_modified', 'text')
    .addColumn('priority_timestamp', 'text')
    .addColumn('current_bookmark_json', 'text')
    .addColumn('statistics_json', 'text')
    .addColumn('status_info_json', 'text')
    .addColumn('last_modified_string', 'text')
    .addUniqueConstraint('kobo_reading_state_user_entitlement_unique', ['user_id', 'entitlement_id'])
    .execute();

  // Kobo asks for covers by their token (`BL-…`).
  await db.schema.createIndex('book_cover_hash_idx').ifNotExists().on('book').column('book_cover_hash').execute();
}
