// Which book file a KOReader document id names: the partial MD5 stored as `book_file.current_hash` at scan time, or
// the one the file was first scanned with (`initial_hash`), which a device holding a copy from before Bindery wrote
// metadata into the file still uses.
import type { Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import { pathWithin } from '../books/file-locations.ts';
import type { Db } from '../store/store.ts';

export interface DocumentFile {
  bookId: number;
  fileId: number;
  bookType: string | null;
  /** Absolute path of the file, when its library folder is still known. */
  path: string | undefined;
}

/**
 * The book-format file whose current hash is `document`, among books the principal may see that are neither deleted
 * nor missing and whose file is on disk; the newest book wins when several carry the same file. A book the principal
 * may not see is never returned, so it behaves exactly like a document the library does not have.
 */
export async function findDocument(db: Db, principal: Principal, document: string): Promise<DocumentFile | undefined> {
  return (await findByHash(db, principal, document, 'current_hash')) ?? (await findByHash(db, principal, document, 'initial_hash'));
}

async function findByHash(db: Db, principal: Principal, document: string, column: 'current_hash' | 'initial_hash'): Promise<DocumentFile | undefined> {
  const row = await db
    .selectFrom('book_file')
    .innerJoin('book', 'book.id', 'book_file.book_id')
    .leftJoin('library_path', 'library_path.id', 'book_file.library_path_id')
    .select(['book.id as bookId', 'book_file.id as fileId', 'book_file.book_type', 'book_file.file_sub_path', 'book_file.file_name', 'library_path.path as root'])
    .where(`book_file.${column}`, '=', document)
    .where('book_file.is_book', '=', 1)
    .where('book_file.missing_at', 'is', null)
    .where('book.deleted', '=', 0)
    .where('book.missing_at', 'is', null)
    .where(visibleBookFilter(principal))
    .orderBy('book.id', 'desc')
    .orderBy('book_file.id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    bookId: row.bookId,
    fileId: row.fileId,
    bookType: row.book_type,
    path: row.root === null ? undefined : pathWithin(row.root, row.file_sub_path, row.file_name),
  };
}
