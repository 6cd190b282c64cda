// Shared bits of the bulk reading-state writes: which of the books already have a progress row for the user, and
// setting the same values on many books' rows.
import type { Insertable, Transaction } from 'kysely';
import type { DB, UserBookProgressTable } from '../store/db-types.ts';
import type { Db } from '../store/store.ts';

export async function booksWithProgress(db: Db | Transaction<DB>, userId: number, bookIds: readonly number[]): Promise<Set<number>> {
  const out = new Set<number>();
  const unique = [...new Set(bookIds)];
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await db.selectFrom('user_book_progress').select('book_id').where('user_id', '=', userId).where('book_id', 'in', unique.slice(i, i + 500)).execute();
    for (const r of rows) out.add(r.book_id);
  }
  return out;
}

/** Book ids among `bookIds` that do not exist. */
export async function missingBookIds(db: Db, bookIds: readonly number[]): Promise<number[]> {
  const unique = [...new Set(bookIds)];
  const found = new Set<number>();
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await db.selectFrom('book').select('id').where('id', 'in', unique.slice(i, i + 500)).execute();
    for (const r of rows) found.add(r.id);
  }
  return unique.filter((id) => !found.has(id));
}

/**
 * The same column values on the user's progress rows of every book, creating the rows that are missing. One upsert per
 * chunk: a row another writer (another replica) creates meanwhile is updated, never inserted twice.
 */
export async function upsertProgress(db: Db, userId: number, bookIds: readonly number[], values: Omit<Insertable<UserBookProgressTable>, 'user_id' | 'book_id'>): Promise<void> {
  const unique = [...new Set(bookIds)];
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < unique.length; i += 500) {
      await trx
        .insertInto('user_book_progress')
        .values(unique.slice(i, i + 500).map((book_id) => ({ ...values, user_id: userId, book_id })))
        .onConflict((oc) => oc.columns(['user_id', 'book_id']).doUpdateSet(values))
        .execute();
    }
  });
}

/** The transaction key lock (store/key-locks.ts) under which a user's progress in a book is read and then written. */
export const progressKey = (userId: number, bookId: number): string => `progress:${userId}:${bookId}`;
