// The book table as the listings read it: with each book's metadata row joined as `m`, or without it where nothing
// reads `m`. SQLite keeps an unused LEFT JOIN, so a count(*) over the joined table also reads every metadata row
// (about twice the cost at 100,000 books) and cannot be answered from a book index alone.
import type { Db } from '../store/store.ts';

/** `book`, with `m` joined when `metadata` is true. Typed as the joined shape either way: without it, nothing may read `m`. */
export function booksWithMetadata(db: Db, metadata: boolean) {
  const from = db.selectFrom('book');
  return (metadata ? from.leftJoin('book_metadata as m', 'm.book_id', 'book.id') : from) as ReturnType<typeof _joinedShape>;
}

/** The shape of the joined builder, for typing only. */
function _joinedShape(db: Db) {
  return db.selectFrom('book').leftJoin('book_metadata as m', 'm.book_id', 'book.id');
}
