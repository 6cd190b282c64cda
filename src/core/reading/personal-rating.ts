// A user's own 0-10 rating of books.
import type { Db } from '../store/store.ts';
import { booksWithProgress } from './progress-rows.ts';

export const RATING_MIN = 0;
export const RATING_MAX = 10;

export function isValidRating(rating: number | null): boolean {
  return rating === null || (Number.isInteger(rating) && rating >= RATING_MIN && rating <= RATING_MAX);
}

export interface RatingUpdate {
  bookId: number;
  personalRating: number | null;
}

/** Sets (or with null clears) the rating on every book, creating progress rows where needed. */
export async function setPersonalRating(db: Db, userId: number, bookIds: readonly number[], rating: number | null): Promise<RatingUpdate[]> {
  await db.transaction().execute(async (trx) => {
    const existing = await booksWithProgress(trx, userId, bookIds);
    const unique = [...new Set(bookIds)];
    const present = unique.filter((id) => existing.has(id));
    const absent = unique.filter((id) => !existing.has(id));
    for (let i = 0; i < present.length; i += 500) {
      await trx.updateTable('user_book_progress').set({ personal_rating: rating }).where('user_id', '=', userId).where('book_id', 'in', present.slice(i, i + 500)).execute();
    }
    for (let i = 0; i < absent.length; i += 500) {
      await trx.insertInto('user_book_progress').values(absent.slice(i, i + 500).map((book_id) => ({ user_id: userId, book_id, personal_rating: rating }))).execute();
    }
  });
  return bookIds.map((bookId) => ({ bookId, personalRating: rating }));
}

/** Clears the rating on the books that have a progress row; creates none. */
export async function resetPersonalRating(db: Db, userId: number, bookIds: readonly number[]): Promise<RatingUpdate[]> {
  const unique = [...new Set(bookIds)];
  for (let i = 0; i < unique.length; i += 500) {
    await db.updateTable('user_book_progress').set({ personal_rating: null }).where('user_id', '=', userId).where('book_id', 'in', unique.slice(i, i + 500)).execute();
  }
  return bookIds.map((bookId) => ({ bookId, personalRating: null }));
}
