// Books without files (a paper copy on the shelf), and the "physical" flag on any book.
import { emptyMetadata } from '../formats/types.ts';
import type { Db } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { writeBookMetadata } from './metadata-writer.ts';
import { emitEvent } from '../events/live-events.ts';

export interface NewPhysicalBook {
  libraryId: number;
  isbn?: string | null;
  title?: string | null;
  authors?: string[] | null;
  description?: string | null;
  publisher?: string | null;
  publishedDate?: string | null;
  language?: string | null;
  pageCount?: number | null;
  categories?: string[] | null;
}

/** `yyyy-MM-dd` as given, a bare year as its first of January; anything else is dropped. */
export function physicalPublishedDate(value: string | null | undefined): string | undefined {
  const trimmed = value?.trim();
  if (!trimmed) return undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(trimmed) && !Number.isNaN(Date.parse(`${trimmed}T00:00:00Z`))) return trimmed;
  if (/^\d{1,4}$/.test(trimmed)) return `${trimmed.padStart(4, '0')}-01-01`;
  return undefined;
}

function isbnOfLength(isbn: string | null | undefined, length: 10 | 13): string | undefined {
  if (!isbn) return undefined;
  const cleaned = isbn.replace(/[^0-9Xx]/g, '').toUpperCase();
  return cleaned.length === length ? cleaned : undefined;
}

const cut = (s: string): string => s.slice(0, 255);

export async function createPhysicalBook(db: Db, input: NewPhysicalBook): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const now = nowIso();
    const book = await trx.insertInto('book').values({ library_id: input.libraryId, library_path_id: null, is_physical: 1, added_on: now, scanned_on: now }).returning('id').executeTakeFirstOrThrow();
    const metadata = emptyMetadata();
    const optional = <T>(value: T | null | undefined): T | undefined => (value === null ? undefined : value);
    Object.assign(metadata, {
      title: optional(input.title),
      description: optional(input.description),
      publisher: optional(input.publisher),
      publishedDate: physicalPublishedDate(input.publishedDate),
      language: optional(input.language),
      pageCount: optional(input.pageCount),
      isbn13: isbnOfLength(input.isbn, 13),
      isbn10: isbnOfLength(input.isbn, 10),
    });
    metadata.authors = [...new Set((input.authors ?? []).map(cut).filter((a) => a.trim() !== ''))];
    metadata.categories = [...new Set((input.categories ?? []).map(cut).filter((c) => c.trim() !== ''))];
    await writeBookMetadata(trx, book.id, metadata, '');
    if (!input.title) await trx.updateTable('book_metadata').set({ title: null }).where('book_id', '=', book.id).execute();
    await trx.updateTable('book').set({ metadata_updated_at: now }).where('id', '=', book.id).execute();
    await emitEvent(trx, { kind: 'books-added', bookIds: [book.id] });
    return book.id;
  });
}

export async function setPhysical(db: Db, bookId: number, physical: boolean): Promise<void> {
  await db.updateTable('book').set({ is_physical: physical ? 1 : 0 }).where('id', '=', bookId).execute();
  await emitEvent(db, { kind: 'books-changed', bookIds: [bookId] });
}
