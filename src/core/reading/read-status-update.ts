// Setting a read status by hand on one or more books (Grimmory's "mark as").
import type { Db } from '../store/store.ts';
import { upsertProgress } from './progress-rows.ts';
import { nowIso } from '../time.ts';
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
  await upsertProgress(db, userId, bookIds, values);
  return bookIds.map((bookId) => ({ bookId, readStatus: status, readStatusModifiedTime: now, dateFinished }));
}
