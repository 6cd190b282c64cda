// Hardcover progress pushes waiting to go out: whichever server process receives a progress change writes it here,
// and the process holding the hardcover-push lease sends it (see src/core/hardcover/push-queue.ts). One row per user
// and book: a newer change replaces the percent of one not yet sent. A row leaves only once it is sent, or given up.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('hardcover_push')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('book_id', 'integer', (c) => c.notNull().references('book.id').onDelete('cascade'))
    .addColumn('percent', 'real', (c) => c.notNull())
    // When the change was received (ISO 8601): the date of a read started or finished by it.
    .addColumn('changed_at', 'text', (c) => c.notNull())
    // Raised by every change: a push removes the row only if no newer change came in meanwhile.
    .addColumn('revision', 'integer', (c) => c.notNull())
    // Failed tries of this change, and when to try next (epoch ms).
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('due_at_ms', 'integer', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addPrimaryKeyConstraint('hardcover_push_pk', ['user_id', 'book_id'])
    .execute();
  await db.schema.createIndex('hardcover_push_due_idx').on('hardcover_push').column('due_at_ms').execute();
  await db.schema.createIndex('hardcover_push_book_idx').on('hardcover_push').column('book_id').execute();
}
