// Books as one user sees them: the catalog's Book JSON plus that user's shelves and reading state.
import type { Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import { bookJson } from '../books/book-view.ts';
import { readingStateByBook } from '../reading/book-reading-state.ts';
import type { Db } from '../store/store.ts';
import { shelvesByBook } from './book-shelves.ts';

/** Book JSON for each id that exists, in the given order, with `shelves` and the caller's reading state. */
export async function personalBooks(db: Db, principal: Principal, bookIds: readonly number[]): Promise<Record<string, unknown>[]> {
  const ids = [...new Set(bookIds)];
  const [shelves, reading] = await Promise.all([shelvesByBook(db, principal, ids), readingStateByBook(db, principal.userId, ids)]);
  const out: Record<string, unknown>[] = [];
  for (const id of ids) {
    const book = await bookJson(db, id);
    if (!book) continue;
    out.push({ ...book, ...(reading.get(id) ?? {}), shelves: shelves.get(id) ?? [] });
  }
  return out;
}

/** The books on a shelf that the caller may see, as personal Book JSON. */
export async function booksOnShelf(db: Db, principal: Principal, shelfId: number): Promise<Record<string, unknown>[]> {
  const rows = await db
    .selectFrom('book_shelf_mapping as m')
    .innerJoin('book', 'book.id', 'm.book_id')
    .select('book.id')
    .where('m.shelf_id', '=', shelfId)
    .where(visibleBookFilter(principal))
    .orderBy('book.id')
    .execute();
  return personalBooks(db, principal, rows.map((r) => r.id));
}
