// Recording where a user is in a book: the per-file position, the per-book legacy columns, and the status they imply.
import type { Updateable } from 'kysely';
import type { UserBookFileProgressTable, UserBookProgressTable } from '../store/db-types.ts';
import { lockKeyForTransaction } from '../store/key-locks.ts';
import type { Db } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { loadBookFiles, readerKind, type ReaderKind } from './book-files.ts';
import { progressKey } from './progress-rows.ts';
import { roundPercent, statusAfterProgress } from './read-status.ts';
import { ReadingError } from './reading-error.ts';

export interface FileProgressInput {
  bookFileId: number;
  positionData?: string | null;
  positionHref?: string | null;
  progressPercent: number;
  ttsPositionCfi?: string | null;
  contentSourceProgressPercent?: number | null;
}

export interface ProgressInput {
  bookId: number;
  fileProgress?: FileProgressInput | null;
  epubProgress?: { cfi?: string | null; href?: string | null; percentage: number } | null;
  pdfProgress?: { page: number; percentage: number } | null;
  cbxProgress?: { page: number; percentage: number } | null;
  audiobookProgress?: { positionMs: number; trackIndex?: number | null; percentage: number } | null;
  /** ISO-8601 instant. */
  dateFinished?: string | null;
}

type BookPatch = Updateable<UserBookProgressTable>;
type FilePatch = Omit<Updateable<UserBookFileProgressTable>, 'id' | 'user_id' | 'book_file_id'>;

/** Grimmory's `progressValid`: a request must carry some progress or a finish date. */
export function carriesProgress(input: ProgressInput): boolean {
  return Boolean(input.fileProgress || input.epubProgress || input.pdfProgress || input.cbxProgress || input.audiobookProgress || input.dateFinished);
}

function pageNumber(positionData: string | null | undefined): number | null {
  if (positionData === null || positionData === undefined) return null;
  if (!/^-?\d+$/.test(positionData.trim())) throw new ReadingError('INVALID', `positionData must be a page number for this file, got "${positionData}"`);
  return Number(positionData.trim());
}

/** Legacy per-book columns for a position in a file of the given kind. */
function legacyColumns(kind: ReaderKind | undefined, position: { data: string | null | undefined; href: string | null | undefined; percent: number }): BookPatch {
  switch (kind) {
    case 'ebook':
      return { epub_progress: position.data ?? null, epub_progress_href: position.href ?? null, epub_progress_percent: position.percent };
    case 'pdf':
      return { pdf_progress: pageNumber(position.data), pdf_progress_percent: position.percent };
    case 'cbx':
      return { cbx_progress: pageNumber(position.data), cbx_progress_percent: position.percent };
    default:
      // Audiobook positions live only in the per-file table.
      return {};
  }
}

function percentColumn(kind: ReaderKind | undefined, percent: number): BookPatch {
  if (kind === 'ebook') return { epub_progress_percent: percent };
  if (kind === 'pdf') return { pdf_progress_percent: percent };
  if (kind === 'cbx') return { cbx_progress_percent: percent };
  return {};
}

/** The legacy request form for the primary file's kind, as a position; undefined when the request has none for it. */
function legacyPosition(kind: ReaderKind | undefined, input: ProgressInput): { data: string | null; href: string | null; percent: number } | undefined {
  if (kind === 'ebook' && input.epubProgress) return { data: input.epubProgress.cfi ?? null, href: input.epubProgress.href ?? null, percent: roundPercent(input.epubProgress.percentage) };
  if (kind === 'pdf' && input.pdfProgress) return { data: String(input.pdfProgress.page), href: null, percent: roundPercent(input.pdfProgress.percentage) };
  if (kind === 'cbx' && input.cbxProgress) return { data: String(input.cbxProgress.page), href: null, percent: roundPercent(input.cbxProgress.percentage) };
  if (kind === 'audiobook' && input.audiobookProgress) {
    const { positionMs, trackIndex, percentage } = input.audiobookProgress;
    return { data: String(positionMs), href: trackIndex === null || trackIndex === undefined ? null : String(trackIndex), percent: roundPercent(percentage) };
  }
  return undefined;
}

function instant(text: string): string {
  const time = Date.parse(text);
  if (Number.isNaN(time)) throw new ReadingError('INVALID', `dateFinished is not a date-time: "${text}"`);
  return new Date(time).toISOString();
}

function hasLegacyForm(input: ProgressInput): boolean {
  return Boolean(input.epubProgress || input.pdfProgress || input.cbxProgress || input.audiobookProgress);
}

/**
 * Applies a reader's progress report for `userId` and returns the percent it recorded (undefined when the report carried
 * none). Throws ReadingError for a missing book, a file that is not the book's, a legacy report on a book without a
 * readable file, or a page position that is not a number.
 */
export async function recordProgress(db: Db, userId: number, input: ProgressInput, now: string = nowIso()): Promise<number | undefined> {
  const book = await loadBookFiles(db, input.bookId);
  if (!book) throw new ReadingError('BOOK_NOT_FOUND', `Book not found with ID: ${input.bookId}`);
  const primaryKind = readerKind(book.primary?.book_type ?? null);

  let bookPatch: BookPatch = { last_read_time: now };
  let filePatch: { fileId: number; values: FilePatch } | undefined;
  let percent: number | undefined;

  if (input.fileProgress) {
    const fp = input.fileProgress;
    const file = book.files.find((f) => f.id === fp.bookFileId);
    if (!file) throw new ReadingError('FILE_NOT_FOUND', 'Book file not found');
    percent = fp.progressPercent;
    bookPatch = { ...bookPatch, ...legacyColumns(readerKind(file.book_type), { data: fp.positionData, href: fp.positionHref, percent }) };
    filePatch = {
      fileId: file.id,
      values: {
        position_data: fp.positionData ?? null,
        position_href: fp.positionHref ?? null,
        progress_percent: fp.progressPercent,
        tts_position_cfi: fp.ttsPositionCfi ?? null,
        content_source_progress_percent: fp.contentSourceProgressPercent ?? null,
        last_read_time: now,
      },
    };
  } else if (hasLegacyForm(input)) {
    if (!book.primary) throw new ReadingError('UNSUPPORTED_BOOK_TYPE', 'Unsupported book type for viewer settings');
    const position = legacyPosition(primaryKind, input);
    if (position) {
      percent = position.percent;
      bookPatch = { ...bookPatch, ...legacyColumns(primaryKind, position) };
      filePatch = {
        fileId: book.primary.id,
        values: { position_data: position.data, position_href: position.href, progress_percent: position.percent, content_source_progress_percent: null, last_read_time: now },
      };
    }
  }

  await db.transaction().execute(async (trx) => {
    // Two reports at once (two replicas) take turns, each deciding the status from what the other wrote.
    await lockKeyForTransaction(trx, progressKey(userId, input.bookId));
    const existing = await trx.selectFrom('user_book_progress').select(['read_status', 'date_finished']).where('user_id', '=', userId).where('book_id', '=', input.bookId).executeTakeFirst();
    if (percent !== undefined) {
      const status = statusAfterProgress(percent, existing?.read_status ?? null);
      bookPatch = { ...bookPatch, ...percentColumn(primaryKind, percent), read_status: status };
      if (status === 'READ' && !existing?.date_finished) bookPatch.date_finished = now;
    }
    if (input.dateFinished) bookPatch.date_finished = instant(input.dateFinished);

    await trx
      .insertInto('user_book_progress')
      .values({ ...bookPatch, user_id: userId, book_id: input.bookId })
      .onConflict((oc) => oc.columns(['user_id', 'book_id']).doUpdateSet(bookPatch))
      .execute();
    if (filePatch) {
      await trx
        .insertInto('user_book_file_progress')
        .values({ ...filePatch.values, user_id: userId, book_file_id: filePatch.fileId })
        .onConflict((oc) => oc.columns(['user_id', 'book_file_id']).doUpdateSet(filePatch.values))
        .execute();
    }
  });
  return percent;
}
