// The per-user parts of a Book: read status, progress, personal rating, finish date and the shelves the user can see.
import { dialectOf } from '../store/dialect.ts';
import { readerKind } from '../reading/book-files.ts';
import { reportedStatus, roundPercent } from '../reading/read-status.ts';
import { shelfJson } from '../shelves/shelves.ts';
import { batchFilter, type BatchFilter, type CatalogReader } from './book-bundles.ts';
import type { Json } from './book-json.ts';

type ProgressRow = {
  book_id: number;
  last_read_time: string | null;
  pdf_progress: number | null;
  pdf_progress_percent: number | null;
  epub_progress: string | null;
  epub_progress_href: string | null;
  epub_progress_percent: number | null;
  cbx_progress: number | null;
  cbx_progress_percent: number | null;
  read_status: string | null;
  date_finished: string | null;
  koreader_progress_percent: number | null;
  kobo_progress_percent: number | null;
  personal_rating: number | null;
};

type FileProgressRow = {
  book_id: number;
  book_type: string | null;
  position_data: string | null;
  position_href: string | null;
  progress_percent: number | null;
  last_read_time: string | null;
  tts_position_cfi: string | null;
  content_source_progress_percent: number | null;
};

type ShelfRow = { book_id: number; id: number; name: string; icon: string | null; icon_type: string | null; sort: string | null; user_id: number; is_public: number };

export interface UserBookState {
  progress: ProgressRow | undefined;
  /** The user's most recently read file of the book. */
  fileProgress: FileProgressRow | undefined;
  shelves: ShelfRow[];
}

export interface UserStateOptions {
  /** Reading status, progress, rating; off where Grimmory returns the bare book (library book lists). */
  reading: boolean;
  /** Single-book reads report `UNSET` even without a progress row. */
  unsetWithoutProgress: boolean;
  /** An empty shelf list is sent as `[]` or left out. */
  emptyShelves: 'empty' | 'omit';
}

interface Statements {
  progress: string;
  fileProgress: string;
  shelves: string;
}

/** By range or set (see batchFilter); the user's id comes first in each, then the batch. */
const built = new Map<boolean, Statements>();

function statementsOf(filter: Pick<BatchFilter, 'on' | 'dense'>): Statements {
  let s = built.get(filter.dense);
  if (s) return s;
  const { on } = filter;
  s = {
    progress: `SELECT * FROM user_book_progress WHERE user_id = ? AND ${on('book_id')}`,
    // CROSS JOIN keeps the book's files as the outer loop; left to itself SQLite walks all of the user's progress rows.
    // The unary `+` here and in `shelves` changes no plan, but without it SQLite (built with STAT4, as better-sqlite3
    // is) re-prepares these joins on every run because the user's id is bound anew: 6-10 µs each time.
    fileProgress: `SELECT f.book_id AS book_id, f.book_type AS book_type, p.position_data, p.position_href, p.progress_percent, p.last_read_time, p.tts_position_cfi, p.content_source_progress_percent
       FROM book_file f CROSS JOIN user_book_file_progress p WHERE p.user_id = +? AND p.book_file_id = f.id AND ${on('f.book_id')}`,
    shelves: `SELECT m.book_id AS book_id, s.id, s.name, s.icon, s.icon_type, s.sort, s.user_id, s.is_public
       FROM book_shelf_mapping m JOIN shelf s ON s.id = m.shelf_id WHERE (+s.user_id = ? OR s.is_public = 1) AND ${on('m.book_id')} ORDER BY m.book_id, s.id`,
  };
  built.set(filter.dense, s);
  return s;
}

/** Grimmory keeps the file progress read last; a row without a time loses to one with a time. */
function newer(a: FileProgressRow, b: FileProgressRow): FileProgressRow {
  if (a.last_read_time === null) return b;
  if (b.last_read_time === null) return a;
  return b.last_read_time > a.last_read_time ? b : a;
}

function round1(value: number | null): number | null {
  return value === null ? null : roundPercent(value);
}

function intOrNull(value: string | null): number | null {
  if (value === null || !/^-?\d+$/.test(value.trim())) return null;
  return Number(value.trim());
}

/** Reads the per-user parts for batches of books; one instance serves one request. */
export class UserBookStates {
  private readonly reader: CatalogReader;
  private readonly userId: number;
  private readonly loadShelfCounts: (reader: CatalogReader) => Promise<ReadonlyMap<number, number>>;
  private shelfCounts: ReadonlyMap<number, number> | undefined;

  /**
   * `shelfCounts` gives, per shelf, how many of its books the user may see; it is asked at most once per request, when
   * the first book on a shelf is read.
   */
  constructor(reader: CatalogReader, userId: number, shelfCounts: (reader: CatalogReader) => Promise<ReadonlyMap<number, number>>) {
    this.reader = reader;
    this.userId = userId;
    this.loadShelfCounts = shelfCounts;
  }

  /** Reads through `reader` (a snapshot's scope) when given, else through the one the instance was made with. */
  async forBooks(ids: readonly number[], reader: CatalogReader = this.reader): Promise<Map<number, UserBookState>> {
    const out = new Map<number, UserBookState>();
    if (ids.length === 0) return out;
    const filter = batchFilter(dialectOf(reader.db), ids);
    const s = statementsOf(filter);
    const params = [this.userId, ...filter.params];
    const state = (id: number): UserBookState => {
      let st = out.get(id);
      if (!st) out.set(id, (st = { progress: undefined, fileProgress: undefined, shelves: [] }));
      return st;
    };
    for (const row of (await reader.exec.all(s.progress, params)) as ProgressRow[]) state(row.book_id).progress = row;
    for (const row of (await reader.exec.all(s.fileProgress, params)) as FileProgressRow[]) {
      const st = state(row.book_id);
      st.fileProgress = st.fileProgress ? newer(st.fileProgress, row) : row;
    }
    const shelves = (await reader.exec.all(s.shelves, params)) as ShelfRow[];
    for (const row of shelves) state(row.book_id).shelves.push(row);
    if (shelves.length > 0) this.shelfCounts ??= await this.loadShelfCounts(reader);
    return out;
  }

  /** Adds the user's parts to a Book JSON in place. */
  apply(book: Json, state: UserBookState | undefined, options: UserStateOptions): Json {
    // A loop rather than `map`: most books' shelf lists are empty arrays of another kind than the filled ones, and
    // the first book on a shelf deoptimized the compiled `map`.
    const rows = state?.shelves;
    if (rows && rows.length > 0) {
      const shelves: Json[] = [];
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i] as ShelfRow;
        shelves.push(shelfJson(row, this.shelfCounts?.get(row.id) ?? 0));
      }
      book.shelves = shelves;
    } else if (options.emptyShelves === 'empty') book.shelves = [];
    if (!options.reading) return book;
    const progress = state?.progress;
    const fileProgress = state?.fileProgress;
    if (progress) applyProgressRow(book, progress);
    else if (options.unsetWithoutProgress) book.readStatus = 'UNSET';
    if (fileProgress) {
      applyFileProgress(book, fileProgress);
      const bookTime = progress?.last_read_time ?? null;
      if (!progress || (fileProgress.last_read_time !== null && (bookTime === null || fileProgress.last_read_time > bookTime))) {
        if (fileProgress.last_read_time !== null) book.lastReadTime = fileProgress.last_read_time;
      }
    }
    return book;
  }
}

function applyProgressRow(book: Json, p: ProgressRow): void {
  book.readStatus = reportedStatus(p.read_status);
  if (p.date_finished !== null) book.dateFinished = p.date_finished;
  if (p.personal_rating !== null) book.personalRating = p.personal_rating;
  if (p.kobo_progress_percent !== null) book.koboProgress = { percentage: round1(p.kobo_progress_percent) };
  if (p.koreader_progress_percent !== null) book.koreaderProgress = { percentage: round1(p.koreader_progress_percent * 100) };
  if (p.epub_progress !== null || p.epub_progress_percent !== null) {
    book.epubProgress = { cfi: p.epub_progress, href: p.epub_progress_href, percentage: round1(p.epub_progress_percent), contentSourceProgressPercent: null, ttsPositionCfi: null };
  }
  if (p.pdf_progress !== null || p.pdf_progress_percent !== null) book.pdfProgress = { page: p.pdf_progress, percentage: round1(p.pdf_progress_percent) };
  if (p.cbx_progress !== null || p.cbx_progress_percent !== null) book.cbxProgress = { page: p.cbx_progress, percentage: round1(p.cbx_progress_percent) };
  if (p.last_read_time !== null) book.lastReadTime = p.last_read_time;
}

function applyFileProgress(book: Json, f: FileProgressRow): void {
  const percentage = round1(f.progress_percent);
  switch (readerKind(f.book_type)) {
    case 'ebook':
      book.epubProgress = { cfi: f.position_data, href: f.position_href, percentage, contentSourceProgressPercent: round1(f.content_source_progress_percent), ttsPositionCfi: f.tts_position_cfi };
      break;
    case 'pdf':
      book.pdfProgress = { page: intOrNull(f.position_data), percentage };
      break;
    case 'cbx':
      book.cbxProgress = { page: intOrNull(f.position_data), percentage };
      break;
    case 'audiobook':
      book.audiobookProgress = { positionMs: intOrNull(f.position_data), trackIndex: intOrNull(f.position_href), trackPositionMs: null, percentage };
      break;
    default:
      break;
  }
}
