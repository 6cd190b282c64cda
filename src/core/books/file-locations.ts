// Where a book's files are on disk, never outside their library folder.
import { readdir, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { Db } from '../store/store.ts';
import { parseFormatPriority } from './book-json.ts';
import { pickPrimary } from './primary-file.ts';

export interface LocatedFile {
  id: number;
  bookId: number;
  fileName: string;
  bookType: string | null;
  isBook: boolean;
  folderBased: boolean;
  /** Absolute path, or undefined when the file's library folder is gone or the stored path leaves it. */
  path: string | undefined;
}

export interface BookFiles {
  bookId: number;
  title: string | null;
  files: LocatedFile[];
  primary: LocatedFile | undefined;
}

/** `root/sub/name` when it stays inside `root`. */
export function pathWithin(root: string, subPath: string, fileName: string): string | undefined {
  const base = resolve(root);
  const full = resolve(join(base, subPath, fileName));
  const rel = relative(base, full);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? full : undefined;
}

export async function bookFiles(db: Db, bookId: number): Promise<BookFiles | undefined> {
  const book = await db
    .selectFrom('book')
    .innerJoin('library', 'library.id', 'book.library_id')
    .leftJoin('book_metadata', 'book_metadata.book_id', 'book.id')
    .select(['book.id', 'library.format_priority', 'book_metadata.title'])
    .where('book.id', '=', bookId)
    .executeTakeFirst();
  if (!book) return undefined;
  const rows = await db
    .selectFrom('book_file')
    .leftJoin('library_path', 'library_path.id', 'book_file.library_path_id')
    .select(['book_file.id', 'book_file.file_name', 'book_file.file_sub_path', 'book_file.book_type', 'book_file.is_book', 'book_file.is_folder_based', 'book_file.missing_at', 'library_path.path as root'])
    .where('book_file.book_id', '=', bookId)
    .orderBy('book_file.id')
    .execute();
  const files: LocatedFile[] = rows.map((r) => ({
    id: r.id,
    bookId,
    fileName: r.file_name,
    bookType: r.book_type,
    isBook: r.is_book === 1,
    folderBased: r.is_folder_based === 1,
    path: r.root === null ? undefined : pathWithin(r.root, r.file_sub_path, r.file_name),
  }));
  // The same choice of primary file as the Book JSON makes: by format priority, present files first.
  const ranked = rows.filter((r) => r.is_book === 1);
  const primaryId = pickPrimary(ranked, parseFormatPriority(book.format_priority))?.id;
  return { bookId, title: book.title, files, primary: files.find((f) => f.id === primaryId) };
}

export interface TrackFile {
  name: string;
  path: string;
  size: number;
  mtime: Date;
}

/** The regular files directly inside a folder audiobook's folder, by name. */
export async function folderFiles(dir: string): Promise<TrackFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const out: TrackFile[] = [];
  for (const entry of entries.filter((e) => e.isFile()).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(dir, entry.name);
    const info = await stat(path);
    out.push({ name: entry.name, path, size: info.size, mtime: info.mtime });
  }
  return out;
}
