// Which of a book's files speaks for it: the best format by the library's priority, then the oldest file.
import type { BookFileType } from '../formats/types.ts';
import { DEFAULT_FORMAT_PRIORITY } from '../libraries/libraries.ts';

export interface RankedFile {
  id: number;
  book_type: string | null;
  missing_at?: string | null;
}

export function formatRank(bookType: string | null, priority: readonly BookFileType[] | null): number {
  const order = priority && priority.length > 0 ? priority : DEFAULT_FORMAT_PRIORITY;
  const i = order.indexOf(bookType as BookFileType);
  return i === -1 ? order.length : i;
}

export function pickPrimary<T extends RankedFile>(files: T[], priority: readonly BookFileType[] | null): T | undefined {
  const present = files.filter((f) => !f.missing_at);
  const pool = present.length > 0 ? present : files;
  return [...pool].sort((a, b) => formatRank(a.book_type, priority) - formatRank(b.book_type, priority) || a.id - b.id)[0];
}
