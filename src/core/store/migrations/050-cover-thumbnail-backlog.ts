// Thumbnails a scan left to be made: a scan stores each book's cover as it found it and makes the thumbnails after
// (bindery serve's backlog job, or the first request for one). A row per (book, cover kind) whose thumbnail is still
// to be made, so nothing is forgotten across a restart; gone with its book.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('cover_thumbnail_pending')
    .addColumn('book_id', 'integer', (c) => c.notNull().references('book.id').onDelete('cascade'))
    // 'book' or 'audiobook', as the cover files are named.
    .addColumn('kind', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('cover_thumbnail_pending_pk', ['book_id', 'kind'])
    .execute();
}
