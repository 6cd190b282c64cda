// Which shelves a book is on, as one user sees it, and putting books on / taking them off the user's shelves.
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { ShelfError, shelfJson, visibleBookCounts, type ShelfRow } from './shelves.ts';

/** For each book, the shelves holding it that the user owns or that are public (Grimmory's `Book.shelves`). */
export async function shelvesByBook(db: Db, principal: Principal, bookIds: readonly number[]): Promise<Map<number, Record<string, unknown>[]>> {
  const out = new Map<number, Record<string, unknown>[]>();
  const unique = [...new Set(bookIds)];
  if (unique.length === 0) return out;
  const rows: (ShelfRow & { book_id: number })[] = [];
  for (let i = 0; i < unique.length; i += 500) {
    rows.push(
      ...(await db
        .selectFrom('book_shelf_mapping as m')
        .innerJoin('shelf', 'shelf.id', 'm.shelf_id')
        .select(['m.book_id', 'shelf.id', 'shelf.user_id', 'shelf.name', 'shelf.sort', 'shelf.icon', 'shelf.icon_type', 'shelf.is_public'])
        .where('m.book_id', 'in', unique.slice(i, i + 500))
        .where((eb) => eb.or([eb('shelf.user_id', '=', principal.userId), eb('shelf.is_public', '=', 1)]))
        .orderBy('shelf.id')
        .execute()),
    );
  }
  const counts = await visibleBookCounts(db, principal, [...new Set(rows.map((r) => r.id))]);
  for (const row of rows) out.set(row.book_id, [...(out.get(row.book_id) ?? []), shelfJson(row, counts.get(row.id) ?? 0)]);
  return out;
}

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
