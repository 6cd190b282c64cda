// The book entries of one feed page: the columns a feed shows of those books, read with one set query per kind of
// row (books with their metadata, authors and categories, book files, and for comics the reader's last page), turned
// into the feed model with their downloads, cover and, for comics, the page stream and the reader's last page.
import { batchFilter, grouped, repeated, type BatchFilter } from '../books/book-bundles.ts';
import { parseFormatPriority } from '../books/book-json.ts';
import { pickPrimary } from '../books/primary-file.ts';
import type { BookFileType } from '../formats/types.ts';
import { keptByVersion, keptOrBuilt, type Built } from '../books/book-versions.ts';
import type { Store } from '../store/store.ts';
import type { AcquisitionFile, BookEntry, PageStream } from './feed.ts';
import { acquisitionType, formatTitle } from './mime.ts';

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value : undefined);
const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/**
 * `YYYY-MM-DDTHH:MM:SS.sssZ` as `toISOString` writes it (what Bindery stores), with an hour below 24 and a day of
 * the month up to 28: parsing and writing it again gives the same text, and a page of fifty entries skipped ~0.1 ms of
 * Date.parse. Later days are left to the parser, which moves a day past the month's end into the next month.
 */
const CANONICAL_INSTANT = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;
const isCanonicalInstant = (value: string): boolean => value.length === 24 && CANONICAL_INSTANT.test(value);

/** An instant as Atom and OPDS 2 want it (`…Z`); stored values from other tools may lack the zone or be unreadable. */
export function instant(value: unknown, fallback: string): string {
  if (typeof value !== 'string' || value === '') return fallback;
  if (isCanonicalInstant(value)) return value;
  const zoned = /[zZ]|[+-]\d{2}:?\d{2}$/.test(value) ? value : `${value.replace(' ', 'T')}Z`;
  const ms = Date.parse(zoned);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : fallback;
}

/** What an entry shows of a book and its metadata (null where the book has no metadata row). */
interface BookRow {
  id: number;
  added_on: string | null;
  format_priority: string | null;
  title: string | null;
  subtitle: string | null;
  published_date: string | null;
  publisher: string | null;
  language: string | null;
  description: string | null;
  isbn_13: string | null;
  isbn_10: string | null;
  series_name: string | null;
  series_number: number | null;
  page_count: number | null;
  cover_updated_on: string | null;
  audiobook_cover_updated_on: string | null;
}

interface FileRow {
  book_id: number;
  id: number;
  book_type: string | null;
  archive_type: string | null;
  file_name: string;
  is_folder_based: number;
  missing_at: string | null;
  duration_seconds: number | null;
  page_count: number | null;
}

interface NameRow {
  book_id: number;
  /** 0: an author, 1: a category. */
  kind: number;
  name: string;
  /** An author's position on the book, then its id (0 for categories). */
  position: number;
  tie: number;
}

/** The statements, by batch shape (a range of ids or a set; see batchFilter). */
const statements = new Map<boolean, { books: string; names: string; files: string }>();

function statementsFor(filter: BatchFilter): { books: string; names: string; files: string } {
  let known = statements.get(filter.dense);
  if (!known) {
    known = {
      books: `SELECT b.id, b.added_on, l.format_priority, m.title, m.subtitle, m.published_date, m.publisher, m.language, m.description, m.isbn_13, m.isbn_10,
          m.series_name, m.series_number, m.page_count, m.cover_updated_on, m.audiobook_cover_updated_on
        FROM book b JOIN library l ON l.id = b.library_id LEFT JOIN book_metadata m ON m.book_id = b.id WHERE ${filter.on('b.id')}`,
      // Put in order here, per book (a sort of the page's rows in SQL costs more): authors by position, then id (the
      // order of the mapping's key), categories by name.
      names: `SELECT m.book_id AS book_id, 0 AS kind, n.name AS name, m.sort_order AS position, m.author_id AS tie FROM book_metadata_author_mapping m JOIN author n ON n.id = m.author_id WHERE ${filter.on('m.book_id')}
        UNION ALL
        SELECT m.book_id AS book_id, 1 AS kind, n.name AS name, 0 AS position, 0 AS tie FROM book_metadata_category_mapping m JOIN category n ON n.id = m.category_id WHERE ${filter.on('m.book_id')}`,
      files: `SELECT book_id, id, book_type, archive_type, file_name, is_folder_based, missing_at, duration_seconds, page_count
        FROM book_file WHERE is_book = 1 AND ${filter.on('book_id')} ORDER BY book_id, id`,
    };
    statements.set(filter.dense, known);
  }
  return known;
}

function titleOf(book: BookRow, primary: FileRow | undefined): string {
  const title = text(book.title);
  if (title) return title;
  const name = primary?.file_name;
  if (name) {
    const dot = name.lastIndexOf('.');
    return dot > 0 ? name.slice(0, dot) : name;
  }
  return `Book ${book.id}`;
}

/** The primary file first (by the library's format priority), then the other book files by age. */
function orderedFiles(files: FileRow[], priority: BookFileType[] | null): FileRow[] {
  if (files.length < 2) return files;
  const primary = pickPrimary(files, priority);
  return primary ? [primary, ...files.filter((f) => f !== primary)] : files;
}

interface ComicProgress {
  page: number;
  at: string | null;
}

/**
 * The reader's last page of each comic stream: the file's own progress, else for the book's primary file the book's
 * comic progress. One statement for both kinds of row.
 */
async function comicProgress(store: Store, userId: number, streams: { bookId: number; fileId: number; primary: boolean }[]): Promise<Map<number, ComicProgress>> {
  const ids = store.dialect.jsonValues('integer');
  const rows = (await store.exec.all(
    `SELECT 0 AS kind, book_file_id AS id, position_data AS page, NULL AS book_page, last_read_time AS at FROM user_book_file_progress WHERE user_id = ? AND book_file_id IN (${ids})
     UNION ALL
     SELECT 1 AS kind, book_id AS id, NULL AS page, cbx_progress AS book_page, last_read_time AS at FROM user_book_progress WHERE user_id = ? AND cbx_progress > 0 AND book_id IN (${ids})`,
    [userId, JSON.stringify(streams.map((s) => s.fileId)), userId, JSON.stringify(streams.filter((s) => s.primary).map((s) => s.bookId))],
  )) as { kind: number; id: number; page: string | null; book_page: number | null; at: string | null }[];
  const byFile = new Map<number, ComicProgress>();
  const byBook = new Map<number, ComicProgress>();
  for (const r of rows) {
    if (r.kind === 1) byBook.set(r.id, { page: r.book_page as number, at: r.at });
    else {
      const page = r.page !== null && /^\s*\d+\s*$/.test(r.page) ? Number(r.page) : undefined;
      if (page !== undefined && page > 0) byFile.set(r.id, { page, at: r.at });
    }
  }
  const out = new Map<number, ComicProgress>();
  for (const s of streams) {
    const last = byFile.get(s.fileId) ?? (s.primary ? byBook.get(s.bookId) : undefined);
    if (last) out.set(s.fileId, last);
  }
  return out;
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const byPosition = (a: NameRow, b: NameRow): number => a.position - b.position || a.tie - b.tie;

/** The page stream of the first comic file (a single archive) whose pages are counted. */
function streamedComic(files: readonly FileRow[]): FileRow | undefined {
  for (let i = 0; i < files.length; i++) {
    const file = files[i] as FileRow;
    if (file.book_type === 'CBX' && file.is_folder_based !== 1 && (file.page_count ?? 0) > 0) return file;
  }
  return undefined;
}

/**
 * A book's entry (without its page stream). Its own function, with plain loops rather than array callbacks: V8
 * compiled bookEntries with all of this inlined in ~17 ms on the daemon's thread, again after each deoptimization.
 */
function entryOf(book: BookRow, bookFiles: readonly FileRow[], nameRows: readonly NameRow[], now: string): BookEntry {
  const primary = bookFiles[0];
  const authorRows: NameRow[] = [];
  const categories: string[] = [];
  for (let i = 0; i < nameRows.length; i++) {
    const row = nameRows[i] as NameRow;
    if (row.kind === 0) authorRows.push(row);
    else categories.push(row.name);
  }
  if (authorRows.length > 1) authorRows.sort(byPosition);
  if (categories.length > 1) categories.sort(byName);
  const authors: string[] = [];
  for (let i = 0; i < authorRows.length; i++) authors.push((authorRows[i] as NameRow).name);
  const files: AcquisitionFile[] = [];
  // The first audiobook file's length, in the same pass.
  let audio: FileRow | undefined;
  for (let i = 0; i < bookFiles.length; i++) {
    const file = bookFiles[i] as FileRow;
    files.push({ id: file.id, type: acquisitionType(file), title: formatTitle(file) });
    if (audio === undefined && file.book_type === 'AUDIOBOOK') audio = file;
  }
  const seriesName = text(book.series_name);
  return {
    type: 'book',
    bookId: book.id,
    title: titleOf(book, primary),
    subtitle: text(book.subtitle),
    updated: instant(book.added_on, now),
    published: text(book.published_date),
    authors,
    publisher: text(book.publisher),
    language: text(book.language),
    categories,
    description: text(book.description),
    isbn13: text(book.isbn_13),
    isbn10: text(book.isbn_10),
    series: seriesName ? { name: seriesName, position: num(book.series_number) } : undefined,
    pageCount: num(book.page_count),
    durationSeconds: audio?.duration_seconds ?? undefined,
    audiobook: primary?.book_type === 'AUDIOBOOK',
    files,
    coverStamp: text(book.cover_updated_on) ?? text(book.audiobook_cover_updated_on),
  };
}

const NO_FILES: FileRow[] = [];
const NO_NAMES: NameRow[] = [];

/** A book's entry as its rows give it, shared by every reader: the reader's own last comic page is added per page. */
interface KeptEntry {
  entry: BookEntry;
  /** The page stream of the book's comic file, if it has one. */
  comic: { fileId: number; primary: boolean; count: number } | undefined;
}

/** Books whose entries are kept per catalog: a few pages of every list a few readers page through. */
const KEPT_ENTRIES = 4096;

/** The entries of the given books (those that exist), built from their rows. */
async function builtEntries(store: Store, ids: readonly number[], now: string): Promise<Built<KeptEntry>[]> {
  const filter = batchFilter(store.dialect, ids);
  const sql = statementsFor(filter);
  const books = (await store.exec.all(sql.books, filter.params)) as unknown as BookRow[];
  if (books.length === 0) return [];
  const names = grouped((await store.exec.all(sql.names, repeated(filter.params, 2))) as unknown as NameRow[]);
  const files = grouped((await store.exec.all(sql.files, filter.params)) as unknown as FileRow[]);

  const wanted = new Set(ids);
  const priorities = new Map<string | null, BookFileType[] | null>();
  const built: Built<KeptEntry>[] = [];
  for (const book of books) {
    // A range of ids may hold books not asked for.
    if (!wanted.has(book.id)) continue;
    let priority = priorities.get(book.format_priority);
    if (priority === undefined) priorities.set(book.format_priority, (priority = parseFormatPriority(book.format_priority)));
    const bookFiles = orderedFiles(files.get(book.id) ?? NO_FILES, priority);
    const comic = streamedComic(bookFiles);
    const entry = entryOf(book, bookFiles, names.get(book.id) ?? NO_NAMES, now);
    const value = { entry, comic: comic ? { fileId: comic.id, primary: comic === bookFiles[0], count: comic.page_count as number } : undefined };
    // A book without a readable date added shows the time of the page, which must not be kept.
    built.push({ id: book.id, value, keep: instant(book.added_on, '') !== '' });
  }
  return built;
}

/**
 * Feed entries for the given books that exist, in the order given. What the books' rows give is kept per book under
 * its version (book-versions.ts), so a page built again after a write elsewhere in the catalog reads the versions and
 * builds only the books that changed; the reader's last comic page is read for every page.
 */
export async function bookEntries(store: Store, ids: readonly number[], userId: number, now: string): Promise<BookEntry[]> {
  const kept = keptByVersion<KeptEntry>(store, 'opds-entry', KEPT_ENTRIES);
  const byId = await keptOrBuilt(store, kept, [...ids].sort((a, b) => a - b), (missing) => builtEntries(store, missing, now));
  const streams: { bookId: number; fileId: number; primary: boolean }[] = [];
  for (const [bookId, { comic }] of byId) if (comic) streams.push({ bookId, fileId: comic.fileId, primary: comic.primary });
  const progress = streams.length > 0 ? await comicProgress(store, userId, streams) : undefined;
  const out: BookEntry[] = [];
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i] as number;
    const found = byId.get(id);
    if (!found) continue;
    if (!found.comic) {
      out.push(found.entry);
      continue;
    }
    const stream: PageStream = { fileId: found.comic.fileId, count: found.comic.count };
    const last = progress?.get(found.comic.fileId);
    if (last) {
      stream.lastRead = Math.min(last.page, stream.count);
      if (last.at) stream.lastReadUpdate = instant(last.at, now);
    }
    out.push({ ...found.entry, stream });
  }
  return out;
}
