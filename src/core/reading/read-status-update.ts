// Setting a read status by hand on one or more books (Grimmory's "mark as").
import type { Db } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { booksWithProgress } from './progress-rows.ts';
import type { ReadStatus } from './read-status.ts';

export interface StatusUpdate {
  bookId: number;
  readStatus: string | null;
  readStatusModifiedTime: string | null;
  dateFinished: string | null;
}

/** Sets the status on every book (creating progress rows where missing); READ stamps the finish date, others clear it. */
export async function setReadStatus(db: Db, userId: number, bookIds: readonly number[], status: ReadStatus, now: string = nowIso()): Promise<StatusUpdate[]> {
  const dateFinished = status === 'READ' ? now : null;
  const values = { read_status: status, read_status_modified_time: now, date_finished: dateFinished };
  await db.transaction().execute(async (trx) => {
    const existing = await booksWithProgress(trx, userId, bookIds);
    const unique = [...new Set(bookIds)];
    const present = unique.filter((id) => existing.has(id));
    const absent = unique.filter((id) => !existing.has(id));
    for (let i = 0; i < present.length; i += 500) {
      await trx.updateTable('user_book_progress').set(values).where('user_id', '=', userId).where('book_id', 'in', present.slice(i, i + 500)).execute();
    }
    for (let i = 0; i < absent.length; i += 500) {
      await trx.insertInto('user_book_progress').values(absent.slice(i, i + 500).map((book_id) => ({ user_id: userId, book_id, ...values }))).execute();
    }
  });
  return bookIds.map((bookId) => ({ bookId, readStatus: status, readStatusModifiedTime: now, dateFinished }));
}
