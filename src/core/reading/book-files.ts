// A book's readable files and the one that speaks for it, as the reading-state rules need them.
import { pickPrimary } from '../books/primary-file.ts';
import { BOOK_FILE_TYPES, type BookFileType } from '../formats/types.ts';
import type { Db } from '../store/store.ts';

/** The reader a file opens in; EPUB, FB2, MOBI and AZW3 share the ebook reader and its progress columns. */
export type ReaderKind = 'ebook' | 'pdf' | 'cbx' | 'audiobook';

export function readerKind(bookType: string | null): ReaderKind | undefined {
  switch (bookType) {
    case 'EPUB':
    case 'FB2':
    case 'MOBI':
    case 'AZW3':
      return 'ebook';
    case 'PDF':
      return 'pdf';
    case 'CBX':
      return 'cbx';
    case 'AUDIOBOOK':
      return 'audiobook';
    default:
      return undefined;
  }
}

export interface ReadableFile {
  id: number;
  book_type: string | null;
  missing_at: string | null;
}

export interface BookFiles {
  files: ReadableFile[];
  primary: ReadableFile | undefined;
}

function parsePriority(json: string | null): BookFileType[] | null {
  if (!json) return null;
  try {
    const list = JSON.parse(json) as unknown;
    return Array.isArray(list) ? list.filter((t): t is BookFileType => (BOOK_FILE_TYPES as readonly unknown[]).includes(t)) : null;
  } catch {
    return null;
  }
}

/** The book's readable files, or undefined when there is no such book. */
export async function loadBookFiles(db: Db, bookId: number): Promise<BookFiles | undefined> {
  const book = await db.selectFrom('book').innerJoin('library', 'library.id', 'book.library_id').select(['book.id', 'library.format_priority']).where('book.id', '=', bookId).executeTakeFirst();
  if (!book) return undefined;
  const files = await db.selectFrom('book_file').select(['id', 'book_type', 'missing_at']).where('book_id', '=', bookId).where('is_book', '=', 1).orderBy('id').execute();
  return { files, primary: pickPrimary(files, parsePriority(book.format_priority)) };
}
