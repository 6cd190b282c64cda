// What the Komga-compatible API serves, read from the catalog: the books a principal may see, grouped into Komga
// "series" (books with the same series name in one library), plus libraries and shelves. See docs/komga.md.
import type { Principal } from '../auth/principal.ts';
import { canSeeLibrary } from '../auth/visibility.ts';
import { visibleBookIds } from '../books/book-list.ts';
import type { Store } from '../store/store.ts';

export const UNKNOWN_SERIES = 'Unknown Series';

export interface KomgaBookRow {
  id: number;
  libraryId: number;
  addedOn: string;
  title: string | null;
  seriesName: string | null;
  seriesNumber: number | null;
  description: string | null;
  publisher: string | null;
  publishedDate: string | null;
  isbn13: string | null;
  isbn10: string | null;
  pageCount: number | null;
  language: string | null;
  ageRating: number | null;
  fileName: string | null;
  fileSizeKb: number | null;
  sizeBytes: number | null;
  bookType: string | null;
  hash: string | null;
  filePageCount: number | null;
  authors: string[];
  categories: string[];
  tags: string[];
}

export interface KomgaSeries {
  id: string;
  libraryId: number;
  name: string;
  /** Sorted by series number, then title, then id. */
  books: KomgaBookRow[];
}

/**
 * A series id is `<libraryId>-<slug>`: the slug is the lower-cased name with every run of characters that are not
 * letters or digits turned into `-`. Grimmory keeps only `a-z0-9`, which makes every non-Latin name the same slug;
 * Bindery keeps letters and digits of any script (see docs/komga.md).
 */
export function seriesSlug(name: string): string {
  const slug = name.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '-');
  return slug === '' ? '-' : slug;
}

export function seriesId(libraryId: number, name: string): string {
  return `${libraryId}-${seriesSlug(name)}`;
}

const CHUNK = 500;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

interface BookSqlRow {
  id: number;
  library_id: number;
  added_on: string;
  title: string | null;
  series_name: string | null;
  series_number: number | null;
  description: string | null;
  publisher: string | null;
  published_date: string | null;
  isbn_13: string | null;
  isbn_10: string | null;
  page_count: number | null;
  language: string | null;
  age_rating: number | null;
}

interface FileSqlRow {
  book_id: number;
  file_name: string;
  file_size_kb: number | null;
  size_bytes: number | null;
  book_type: string | null;
  current_hash: string | null;
  page_count: number | null;
}

/** The rows of these books (ids the caller has already checked), in the order given; unknown ids are skipped. */
export function loadBookRows(store: Store, ids: readonly number[]): KomgaBookRow[] {
  const byId = new Map<number, KomgaBookRow>();
  for (const part of chunks(ids)) {
    const marks = part.map(() => '?').join(',');
    const books = store.sqlite
      .prepare(
        `SELECT b.id, b.library_id, b.added_on, m.title, m.series_name, m.series_number, m.description, m.publisher, m.published_date,
                m.isbn_13, m.isbn_10, m.page_count, m.language, m.age_rating
           FROM book b LEFT JOIN book_metadata m ON m.book_id = b.id WHERE b.id IN (${marks})`,
      )
      .all(...part) as BookSqlRow[];
    for (const b of books) {
      byId.set(b.id, {
        id: b.id,
        libraryId: b.library_id,
        addedOn: b.added_on,
        title: b.title,
        seriesName: b.series_name,
        seriesNumber: b.series_number,
        description: b.description,
        publisher: b.publisher,
        publishedDate: b.published_date,
        isbn13: b.isbn_13,
        isbn10: b.isbn_10,
        pageCount: b.page_count,
        language: b.language,
        ageRating: b.age_rating,
        fileName: null,
        fileSizeKb: null,
        sizeBytes: null,
        bookType: null,
        hash: null,
        filePageCount: null,
        authors: [],
        categories: [],
        tags: [],
      });
    }
    // The first book-format file stands for the book (the oldest one, as the scanner adds the main file first).
    const files = store.sqlite
      .prepare(
        `SELECT book_id, file_name, file_size_kb, size_bytes, book_type, current_hash, page_count FROM book_file
          WHERE is_book = 1 AND book_id IN (${marks}) ORDER BY id DESC`,
      )
      .all(...part) as FileSqlRow[];
    for (const f of files) {
      const row = byId.get(f.book_id);
      if (!row) continue;
      row.fileName = f.file_name;
      row.fileSizeKb = f.file_size_kb;
      row.sizeBytes = f.size_bytes;
      row.bookType = f.book_type;
      row.hash = f.current_hash;
      row.filePageCount = f.page_count;
    }
    const names = (table: string, join: string): { book_id: number; name: string }[] =>
      store.sqlite
        .prepare(`SELECT m.book_id, t.name FROM ${table} m JOIN ${join} t ON t.id = m.${join}_id WHERE m.book_id IN (${marks}) ORDER BY m.book_id, ${table === 'book_metadata_author_mapping' ? 'm.sort_order, ' : ''}t.name`)
        .all(...part) as { book_id: number; name: string }[];
    for (const r of names('book_metadata_author_mapping', 'author')) byId.get(r.book_id)?.authors.push(r.name);
    for (const r of names('book_metadata_category_mapping', 'category')) byId.get(r.book_id)?.categories.push(r.name);
    for (const r of names('book_metadata_tag_mapping', 'tag')) byId.get(r.book_id)?.tags.push(r.name);
  }
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** The book's display name: title, else file name without extension, else its id. */
export function bookName(row: KomgaBookRow): string {
  if (row.title && row.title.trim() !== '') return row.title;
  if (row.fileName) return row.fileName.replace(/\.[^.]+$/, '');
  return `Book ${row.id}`;
}

/** The series name a book belongs to under the `komga_group_unknown` setting. */
export function seriesNameOf(row: KomgaBookRow, groupUnknown: boolean): string {
  const name = row.seriesName?.trim();
  if (name) return name;
  return groupUnknown ? UNKNOWN_SERIES : bookName(row);
}

const collator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

function compareInSeries(a: KomgaBookRow, b: KomgaBookRow): number {
  const an = a.seriesNumber ?? Number.POSITIVE_INFINITY;
  const bn = b.seriesNumber ?? Number.POSITIVE_INFINITY;
  if (an !== bn) return an < bn ? -1 : 1;
  return collator.compare(bookName(a), bookName(b)) || a.id - b.id;
}

/** Groups books into series, ordered by name (then library); books within a series by number. */
export function groupSeries(rows: readonly KomgaBookRow[], groupUnknown: boolean): KomgaSeries[] {
  const byId = new Map<string, KomgaSeries>();
  for (const row of rows) {
    const name = seriesNameOf(row, groupUnknown);
    const id = seriesId(row.libraryId, name);
    let series = byId.get(id);
    if (!series) byId.set(id, (series = { id, libraryId: row.libraryId, name, books: [] }));
    series.books.push(row);
  }
  const all = [...byId.values()];
  for (const s of all) s.books.sort(compareInSeries);
  return all.sort((a, b) => collator.compare(a.name, b.name) || a.libraryId - b.libraryId || (a.id < b.id ? -1 : 1));
}

/** Every book the principal may see (optionally in some libraries), ascending by id. */
export function visibleBooks(store: Store, principal: Principal, libraryIds?: readonly number[]): KomgaBookRow[] {
  const ids =
    libraryIds === undefined ? visibleBookIds(store, principal) : libraryIds.flatMap((libraryId) => visibleBookIds(store, principal, { libraryId })).sort((a, b) => a - b);
  return loadBookRows(store, ids);
}

/** The series with this id among what the principal may see. */
export function findSeries(store: Store, principal: Principal, id: string, groupUnknown: boolean): KomgaSeries | undefined {
  const dash = id.indexOf('-');
  const libraryId = Number(id.slice(0, dash));
  if (dash <= 0 || !Number.isSafeInteger(libraryId) || !canSeeLibrary(principal, libraryId)) return undefined;
  return groupSeries(visibleBooks(store, principal, [libraryId]), groupUnknown).find((s) => s.id === id);
}

export interface LibraryRow {
  id: number;
  name: string;
  root: string;
  createdAt: string;
}

/** The libraries the principal may see, by name. */
export function visibleLibraries(store: Store, principal: Principal): LibraryRow[] {
  const rows = store.sqlite
    .prepare(
      `SELECT l.id, l.name, l.created_at, (SELECT p.path FROM library_path p WHERE p.library_id = l.id ORDER BY p.id LIMIT 1) AS root
         FROM library l ORDER BY l.name COLLATE NOCASE, l.id`,
    )
    .all() as { id: number; name: string; created_at: string; root: string | null }[];
  return rows.filter((r) => canSeeLibrary(principal, r.id)).map((r) => ({ id: r.id, name: r.name, root: r.root ?? '', createdAt: r.created_at }));
}

export interface ShelfRow {
  id: number;
  name: string;
  bookIds: number[];
}

/** The principal's own shelves and public ones, by name, each with the ids of its books. */
export function visibleShelves(store: Store, principal: Principal): ShelfRow[] {
  const shelves = store.sqlite
    .prepare('SELECT id, name FROM shelf WHERE user_id = ? OR is_public = 1 ORDER BY name COLLATE NOCASE, id')
    .all(principal.userId) as { id: number; name: string }[];
  const mapping = store.sqlite.prepare('SELECT book_id FROM book_shelf_mapping WHERE shelf_id = ? ORDER BY book_id').pluck();
  return shelves.map((s) => ({ id: s.id, name: s.name, bookIds: mapping.all(s.id) as number[] }));
}
