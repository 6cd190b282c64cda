// AppBookDetail and AppBookProgressResponse: one book as the app's detail page shows it, and the caller's reading
// state in it (the per-book progress columns, and the newest position in an audiobook file).
import { visibleBookCounts } from '../shelves/shelves.ts';
import type { SqlDialect } from '../store/dialect.ts';
import type { SqlExec } from '../store/sql-exec.ts';
import type { Store } from '../store/store.ts';
import type { Principal } from '../auth/principal.ts';
import { FILES_SQL, groupBy, headFields, namesByBook, primaryFileOf, PROGRESS_SQL, put, readProgressOf, type FileRow, type Json, type ProgressRow } from './book-summary.ts';

interface DetailRow {
  id: number;
  library_id: number;
  library_name: string;
  added_on: string;
  is_physical: number;
  format_priority: string | null;
  title: string | null;
  subtitle: string | null;
  description: string | null;
  series_name: string | null;
  series_number: number | null;
  publisher: string | null;
  published_date: string | null;
  page_count: number | null;
  isbn_13: string | null;
  language: string | null;
  goodreads_rating: number | null;
  goodreads_review_count: number | null;
  cover_updated_on: string | null;
  audiobook_cover_updated_on: string | null;
}

const DETAIL_SQL = `SELECT b.id, b.library_id, l.name AS library_name, b.added_on, b.is_physical, l.format_priority, m.title, m.subtitle,
  m.description, m.series_name, m.series_number, m.publisher, m.published_date, m.page_count, m.isbn_13, m.language, m.goodreads_rating,
  m.goodreads_review_count, m.cover_updated_on, m.audiobook_cover_updated_on
  FROM book b JOIN library l ON l.id = b.library_id LEFT JOIN book_metadata m ON m.book_id = b.id WHERE b.id = ?`;

interface AudioPositionRow {
  position_data: string | null;
  position_href: string | null;
  progress_percent: number | null;
  last_read_time: string | null;
}

const AUDIO_POSITION_SQL = `SELECT fp.position_data, fp.position_href, fp.progress_percent, fp.last_read_time
  FROM user_book_file_progress fp JOIN book_file f ON f.id = fp.book_file_id
  WHERE fp.user_id = ? AND f.book_id = ? AND f.book_type = 'AUDIOBOOK' ORDER BY fp.last_read_time DESC NULLS LAST, fp.id DESC LIMIT 1`;

interface ShelfRow {
  id: number;
  name: string;
  icon: string | null;
  is_public: number;
}

const BOOK_SHELVES_SQL = `SELECT s.id, s.name, s.icon, s.is_public FROM book_shelf_mapping sm JOIN shelf s ON s.id = sm.shelf_id
  WHERE sm.book_id = ? AND (s.user_id = ? OR s.is_public = 1) ORDER BY s.id`;

function integerOrNull(text: string | null): number | null {
  return text !== null && /^[+-]?\d+$/.test(text) ? Number(text) : null;
}

/** The progress objects of the detail and progress responses; each present only when its position is. */
function progressObjects(p: ProgressRow | undefined, audio: AudioPositionRow | undefined): Json {
  const out: Json = {};
  if (p?.epub_progress != null) out.epubProgress = { cfi: p.epub_progress, href: p.epub_progress_href, percentage: p.epub_progress_percent, updatedAt: p.last_read_time };
  if (p?.pdf_progress != null) out.pdfProgress = { page: p.pdf_progress, percentage: p.pdf_progress_percent, updatedAt: p.last_read_time };
  if (p?.cbx_progress != null) out.cbxProgress = { page: p.cbx_progress, percentage: p.cbx_progress_percent, updatedAt: p.last_read_time };
  if (audio) {
    out.audiobookProgress = { positionMs: integerOrNull(audio.position_data), trackIndex: integerOrNull(audio.position_href), percentage: audio.progress_percent, updatedAt: audio.last_read_time };
  }
  // The percentage is KOReader's own 0..1 fraction, as Grimmory sends it here.
  if (p?.koreader_progress_percent != null) {
    out.koreaderProgress = { percentage: p.koreader_progress_percent, device: p.koreader_device, deviceId: p.koreader_device_id, lastSyncTime: p.koreader_last_sync_time };
  }
  return out;
}

async function readingState(exec: SqlExec, dialect: SqlDialect, userId: number, bookId: number): Promise<{ progress: ProgressRow | undefined; audio: AudioPositionRow | undefined }> {
  return {
    progress: (await exec.get(PROGRESS_SQL(dialect), [userId, JSON.stringify([bookId])])) as ProgressRow | undefined,
    audio: (await exec.get(AUDIO_POSITION_SQL, [userId, bookId])) as AudioPositionRow | undefined,
  };
}

/** AppBookProgressResponse for the caller (every field absent when they never opened the book). */
export function bookProgressJson(store: Store, userId: number, bookId: number): Promise<Json> {
  return store.read(async ({ exec }) => {
    const { progress, audio } = await readingState(exec, store.dialect, userId, bookId);
    return { ...put({}, { readProgress: readProgressOf(progress), readStatus: progress?.read_status, lastReadTime: progress?.last_read_time }), ...progressObjects(progress, audio) };
  });
}

const extensionOf = (fileName: string): string | undefined => {
  const dot = fileName.lastIndexOf('.');
  return dot > 0 ? fileName.slice(dot + 1) : undefined;
};

/** AppBookFile: the book-format files, each marked whether it is the primary one. */
function filesJson(files: FileRow[], primary: FileRow | undefined): Json[] {
  return files
    .filter((f) => f.is_book === 1 && f.book_type !== null)
    .map((f) =>
      put(
        {},
        {
          id: f.id,
          bookId: f.book_id,
          fileName: f.file_name,
          book: true,
          folderBased: f.is_folder_based === 1,
          bookType: f.book_type,
          archiveType: f.archive_type,
          fileSizeKb: f.file_size_kb,
          extension: extensionOf(f.file_name),
          addedOn: f.added_on,
          primary: f.id === primary?.id,
        },
      ),
    );
}

/**
 * AppBookDetail with the caller's reading state, or undefined when there is no such book. The shelves are those of
 * the caller and public ones, counted by the books the caller may see.
 */
export async function bookDetailJson(store: Store, principal: Principal, bookId: number): Promise<Json | undefined> {
  const d = store.dialect;
  const loaded = await store.read(async ({ exec }) => {
    const book = (await exec.get(DETAIL_SQL, [bookId])) as DetailRow | undefined;
    if (!book) return undefined;
    const idsJson = JSON.stringify([bookId]);
    return {
      book,
      names: (await namesByBook(exec, d, idsJson)).get(bookId),
      files: groupBy((await exec.all(FILES_SQL(d), [idsJson])) as unknown as FileRow[]).get(bookId) ?? [],
      shelves: (await exec.all(BOOK_SHELVES_SQL, [bookId, principal.userId])) as unknown as ShelfRow[],
      ...(await readingState(exec, d, principal.userId, bookId)),
    };
  });
  if (!loaded) return undefined;
  const { book, names, files, shelves, progress, audio } = loaded;
  const counts = await visibleBookCounts(store.db, principal, shelves.map((s) => s.id));
  const primary = primaryFileOf(files, book.format_priority);
  const detail = put(
    {},
    {
      ...headFields(book, names, progress),
      subtitle: book.subtitle,
      description: book.description,
      categories: names?.categories ?? [],
      publisher: book.publisher,
      publishedDate: book.published_date,
      pageCount: book.page_count,
      isbn13: book.isbn_13,
      language: book.language,
      goodreadsRating: book.goodreads_rating,
      goodreadsReviewCount: book.goodreads_review_count,
      libraryName: book.library_name,
      shelves: shelves.map((s) => put({}, { id: s.id, name: s.name, icon: s.icon, bookCount: counts.get(s.id) ?? 0, publicShelf: s.is_public === 1 })),
      readProgress: readProgressOf(progress),
      primaryFileType: primary?.book_type,
      fileTypes: [...new Set(files.map((f) => f.book_type).filter((t): t is string => t !== null))],
      files: filesJson(files, primary),
      coverUpdatedOn: book.cover_updated_on,
      audiobookCoverUpdatedOn: book.audiobook_cover_updated_on,
      isPhysical: book.is_physical === 1,
    },
  );
  return { ...detail, ...progressObjects(progress, audio) };
}
