// The user's shelf named "Kobo": what is on it is what their Kobo devices hold.
import type { Transaction } from 'kysely';
import type { DB } from '../store/db-types.ts';
import type { Db } from '../store/store.ts';

export const KOBO_SHELF_NAME = 'Kobo';
const KOBO_SHELF_ICON = 'tablet';

type Exec = Db | Transaction<DB>;

export async function koboShelfId(db: Exec, userId: number): Promise<number | undefined> {
  const row = await db.selectFrom('shelf').select('id').where('user_id', '=', userId).where('name', '=', KOBO_SHELF_NAME).executeTakeFirst();
  return row?.id;
}

/** The shelf's id, creating it (icon `tablet`, a Lucide icon) when the user has none. */
export async function ensureKoboShelf(db: Exec, userId: number): Promise<number> {
  const existing = await koboShelfId(db, userId);
  if (existing !== undefined) return existing;
  const row = await db
    .insertInto('shelf')
    .values({ user_id: userId, name: KOBO_SHELF_NAME, icon: KOBO_SHELF_ICON, icon_type: 'LUCIDE', is_public: 0 })
    .onConflict((oc) => oc.columns(['user_id', 'name']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row?.id ?? ((await koboShelfId(db, userId)) as number);
}

/** Turning Kobo sync off removes the shelf (the books stay in the library). */
export async function deleteKoboShelf(db: Exec, userId: number): Promise<void> {
  await db.deleteFrom('shelf').where('user_id', '=', userId).where('name', '=', KOBO_SHELF_NAME).execute();
}

/** What removing a book on the device does: it comes off the shelf, and off the device at the next sync. */
export async function removeFromKoboShelf(db: Db, userId: number, bookId: number): Promise<void> {
  const shelfId = await koboShelfId(db, userId);
  if (shelfId === undefined) return;
  await db.deleteFrom('book_shelf_mapping').where('shelf_id', '=', shelfId).where('book_id', '=', bookId).execute();
}
