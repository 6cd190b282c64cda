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
import { BOOK_PART_TABLES, bump, bumpAll, NAME_MAPPINGS, UPSERT } from './054-book-version.ts';

/** Locks the rows of the books whose ids `ids` gives (a list or a subquery), in id order. */
const lockBooks = (ids: string): string => `PERFORM 1 FROM book WHERE id IN (${ids}) ORDER BY id FOR NO KEY UPDATE`;

async function replaceFunction(db: Kysely<unknown>, name: string, statements: readonly string[]): Promise<void> {
  await sql.raw(`CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${statements.join('; ')}; RETURN NULL; END $$`).execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (engineOf(db) !== 'postgres') return;
  for (const table of BOOK_PART_TABLES) {
    await replaceFunction(db, `book_version_${table}_insert`, [lockBooks('NEW.book_id'), bump('NEW.book_id')]);
    await replaceFunction(db, `book_version_${table}_update`, [
      lockBooks('NEW.book_id, OLD.book_id'),
      bump('NEW.book_id'),
      `INSERT INTO book_version (book_id, version) SELECT OLD.book_id, 1 WHERE OLD.book_id <> NEW.book_id ${UPSERT}`,
    ]);
    await replaceFunction(db, `book_version_${table}_delete`, [lockBooks('OLD.book_id'), bump('OLD.book_id')]);
  }
  for (const [table, mapping, key] of NAME_MAPPINGS) {
    await replaceFunction(db, `book_version_${table}_rename`, [lockBooks(`SELECT x.book_id FROM ${mapping} x WHERE x.${key} = NEW.id`), bumpAll(`${mapping} x`, `x.${key} = NEW.id`)]);
  }
}
