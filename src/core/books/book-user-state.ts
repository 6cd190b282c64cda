// The per-user parts of a Book: read status, progress, personal rating, finish date and the shelves the user can see.
import type Database from 'better-sqlite3';
import { readerKind } from '../reading/book-files.ts';
import { reportedStatus, roundPercent } from '../reading/read-status.ts';
import { shelfJson } from '../shelves/shelves.ts';
import type { Json } from './book-json.ts';

/**
 * As in book-bundles.ts: a dense run of ids (a single book included) as an index range, any other set as one JSON
 * array parameter. `%` stands for the column.
 */
const BY_RANGE = '% BETWEEN @lo AND @hi';
const BY_SET = '% IN (SELECT value FROM json_each(@ids))';

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
  progress: Database.Statement;
  fileProgress: Database.Statement;
  shelves: Database.Statement;
}

const prepared = new WeakMap<Database.Database, { range: Statements; set: Statements }>();

function prepareAll(sqlite: Database.Database, where: string): Statements {
  const on = (column: string): string => where.replace('%', column);
  return {
    progress: sqlite.prepare(`SELECT * FROM user_book_progress WHERE user_id = @userId AND ${on('book_id')}`),
    // CROSS JOIN keeps the book's files as the outer loop; left to itself SQLite walks all of the user's progress rows.
    // The unary `+` here and in `shelves` changes no plan, but without it SQLite (built with STAT4, as better-sqlite3
    // is) re-prepares these joins on every run because @userId is bound anew: 6-10 µs each time.
    fileProgress: sqlite.prepare(
      `SELECT f.book_id AS book_id, f.book_type AS book_type, p.position_data, p.position_href, p.progress_percent, p.last_read_time, p.tts_position_cfi, p.content_source_progress_percent
       FROM book_file f CROSS JOIN user_book_file_progress p ON p.book_file_id = f.id AND p.user_id = +@userId WHERE ${on('f.book_id')}`,
    ),
    shelves: sqlite.prepare(
      `SELECT m.book_id AS book_id, s.id, s.name, s.icon, s.icon_type, s.sort, s.user_id, s.is_public
       FROM book_shelf_mapping m JOIN shelf s ON s.id = m.shelf_id WHERE ${on('m.book_id')} AND (+s.user_id = @userId OR s.is_public = 1) ORDER BY m.book_id, s.id`,
    ),
  };
}

function statementsFor(sqlite: Database.Database): { range: Statements; set: Statements } {
  let s = prepared.get(sqlite);
  if (!s) {
    s = { range: prepareAll(sqlite, BY_RANGE), set: prepareAll(sqlite, BY_SET) };
    prepared.set(sqlite, s);
  }
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
  private readonly statements: { range: Statements; set: Statements };
  private readonly userId: number;
  private readonly shelfCounts: () => ReadonlyMap<number, number>;

  /** `shelfCounts` gives, per shelf, how many of its books the user may see; it is asked at most once per request. */
  constructor(sqlite: Database.Database, userId: number, shelfCounts: () => ReadonlyMap<number, number>) {
    this.userId = userId;
    this.statements = statementsFor(sqlite);
    let counts: ReadonlyMap<number, number> | undefined;
    this.shelfCounts = () => (counts ??= shelfCounts());
  }

  forBooks(ids: readonly number[]): Map<number, UserBookState> {
    const out = new Map<number, UserBookState>();
    if (ids.length === 0) return out;
    let lo = ids[0] as number;
    let hi = lo;
    for (const id of ids) {
      if (id < lo) lo = id;
      else if (id > hi) hi = id;
    }
    // Rows of ids in the range but not asked for only add entries nobody looks up.
    const dense = hi - lo + 1 <= ids.length * 2;
    const s = dense ? this.statements.range : this.statements.set;
    const params = dense ? { userId: this.userId, lo, hi } : { userId: this.userId, ids: JSON.stringify(ids) };
    const state = (id: number): UserBookState => {
      let st = out.get(id);
      if (!st) out.set(id, (st = { progress: undefined, fileProgress: undefined, shelves: [] }));
      return st;
    };
    for (const row of s.progress.all(params) as ProgressRow[]) state(row.book_id).progress = row;
    for (const row of s.fileProgress.all(params) as FileProgressRow[]) {
      const st = state(row.book_id);
      st.fileProgress = st.fileProgress ? newer(st.fileProgress, row) : row;
    }
    for (const row of s.shelves.all(params) as ShelfRow[]) state(row.book_id).shelves.push(row);
    return out;
  }

  /** Adds the user's parts to a Book JSON in place. */
  apply(book: Json, state: UserBookState | undefined, options: UserStateOptions): Json {
    const shelves = (state?.shelves ?? []).map((s) => shelfJson(s, this.shelfCounts().get(s.id) ?? 0));
    if (shelves.length > 0 || options.emptyShelves === 'empty') book.shelves = shelves;
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
