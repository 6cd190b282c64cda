// Komga's read progress mapped onto Bindery's per-user reading state: a book is READ when its status is READ, IN_PROGRESS
// while the owner is reading it (or has a position without a status), UNREAD otherwise. Komga's page is a 1-based page
// number: the comic or PDF page Bindery keeps, or for other formats the percent read turned into a page.
import type { RawBuilder } from 'kysely';
import { sql } from 'kysely';
import { readerKind } from '../reading/book-files.ts';
import { recordProgress } from '../reading/progress.ts';
import { setReadStatus } from '../reading/read-status-update.ts';
import { roundPercent, statusAfterProgress } from '../reading/read-status.ts';
import { ReadingError } from '../reading/reading-error.ts';
import { resetProgress } from '../reading/reset-progress.ts';
import type { SqlDialect } from '../store/dialect.ts';
import type { Store } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { emitEvent } from '../events/live-events.ts';

export type KomgaReadState = 'READ' | 'IN_PROGRESS' | 'UNREAD';

export const READ_STATES: readonly KomgaReadState[] = ['UNREAD', 'READ', 'IN_PROGRESS'];

/** Statuses of a book begun and not finished. */
const READING = `'READING', 'RE_READING', 'PARTIALLY_READ', 'PAUSED'`;

/** The furthest any reader got, in percent (KOReader keeps a fraction). */
const PERCENT = (d: SqlDialect, p: string): string =>
  [`coalesce(${p}.epub_progress_percent, 0)`, `coalesce(${p}.pdf_progress_percent, 0)`, `coalesce(${p}.cbx_progress_percent, 0)`, `coalesce(${p}.koreader_progress_percent, 0) * 100`, `coalesce(${p}.kobo_progress_percent, 0)`].reduce((a, b) =>
    d.greatest(a, b),
  );

/** The Komga state of a `user_book_progress` row aliased `alias` (a missing row, all NULL, is UNREAD). */
export function readStateText(d: SqlDialect, alias: string): string {
  const p = alias;
  return `(CASE WHEN ${p}.read_status = 'READ' THEN 'READ' WHEN ${p}.read_status IN (${READING}) THEN 'IN_PROGRESS' WHEN coalesce(${p}.read_status, 'UNSET') = 'UNSET' AND ${PERCENT(d, p)} > 0 THEN 'IN_PROGRESS' ELSE 'UNREAD' END)`;
}

export function readStateSql(d: SqlDialect, alias: string): RawBuilder<KomgaReadState> {
  return sql.raw<KomgaReadState>(readStateText(d, alias));
}

interface ProgressSqlRow {
  book_id: number;
  state: KomgaReadState;
  last_read_time: string | null;
  read_status_modified_time: string | null;
  date_finished: string | null;
  cbx_progress: number | null;
  pdf_progress: number | null;
  percent: number;
  device: string | null;
  device_id: string | null;
  file_page: string | null;
}

export interface BookProgress {
  state: KomgaReadState;
  /** The comic or PDF page last read (1-based), when Bindery knows it. */
  page: number | undefined;
  percent: number;
  readDate: string | undefined;
  created: string | undefined;
  lastModified: string | undefined;
  device: string;
  deviceId: string;
}

/** The owner's reading state of each of these books that has one. */
export async function bookProgress(store: Store, userId: number, bookIds: readonly number[]): Promise<Map<number, BookProgress>> {
  const out = new Map<number, BookProgress>();
  if (bookIds.length === 0) return out;
  const d = store.dialect;
  const rows = (await store.exec.all(
    `SELECT p.book_id, ${readStateText(d, 'p')} AS state, p.last_read_time, p.read_status_modified_time, p.date_finished, p.cbx_progress, p.pdf_progress,
            ${PERCENT(d, 'p')} AS percent, p.koreader_device AS device, p.koreader_device_id AS device_id,
            (SELECT fp.position_data FROM book_file f JOIN user_book_file_progress fp ON fp.book_file_id = f.id AND fp.user_id = p.user_id
              WHERE f.book_id = p.book_id AND f.book_type IN ('CBX', 'PDF') ORDER BY fp.last_read_time DESC LIMIT 1) AS file_page
       FROM user_book_progress p WHERE p.user_id = ? AND p.book_id IN (${d.jsonValues('integer')})`,
    [userId, JSON.stringify(bookIds)],
  )) as unknown as ProgressSqlRow[];
  for (const r of rows) {
    const stamps = [r.last_read_time, r.read_status_modified_time, r.date_finished].filter((s): s is string => s !== null).sort();
    const filePage = r.file_page !== null && /^\s*\d{1,9}\s*$/.test(r.file_page) ? Number(r.file_page) : undefined;
    const page = filePage ?? r.cbx_progress ?? r.pdf_progress ?? undefined;
    out.set(r.book_id, {
      state: r.state,
      page: page !== undefined && page > 0 ? page : undefined,
      percent: r.percent,
      readDate: r.last_read_time ?? stamps.at(-1),
      created: stamps[0],
      lastModified: stamps.at(-1),
      device: r.device ?? '',
      deviceId: r.device_id ?? '',
    });
  }
  return out;
}

/** Komga's page for a book in progress: the page read, else the percent over the page count; at least 1. */
export function komgaPage(progress: BookProgress, pagesCount: number): number {
  if (progress.state === 'READ') return Math.max(1, pagesCount);
  const page = progress.page ?? Math.round((progress.percent / 100) * pagesCount);
  return Math.max(1, pagesCount > 0 ? Math.min(page, pagesCount) : page);
}

export interface ProgressTarget {
  bookId: number;
  /** The book's primary file (its type decides how a page is kept). */
  primaryFileId: number | undefined;
  bookType: string | null;
  pagesCount: number;
}

/**
 * Komga's `PATCH …/read-progress` (`{page, completed}`): completed marks the book read; a page is kept as the comic or
 * PDF position (with its percent), or for other formats as the percent read, leaving their reading position alone.
 * Throws ReadingError (INVALID without a page when not completing; recordProgress's refusals otherwise).
 */
export async function markBookProgress(store: Store, userId: number, target: ProgressTarget, update: { page?: number; completed?: boolean }, now: string = nowIso()): Promise<void> {
  await storeBookProgress(store, userId, target, update, now);
  await emitEvent(store.readingState.exec, { kind: 'read-progress', userId, bookIds: [target.bookId], deleted: false });
}

async function storeBookProgress(store: Store, userId: number, target: ProgressTarget, update: { page?: number; completed?: boolean }, now: string): Promise<void> {
  const kind = readerKind(target.bookType);
  const paged = (kind === 'cbx' || kind === 'pdf') && target.primaryFileId !== undefined;
  if (update.completed === true) {
    if (paged) {
      await recordProgress(store.readingState.db, userId, { bookId: target.bookId, fileProgress: { bookFileId: target.primaryFileId as number, positionData: String(Math.max(1, target.pagesCount)), progressPercent: 100 } }, now);
    } else {
      await setReadStatus(store.readingState.db, userId, [target.bookId], 'READ', now);
    }
    return;
  }
  if (update.page === undefined) throw new ReadingError('INVALID', 'page is required unless completed is true');
  const page = Math.max(1, update.page);
  const percent = target.pagesCount > 0 ? roundPercent(Math.min(100, (page / target.pagesCount) * 100)) : 0;
  if (paged) {
    await recordProgress(store.readingState.db, userId, { bookId: target.bookId, fileProgress: { bookFileId: target.primaryFileId as number, positionData: String(page), progressPercent: percent } }, now);
    return;
  }
  await store.readingState.db.transaction().execute(async (trx) => {
    // Locked until commit: a progress write through another replica waits instead of deciding on the same old state.
    const existing = await trx
      .selectFrom('user_book_progress')
      .select(['read_status', 'date_finished'])
      .where('user_id', '=', userId)
      .where('book_id', '=', target.bookId)
      .modifyEnd(sql.raw(store.dialect.forUpdate))
      .executeTakeFirst();
    const status = statusAfterProgress(percent, existing?.read_status ?? null);
    const values = {
      last_read_time: now,
      read_status: status,
      ...(kind === 'ebook' ? { epub_progress_percent: percent } : {}),
      ...(status === 'READ' && !existing?.date_finished ? { date_finished: now } : {}),
    };
    await trx
      .insertInto('user_book_progress')
      .values({ ...values, user_id: userId, book_id: target.bookId })
      .onConflict((oc) => oc.columns(['user_id', 'book_id']).doUpdateSet(values))
      .execute();
  });
}

/** Komga's `DELETE …/read-progress`: the books become unread (Bindery's own reading progress is reset). */
export async function markUnread(store: Store, userId: number, bookIds: readonly number[], now: string = nowIso()): Promise<void> {
  if (bookIds.length === 0) return;
  await resetProgress(store.readingState.db, userId, bookIds, 'BOOKLORE', now);
  await emitEvent(store.readingState.exec, { kind: 'read-progress', userId, bookIds: [...bookIds], deleted: true });
}

/** Marks books read (those already read keep their finish date). */
export async function markRead(store: Store, userId: number, bookIds: readonly number[], now: string = nowIso()): Promise<void> {
  if (bookIds.length === 0) return;
  const rows = await store.exec.all(`SELECT book_id FROM user_book_progress WHERE user_id = ? AND read_status = 'READ' AND book_id IN (${store.dialect.jsonValues('integer')})`, [
    userId,
    JSON.stringify(bookIds),
  ]);
  const read = new Set(rows.map((r) => r.book_id as number));
  const unread = bookIds.filter((id) => !read.has(id));
  if (unread.length === 0) return;
  await setReadStatus(store.readingState.db, userId, unread, 'READ', now);
  await emitEvent(store.readingState.exec, { kind: 'read-progress', userId, bookIds: unread, deleted: false });
}
