// The Readium locator a Komga EPUB reader last sent (`PUT …/progression`), kept beside the user's Bindery progress so
// the reader reopens at the exact spot; the progress itself (percent, chapter, status) goes to user_book_progress where
// every other client reads it.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('komga_progression')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('book_id', 'integer', (c) => c.notNull().references('book.id').onDelete('cascade'))
    .addColumn('locator', 'text', (c) => c.notNull())
    .addColumn('device_id', 'text', (c) => c.notNull())
    .addColumn('device_name', 'text', (c) => c.notNull())
    // When the client says the position was reached, and when the server stored it.
    .addColumn('modified', 'text', (c) => c.notNull())
    .addColumn('recorded_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('komga_progression_pk', ['user_id', 'book_id'])
    .execute();
}
