// Books as one user sees them: the catalog's Book JSON plus that user's shelves and reading state.
import type { Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import { booksJson } from '../books/book-list.ts';
import type { Store } from '../store/store.ts';

/** Book JSON for each id that exists, in the given order, with `shelves` and the caller's reading state. */
export function personalBooks(store: Store, principal: Principal, bookIds: readonly number[]): Promise<Record<string, unknown>[]> {
  return booksJson(store, [...new Set(bookIds)], {
    principal,
    listView: false,
    withDescription: true,
    user: { reading: true, unsetWithoutProgress: false, emptyShelves: 'empty' },
  });
}

/** The books on a shelf that the caller may see, as personal Book JSON. */
export async function booksOnShelf(store: Store, principal: Principal, shelfId: number): Promise<Record<string, unknown>[]> {
  const rows = await store.db
    .selectFrom('book_shelf_mapping as m')
    .innerJoin('book', 'book.id', 'm.book_id')
    .select('book.id')
    .where('m.shelf_id', '=', shelfId)
    .where(visibleBookFilter(principal))
    .orderBy('book.id')
    .execute();
  return personalBooks(store, principal, rows.map((r) => r.id));
}
