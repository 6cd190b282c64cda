// Shared bits of the bulk reading-state writes: which of the books already have a progress row for the user.
import type { Transaction } from 'kysely';
import type { DB } from '../store/db-types.ts';
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
