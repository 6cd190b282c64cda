// Which shelves a book is on, as one user sees it, and putting books on / taking them off the user's shelves.
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { ShelfError } from './shelves.ts';

/** Books go on and come off the caller's own shelves only; another user's public shelf is not one of them. */
export async function requireOwnShelves(db: Db, principal: Principal, assign: readonly number[], unassign: readonly number[]): Promise<void> {
  const own = new Set((await db.selectFrom('shelf').select('id').where('user_id', '=', principal.userId).execute()).map((r) => r.id));
  if (!assign.every((id) => own.has(id))) throw new ShelfError('UNAUTHORIZED', 'Cannot assign shelves that do not belong to the user.');
  if (!unassign.every((id) => own.has(id))) throw new ShelfError('UNAUTHORIZED', 'Cannot unassign shelves that do not belong to the user.');
}

/** Adds the books to `assign` and removes them from `unassign`; refuses (changing nothing) when a shelf is not the caller's. */
export async function assignShelves(db: Db, principal: Principal, bookIds: readonly number[], assign: readonly number[], unassign: readonly number[]): Promise<void> {
  await requireOwnShelves(db, principal, assign, unassign);
  const books = [...new Set(bookIds)];
  const adding = [...new Set(assign)];
  const removing = [...new Set(unassign)];
  if (books.length === 0) return;
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < books.length; i += 500) {
      const chunk = books.slice(i, i + 500);
      if (removing.length > 0) await trx.deleteFrom('book_shelf_mapping').where('book_id', 'in', chunk).where('shelf_id', 'in', removing).execute();
      if (adding.length > 0) {
        await trx
          .insertInto('book_shelf_mapping')
          .values(chunk.flatMap((book_id) => adding.map((shelf_id) => ({ book_id, shelf_id }))))
          .onConflict((oc) => oc.columns(['book_id', 'shelf_id']).doNothing())
          .execute();
      }
    }
  });
}
