// Clearing one source of reading progress (Bindery's own reader, KOReader or Kobo) for some books.
import type { Db } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { booksWithProgress } from './progress-rows.ts';
import type { StatusUpdate } from './read-status-update.ts';
import { RESET_COLUMNS, stampsStatusChange, type ResetType } from './reset-types.ts';

/** Resets the given source for the user's books; each answer says whether there was anything to reset (a modified time). */
export async function resetProgress(db: Db, userId: number, bookIds: readonly number[], type: ResetType, now: string = nowIso()): Promise<StatusUpdate[]> {
  const cleared = Object.fromEntries(RESET_COLUMNS[type].map((column) => [column, null]));
  const values = stampsStatusChange(type) ? { ...cleared, read_status_modified_time: now } : cleared;
  // The reading state a Kobo last reported goes too, or the next sync would bring the progress back.
  const clearsKoboState = type === 'KOBO';
  let existing = new Set<number>();
  await db.transaction().execute(async (trx) => {
    existing = await booksWithProgress(trx, userId, bookIds);
    const ids = [...existing];
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      await trx.updateTable('user_book_progress').set(values).where('user_id', '=', userId).where('book_id', 'in', chunk).execute();
      if (type === 'BOOKLORE') {
        await trx
          .deleteFrom('user_book_file_progress')
          .where('user_id', '=', userId)
          .where('book_file_id', 'in', (eb) => eb.selectFrom('book_file').select('id').where('book_id', 'in', chunk))
          .execute();
      }
      if (clearsKoboState) {
        await trx.deleteFrom('kobo_reading_state').where('user_id', '=', userId).where('entitlement_id', 'in', chunk.map(String)).execute();
      }
    }
  });
  return bookIds.map((bookId) => ({ bookId, readStatus: null, readStatusModifiedTime: existing.has(bookId) ? now : null, dateFinished: null }));
}
