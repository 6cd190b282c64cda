// Public reviews fetched from metadata providers (Grimmory's public_book_review): a few per provider per book,
// replaced when they are refreshed, gone with the book.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('public_book_review')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('metadata_provider', 'text', (c) => c.notNull())
    .addColumn('book_id', 'integer', (c) => c.notNull().references('book_metadata.book_id').onDelete('cascade'))
    .addColumn('reviewer_name', 'text')
    .addColumn('title', 'text')
    .addColumn('rating', 'real')
    // An ISO-8601 instant (UTC, "Z").
    .addColumn('date', 'text')
    .addColumn('body', 'text')
    .addColumn('country', 'text')
    .addColumn('spoiler', 'integer')
    .addColumn('followers_count', 'integer')
    .addColumn('text_reviews_count', 'integer')
    .execute();
  await db.schema.createIndex('public_book_review_book_idx').on('public_book_review').columns(['book_id', 'metadata_provider']).execute();
}
