// Paged book lists (`/api/v1/books/page`) sorted by title walk this index instead of sorting every book. Sorting by
// id, `addedOn` (book_added_on_idx) and a library's books in id order (book_library_idx holds the rowid) already had
// theirs.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The collation must match the ORDER BY (book-page.ts sorts text columns COLLATE NOCASE).
  await db.schema.createIndex('book_metadata_title_nocase_idx').on('book_metadata').expression(sql`title COLLATE NOCASE`).execute();
}
