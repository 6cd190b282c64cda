// On PostgreSQL, a write to one of a book's other rows (its metadata, files and name mappings) or to a name its entry
// shows now locks the book's row before its version row (migration 054), as an update of the book row itself does.
// With the two orders, a transaction that wrote a book's tags and then its row (a bulk metadata edit) and a statement
// updating the same book's row (its match score, recomputed after the previous edit) each held the lock the other
// waited for, and PostgreSQL ended one of them with a deadlock error. The book rows are taken in id order, so writers
// of many books meet in one order too. The lock is the one an UPDATE of the row takes (FOR NO KEY UPDATE): inserts of
// other rows that reference the book (their foreign key checks) do not wait for it. SQLite has no row locks: a write
// transaction holds the whole database, and its triggers are left as they are.
import { sql, type Kysely } from 'kysely';
import { engineOf } from '../engine.ts';
import { postgresTriggerFunction } from './044-komga-series-summary.ts';
import { BOOK_VERSION_TRIGGERS } from './054-book-version.ts';

/** Locks the rows of the books whose ids `ids` gives (a list or a subquery), in id order. */
const lockBooks = (ids: string): string => `PERFORM 1 FROM book WHERE id IN (${ids}) ORDER BY id FOR NO KEY UPDATE`;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (engineOf(db) !== 'postgres') return;
  for (const t of BOOK_VERSION_TRIGGERS) {
    if (t.books) await sql.raw(postgresTriggerFunction('book_version', { ...t, statements: [lockBooks(t.books), ...t.statements] })).execute(db);
  }
}
