// The PDF reader's annotation layer: an opaque map of strings the reader saves and restores whole, per user and book.
import { nowIso } from '../time.ts';
import type { Db } from '../store/store.ts';

export async function readPdfAnnotations(db: Db, userId: number, bookId: number): Promise<Record<string, string> | undefined> {
  const row = await db.selectFrom('pdf_annotations').select('data').where('user_id', '=', userId).where('book_id', '=', bookId).executeTakeFirst();
  if (!row) return undefined;
  try {
    return JSON.parse(row.data) as Record<string, string>;
  } catch {
    return undefined;
  }
}

export async function savePdfAnnotations(db: Db, userId: number, bookId: number, data: Record<string, string>): Promise<void> {
  const json = JSON.stringify(data);
  await db
    .insertInto('pdf_annotations')
    .values({ user_id: userId, book_id: bookId, data: json })
    .onConflict((oc) => oc.columns(['user_id', 'book_id']).doUpdateSet({ data: json, updated_at: nowIso() }))
    .execute();
}

export async function deletePdfAnnotations(db: Db, userId: number, bookId: number): Promise<void> {
  await db.deleteFrom('pdf_annotations').where('user_id', '=', userId).where('book_id', '=', bookId).execute();
}
