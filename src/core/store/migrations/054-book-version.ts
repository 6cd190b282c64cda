// A version number per book that moves, in the writing transaction and whichever process writes, with every write to
// what a book's listing entry is built from: the book row, its metadata, its book files, its authors, categories, tags
// and moods (their mappings and their names) and its library's format priority. A reader that keeps a book's entry built
// from those rows (src/core/books/book-versions.ts) reads the versions of a page's books first and builds again only
// the books whose version moved, however much else of the catalog changed.
//
// A row is never deleted, not even with its book: SQLite may give a deleted book's id to the next book, whose entry
// must not pass for the old one's. A book without a row has version 0.
//
// On PostgreSQL a write to any of a book's rows now also locks the book's version row until it commits. Two
// transactions writing the same book serialize on it (they mostly did already, on the book's own rows); ones writing
// different books never meet. Moving many books at once (a rename, a format priority) takes their rows in id order.
import type { Kysely } from 'kysely';
import { createTriggers, type TriggerSpec } from './044-komga-series-summary.ts';

const UPSERT = 'ON CONFLICT (book_id) DO UPDATE SET version = book_version.version + 1';

/** One book (by id expression) moves to its next version. */
const bump = (bookId: string): string => `INSERT INTO book_version (book_id, version) VALUES (${bookId}, 1) ${UPSERT}`;

/**
 * Every book of `from … where` (a `book_id` column per row) moves to its next version. Distinct (PostgreSQL refuses
 * to update one row twice in a statement), and in id order: two writers that both move many books lock their
 * version rows in the same order.
 */
const bumpAll = (from: string, where: string, bookId = 'x.book_id'): string =>
  `INSERT INTO book_version (book_id, version) SELECT DISTINCT ${bookId}, 1 FROM ${from} WHERE ${where} ORDER BY 1 ${UPSERT}`;

/** A trigger of this migration, with the ids of the books whose versions it moves when it writes one of their other rows. */
export interface VersionTrigger extends TriggerSpec {
  /** SQL giving those ids (a list or a subquery); absent for the book's own row and the library's. */
  books?: string;
}

const TRIGGERS: VersionTrigger[] = [
  // Inserted too: a new book that takes a deleted book's id must not show that book's entry.
  { table: 'book', event: 'insert', when: 'AFTER INSERT', statements: [bump('NEW.id')] },
  // Only the book columns a listing shows: the scanner and the mover update others (paths, scan times) all the time.
  { table: 'book', event: 'update', when: 'AFTER UPDATE OF id, library_id, added_on, metadata_match_score, is_physical', statements: [bump('NEW.id'), `INSERT INTO book_version (book_id, version) SELECT OLD.id, 1 WHERE OLD.id <> NEW.id ${UPSERT}`] },
  { table: 'book', event: 'delete', when: 'AFTER DELETE', statements: [bump('OLD.id')] },
  // Library settings an entry shows: the format priority that picks a book's primary file.
  { table: 'library', event: 'priority', when: 'AFTER UPDATE OF format_priority', statements: [bumpAll('book b', 'b.library_id = NEW.id', 'b.id')] },
];
for (const table of ['book_metadata', 'book_file', 'book_metadata_author_mapping', 'book_metadata_category_mapping', 'book_metadata_tag_mapping', 'book_metadata_mood_mapping']) {
  TRIGGERS.push(
    { table, event: 'insert', when: 'AFTER INSERT', books: 'NEW.book_id', statements: [bump('NEW.book_id')] },
    // A row moved to another book changes both.
    { table, event: 'update', when: 'AFTER UPDATE', books: 'NEW.book_id, OLD.book_id', statements: [bump('NEW.book_id'), `INSERT INTO book_version (book_id, version) SELECT OLD.book_id, 1 WHERE OLD.book_id <> NEW.book_id ${UPSERT}`] },
    { table, event: 'delete', when: 'AFTER DELETE', books: 'OLD.book_id', statements: [bump('OLD.book_id')] },
  );
}
for (const [table, mapping, key] of [
  ['author', 'book_metadata_author_mapping', 'author_id'],
  ['category', 'book_metadata_category_mapping', 'category_id'],
  ['tag', 'book_metadata_tag_mapping', 'tag_id'],
  ['mood', 'book_metadata_mood_mapping', 'mood_id'],
] as const) {
  TRIGGERS.push({ table, event: 'rename', when: 'AFTER UPDATE OF name', books: `SELECT x.book_id FROM ${mapping} x WHERE x.${key} = NEW.id`, statements: [bumpAll(`${mapping} x`, `x.${key} = NEW.id`)] });
}

/** The triggers this migration creates (migration 055 replaces some of their functions on PostgreSQL). */
export const BOOK_VERSION_TRIGGERS: readonly VersionTrigger[] = TRIGGERS;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('book_version')
    .addColumn('book_id', 'integer', (c) => c.primaryKey())
    .addColumn('version', 'integer', (c) => c.notNull())
    .execute();
  await createTriggers(db, TRIGGERS, 'book_version');
}
