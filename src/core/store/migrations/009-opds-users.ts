// OPDS: the catalog accounts readers sign in with over HTTP Basic (Grimmory's opds_user_v2), each owned by a main user
// whose libraries and restrictions its feeds show; plus indexes the feeds' orders and series listing page through.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('opds_user_v2')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // Unique regardless of letter case, as under Grimmory's database collation (readers often capitalise the first letter).
    .addColumn('username', 'text', (c) => c.notNull().modifyEnd(sql`COLLATE NOCASE`).unique())
    // bcrypt, so accounts carry over from Grimmory unchanged.
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('sort_order', 'text', (c) => c.notNull().defaultTo('RECENT'))
    .addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'text', (c) => c.notNull().defaultTo(now))
    .execute();
  await db.schema.createIndex('opds_user_v2_user_idx').on('opds_user_v2').column('user_id').execute();

  // "Recently added" is the default order of every acquisition feed (newest first, by id among equals). The index
  // also holds every column the feeds filter books on, so a page deep in a large catalog, and the count of what a
  // reader may see, are read from the index alone.
  await db.schema.createIndex('book_opds_recent_idx').ifNotExists().on('book').columns(['added_on', 'id', 'deleted', 'is_physical', 'library_id']).execute();
  // Series are matched and listed regardless of letter case (a series feed, the series navigation a page at a time).
  await db.schema.createIndex('book_metadata_series_nocase_idx').ifNotExists().on('book_metadata').expression(sql`series_name collate nocase`).execute();
}
