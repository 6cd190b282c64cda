// What the Kobo JSON needs of a batch of books (at most a sync page): metadata, authors, first category and the
// primary file, read with one query per table. Plain SQL (a sync page runs these for 100 books at a time, where
// building and compiling them through the query builder cost as much as running them).
import { parseFormatPriority } from '../books/book-json.ts';
import { pickPrimary } from '../books/primary-file.ts';
import type { SqlDialect } from '../store/dialect.ts';
import { rowsOf, type SqlExec } from '../store/sql-exec.ts';
import { koboTimeOf } from './kobo-time.ts';

export interface KoboPrimaryFile {
  id: number;
  bookType: string | null;
  sizeKb: number | null;
  /** The file's exact size when it was last scanned. */
  sizeBytes: number | null;
  /** The last scan did not find the file. */
  missing: boolean;
  fixedLayout: boolean;
  hash: string | null;
  /** What names the file's content in the KEPUB cache (see kepubFingerprint); undefined before the file was scanned. */
  fingerprint: string | undefined;
}

/** The cache name of a file's content: its hash (or id), size and modification time. */
export function kepubFingerprint(hash: string | null, fileId: number, sizeBytes: number, mtimeMs: number): string {
  return `${hash ?? `file-${fileId}`}:${sizeBytes}:${Math.trunc(mtimeMs)}`;
}

export interface KoboBook {
  id: number;
  /** When the book was added, as Kobo writes instants (koboTimeOf); undefined when the catalog holds none. */
  created: string | undefined;
  coverHash: string | null;
  title: string | null;
  subtitle: string | null;
  description: string | null;
  publisher: string | null;
  publishedDate: string | null;
  language: string | null;
  isbn13: string | null;
  isbn10: string | null;
  seriesName: string | null;
  seriesNumber: number | null;
  authors: string[];
  /** The first of the book's categories by name (Kobo shows one genre). */
  genre: string | null;
  primary: KoboPrimaryFile | undefined;
}

interface FileRow {
  id: number;
  book_id: number;
  book_type: string | null;
  missing_at: string | null;
  file_size_kb: number | null;
  is_fixed_layout: number;
  current_hash: string | null;
  size_bytes: number | null;
  mtime_ms: number | null;
}

/** Primary files of books, chosen as everywhere else (the library's format priority, present files first). */
export function primaryFiles(files: readonly FileRow[], priorities: ReadonlyMap<number, string | null>, libraryOf: ReadonlyMap<number, number>): Map<number, KoboPrimaryFile> {
  const byBook = new Map<number, FileRow[]>();
  for (const f of files) {
    const list = byBook.get(f.book_id);
    if (list) list.push(f);
    else byBook.set(f.book_id, [f]);
  }
  const parsed = new Map<number, ReturnType<typeof parseFormatPriority>>();
  const out = new Map<number, KoboPrimaryFile>();
  for (const [bookId, list] of byBook) {
    const libraryId = libraryOf.get(bookId);
    let priority = libraryId === undefined ? null : parsed.get(libraryId);
    if (priority === undefined && libraryId !== undefined) parsed.set(libraryId, (priority = parseFormatPriority(priorities.get(libraryId) ?? null)));
    const primary = pickPrimary(list, priority ?? null);
    if (!primary) continue;
    const fingerprint = primary.size_bytes === null || primary.mtime_ms === null ? undefined : kepubFingerprint(primary.current_hash, primary.id, primary.size_bytes, primary.mtime_ms);
    out.set(bookId, {
      id: primary.id,
      bookType: primary.book_type,
      sizeKb: primary.file_size_kb,
      sizeBytes: primary.size_bytes,
      missing: Boolean(primary.missing_at),
      fixedLayout: primary.is_fixed_layout === 1,
      hash: primary.current_hash,
      fingerprint,
    });
  }
  return out;
}

/** What reads the books: a read scope's or the store's statements, and the engine's SQL spelling. */
export interface KoboReader {
  exec: SqlExec;
  dialect: SqlDialect;
}

export async function libraryPriorities(exec: SqlExec): Promise<Map<number, string | null>> {
  const rows = await rowsOf<{ id: number; format_priority: string | null }>(exec, 'SELECT id, format_priority FROM library', []);
  return new Map(rows.map((r) => [r.id, r.format_priority]));
}

export const FILE_COLUMNS = [
  'book_file.id', 'book_file.book_id', 'book_file.book_type', 'book_file.missing_at', 'book_file.file_size_kb', 'book_file.is_fixed_layout',
  'book_file.current_hash', 'book_file.size_bytes', 'book_file.mtime_ms',
] as const;

/** The statements of a batch of books for an engine; `?` is the JSON array of their ids. */
function statementsFor(dialect: SqlDialect) {
  const ids = `IN (${dialect.jsonValues('integer')})`;
  return {
    books: `SELECT book.id, book.library_id, book.added_on, book.book_cover_hash, m.title, m.subtitle, m.description, m.publisher, m.published_date,
        m.language, m.isbn_13, m.isbn_10, m.series_name, m.series_number
      FROM book LEFT JOIN book_metadata m ON m.book_id = book.id WHERE book.id ${ids}`,
    authors: `SELECT x.book_id, author.name FROM book_metadata_author_mapping x JOIN author ON author.id = x.author_id
      WHERE x.book_id ${ids} ORDER BY x.book_id, x.sort_order, x.author_id`,
    genres: `SELECT x.book_id, MIN(category.name) AS name FROM book_metadata_category_mapping x JOIN category ON category.id = x.category_id
      WHERE x.book_id ${ids} GROUP BY x.book_id`,
    files: `SELECT ${FILE_COLUMNS.join(', ')} FROM book_file WHERE book_file.is_book = 1 AND book_file.book_id ${ids}`,
  };
}

const statements = new Map<string, ReturnType<typeof statementsFor>>();

function statementsOf(dialect: SqlDialect): ReturnType<typeof statementsFor> {
  let known = statements.get(dialect.engine);
  if (!known) statements.set(dialect.engine, (known = statementsFor(dialect)));
  return known;
}

interface BookRow {
  id: number;
  library_id: number;
  added_on: string;
  book_cover_hash: string | null;
  title: string | null;
  subtitle: string | null;
  description: string | null;
  publisher: string | null;
  published_date: string | null;
  language: string | null;
  isbn_13: string | null;
  isbn_10: string | null;
  series_name: string | null;
  series_number: number | null;
}

/** The books among `ids` that still exist, in the order given. */
export async function loadKoboBooks(reader: KoboReader, ids: readonly number[]): Promise<KoboBook[]> {
  if (ids.length === 0) return [];
  const sql = statementsOf(reader.dialect);
  const list = [JSON.stringify(ids)];
  const [books, authors, genres, files, priorities] = await Promise.all([
    rowsOf<BookRow>(reader.exec, sql.books, list),
    rowsOf<NameRow>(reader.exec, sql.authors, list),
    rowsOf<NameRow>(reader.exec, sql.genres, list),
    rowsOf<FileRow>(reader.exec, sql.files, list),
    libraryPriorities(reader.exec),
  ]);
  const authorsOf = new Map<number, string[]>();
  for (const r of authors) {
    const found = authorsOf.get(r.book_id);
    if (found) found.push(r.name);
    else authorsOf.set(r.book_id, [r.name]);
  }
  const genreOf = new Map(genres.map((r) => [r.book_id, r.name]));
  const primaries = primaryFiles(files, priorities, new Map(books.map((b) => [b.id, b.library_id])));
  const byId = new Map(
    books.map((b): [number, KoboBook] => [
      b.id,
      {
        id: b.id,
        created: koboTimeOf(b.added_on),
        coverHash: b.book_cover_hash,
        title: b.title,
        subtitle: b.subtitle,
        description: b.description,
        publisher: b.publisher,
        publishedDate: b.published_date,
        language: b.language,
        isbn13: b.isbn_13,
        isbn10: b.isbn_10,
        seriesName: b.series_name,
        seriesNumber: b.series_number,
        authors: authorsOf.get(b.id) ?? [],
        genre: genreOf.get(b.id) ?? null,
        primary: primaries.get(b.id),
      },
    ]),
  );
  return ids.map((id) => byId.get(id)).filter((b): b is KoboBook => b !== undefined);
}

interface NameRow {
  book_id: number;
  name: string;
}

/** Just the primary files of `ids` (no metadata), by book id. */
export async function loadPrimaries(reader: KoboReader, ids: readonly number[]): Promise<Map<number, KoboPrimaryFile>> {
  if (ids.length === 0) return new Map();
  const list = [JSON.stringify(ids)];
  const [books, files, priorities] = await Promise.all([
    rowsOf<{ id: number; library_id: number }>(reader.exec, `SELECT id, library_id FROM book WHERE id IN (${reader.dialect.jsonValues('integer')})`, list),
    rowsOf<FileRow>(reader.exec, statementsOf(reader.dialect).files, list),
    libraryPriorities(reader.exec),
  ]);
  return primaryFiles(files, priorities, new Map(books.map((b) => [b.id, b.library_id])));
}
