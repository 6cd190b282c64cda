// A user's own 0-10 rating of books.
import type { Db } from '../store/store.ts';
import { upsertProgress } from './progress-rows.ts';

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
  await upsertProgress(db, userId, bookIds, { personal_rating: rating });
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
