// The per-user part of Grimmory's `Book`: read status, finish date, rating, last read time and the progress objects.
import type { Db } from '../store/store.ts';
import { readerKind } from './book-files.ts';
import { reportedStatus, roundPercent } from './read-status.ts';

type Json = Record<string, unknown>;

interface BookRow {
  book_id: number;
  last_read_time: string | null;
  read_status: string | null;
  date_finished: string | null;
  personal_rating: number | null;
  epub_progress: string | null;
  epub_progress_href: string | null;
  epub_progress_percent: number | null;
  pdf_progress: number | null;
  pdf_progress_percent: number | null;
  cbx_progress: number | null;
  cbx_progress_percent: number | null;
  koreader_progress_percent: number | null;
  kobo_progress_percent: number | null;
}

interface FileRow {
  book_id: number;
  book_type: string | null;
  position_data: string | null;
  position_href: string | null;
  progress_percent: number | null;
  tts_position_cfi: string | null;
  content_source_progress_percent: number | null;
  last_read_time: string | null;
}

const round = (v: number | null): number | null => (v === null ? null : roundPercent(v));

function whole(text: string | null): number | null {
  if (text === null || !/^-?\d+$/.test(text.trim())) return null;
  return Number(text.trim());
}

function fromBookRow(row: BookRow): Json {
  const out: Json = {
    readStatus: reportedStatus(row.read_status),
    dateFinished: row.date_finished,
    personalRating: row.personal_rating,
    lastReadTime: row.last_read_time,
  };
  if (row.kobo_progress_percent !== null) out.koboProgress = { percentage: round(row.kobo_progress_percent) };
  // KOReader stores a 0..1 fraction.
  if (row.koreader_progress_percent !== null) out.koreaderProgress = { percentage: round(row.koreader_progress_percent * 100) };
  if (row.epub_progress !== null || row.epub_progress_percent !== null) {
    out.epubProgress = { cfi: row.epub_progress, href: row.epub_progress_href, contentSourceProgressPercent: null, percentage: round(row.epub_progress_percent), ttsPositionCfi: null };
  }
  if (row.pdf_progress !== null || row.pdf_progress_percent !== null) out.pdfProgress = { page: row.pdf_progress, percentage: round(row.pdf_progress_percent) };
  if (row.cbx_progress !== null || row.cbx_progress_percent !== null) out.cbxProgress = { page: row.cbx_progress, percentage: round(row.cbx_progress_percent) };
  return out;
}

/** A per-file position overrides the legacy object of the same reader. */
function applyFileRow(out: Json, file: FileRow): void {
  const percentage = round(file.progress_percent);
  switch (readerKind(file.book_type)) {
    case 'ebook':
      out.epubProgress = { cfi: file.position_data, href: file.position_href, contentSourceProgressPercent: round(file.content_source_progress_percent), percentage, ttsPositionCfi: file.tts_position_cfi };
      break;
    case 'pdf':
      out.pdfProgress = { page: whole(file.position_data), percentage };
      break;
    case 'cbx':
      out.cbxProgress = { page: whole(file.position_data), percentage };
      break;
    case 'audiobook':
      out.audiobookProgress = { positionMs: whole(file.position_data), trackIndex: whole(file.position_href), percentage };
      break;
    default:
      return;
  }
  const bookTime = out.lastReadTime as string | null | undefined;
  if (file.last_read_time !== null && (!bookTime || file.last_read_time > bookTime)) out.lastReadTime = file.last_read_time;
}

/** Newer of two per-file rows by last read time; a row without a time loses. */
function newer(a: FileRow, b: FileRow): FileRow {
  if (a.last_read_time === null) return b;
  if (b.last_read_time === null) return a;
  return b.last_read_time > a.last_read_time ? b : a;
}

/**
 * The caller's reading state for each book that has any, ready to merge into `Book` JSON (null fields dropped).
 * Books the user never touched are absent from the map and carry no `readStatus`.
 */
export async function readingStateByBook(db: Db, userId: number, bookIds: readonly number[]): Promise<Map<number, Json>> {
  const out = new Map<number, Json>();
  const unique = [...new Set(bookIds)];
  for (let i = 0; i < unique.length; i += 500) {
    const chunk = unique.slice(i, i + 500);
    const rows = (await db
      .selectFrom('user_book_progress')
      .select([
        'book_id', 'last_read_time', 'read_status', 'date_finished', 'personal_rating', 'epub_progress', 'epub_progress_href', 'epub_progress_percent',
        'pdf_progress', 'pdf_progress_percent', 'cbx_progress', 'cbx_progress_percent', 'koreader_progress_percent', 'kobo_progress_percent',
      ])
      .where('user_id', '=', userId)
      .where('book_id', 'in', chunk)
      .execute()) as BookRow[];
    for (const row of rows) out.set(row.book_id, fromBookRow(row));

    const files = (await db
      .selectFrom('user_book_file_progress as p')
      .innerJoin('book_file as f', 'f.id', 'p.book_file_id')
      .select(['f.book_id', 'f.book_type', 'p.position_data', 'p.position_href', 'p.progress_percent', 'p.tts_position_cfi', 'p.content_source_progress_percent', 'p.last_read_time'])
      .where('p.user_id', '=', userId)
      .where('f.book_id', 'in', chunk)
      .execute()) as FileRow[];
    const latest = new Map<number, FileRow>();
    for (const file of files) {
      const seen = latest.get(file.book_id);
      latest.set(file.book_id, seen ? newer(seen, file) : file);
    }
    for (const [bookId, file] of latest) {
      const state = out.get(bookId) ?? {};
      applyFileRow(state, file);
      out.set(bookId, state);
    }
  }
  for (const [bookId, state] of out) out.set(bookId, Object.fromEntries(Object.entries(state).filter(([, v]) => v !== null && v !== undefined)));
  return out;
}
