// What the Kobo JSON needs of a batch of books (at most a sync page): metadata, authors, first category and the
// primary file, read with one query per table.
import { sql } from 'kysely';
import { parseFormatPriority } from '../books/book-json.ts';
import { pickPrimary } from '../books/primary-file.ts';
import { idsSubquery } from '../store/dialect-forms.ts';
import { dialectOf } from '../store/dialect.ts';
import type { Db } from '../store/store.ts';

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
  addedOn: string;
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
  categories: string[];
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

export async function libraryPriorities(db: Db): Promise<Map<number, string | null>> {
  const rows = await db.selectFrom('library').select(['id', 'format_priority']).execute();
  return new Map(rows.map((r) => [r.id, r.format_priority]));
}

export const FILE_COLUMNS = [
  'book_file.id', 'book_file.book_id', 'book_file.book_type', 'book_file.missing_at', 'book_file.file_size_kb', 'book_file.is_fixed_layout',
  'book_file.current_hash', 'book_file.size_bytes', 'book_file.mtime_ms',
] as const;

/** The books among `ids` that still exist, in the order given. */
export async function loadKoboBooks(db: Db, ids: readonly number[]): Promise<KoboBook[]> {
  if (ids.length === 0) return [];
  const list = idsSubquery(dialectOf(db), ids);
  const [books, authors, categories, files, priorities] = await Promise.all([
    db
      .selectFrom('book')
      .leftJoin('book_metadata as m', 'm.book_id', 'book.id')
      .select([
        'book.id', 'book.library_id', 'book.added_on', 'book.book_cover_hash', 'm.title', 'm.subtitle', 'm.description', 'm.publisher',
        'm.published_date', 'm.language', 'm.isbn_13', 'm.isbn_10', 'm.series_name', 'm.series_number',
      ])
      .where(sql<boolean>`book.id in ${list}`)
      .execute(),
    db
      .selectFrom('book_metadata_author_mapping as x')
      .innerJoin('author', 'author.id', 'x.author_id')
      .select(['x.book_id', 'author.name'])
      .where(sql<boolean>`x.book_id in ${list}`)
      .orderBy('x.book_id')
      .orderBy('x.sort_order')
      .orderBy('x.author_id')
      .execute(),
    db
      .selectFrom('book_metadata_category_mapping as x')
      .innerJoin('category', 'category.id', 'x.category_id')
      .select(['x.book_id', 'category.name'])
      .where(sql<boolean>`x.book_id in ${list}`)
      .orderBy('x.book_id')
      .orderBy('category.name')
      .execute(),
    db.selectFrom('book_file').select(FILE_COLUMNS).where('book_file.is_book', '=', 1).where(sql<boolean>`book_file.book_id in ${list}`).execute(),
    libraryPriorities(db),
  ]);
  const names = (rows: { book_id: number; name: string }[]): Map<number, string[]> => {
    const out = new Map<number, string[]>();
    for (const r of rows) {
      const found = out.get(r.book_id);
      if (found) found.push(r.name);
      else out.set(r.book_id, [r.name]);
    }
    return out;
  };
  const authorsOf = names(authors);
  const categoriesOf = names(categories);
  const primaries = primaryFiles(files, priorities, new Map(books.map((b) => [b.id, b.library_id])));
  const byId = new Map(
    books.map((b): [number, KoboBook] => [
      b.id,
      {
        id: b.id,
        addedOn: b.added_on,
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
        categories: categoriesOf.get(b.id) ?? [],
        primary: primaries.get(b.id),
      },
    ]),
  );
  return ids.map((id) => byId.get(id)).filter((b): b is KoboBook => b !== undefined);
}

/** Just the primary files of `ids` (no metadata), by book id. */
export async function loadPrimaries(db: Db, ids: readonly number[]): Promise<Map<number, KoboPrimaryFile>> {
  if (ids.length === 0) return new Map();
  const list = idsSubquery(dialectOf(db), ids);
  const [books, files, priorities] = await Promise.all([
    db.selectFrom('book').select(['id', 'library_id']).where(sql<boolean>`id in ${list}`).execute(),
    db.selectFrom('book_file').select(FILE_COLUMNS).where('book_file.is_book', '=', 1).where(sql<boolean>`book_file.book_id in ${list}`).execute(),
    libraryPriorities(db),
  ]);
  return primaryFiles(files, priorities, new Map(books.map((b) => [b.id, b.library_id])));
}
