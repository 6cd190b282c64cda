// Free-form notes on a book (the first kind Grimmory had): a title and text, not anchored to a place.
import { nowIso } from '../time.ts';
import type { Db } from '../store/store.ts';
import { ReaderNoteError, requireOwned } from './reader-note-error.ts';

export interface BookNote {
  id: number;
  userId: number;
  bookId: number;
  title: string | null;
  content: string;
  createdAt: string;
  updatedAt: string;
}

export interface BookNoteInput {
  /** Given: that note of the user's is replaced; absent: a new note. */
  id?: number | null;
  bookId: number;
  title?: string | null;
  content: string;
}

type Row = { id: number; user_id: number; book_id: number; title: string | null; content: string; created_at: string; updated_at: string };

const fromRow = (r: Row): BookNote => ({ id: r.id, userId: r.user_id, bookId: r.book_id, title: r.title, content: r.content, createdAt: r.created_at, updatedAt: r.updated_at });

export async function listBookNotes(db: Db, userId: number, bookId: number): Promise<BookNote[]> {
  const rows = await db.selectFrom('book_notes').selectAll().where('user_id', '=', userId).where('book_id', '=', bookId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  return rows.map(fromRow);
}

export async function saveBookNote(db: Db, userId: number, input: BookNoteInput): Promise<BookNote> {
  if (input.content.trim() === '') throw new ReaderNoteError('INVALID', 'A note needs content');
  if (input.id !== undefined && input.id !== null) {
    const id = input.id;
    const existing = await db.selectFrom('book_notes').select('id').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
    requireOwned(existing, 'Note', id);
    const row = await db.updateTable('book_notes').set({ title: input.title ?? null, content: input.content, book_id: input.bookId, updated_at: nowIso() }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
    return fromRow(row);
  }
  const row = await db.insertInto('book_notes').values({ user_id: userId, book_id: input.bookId, title: input.title ?? null, content: input.content }).returningAll().executeTakeFirstOrThrow();
  return fromRow(row);
}

export async function deleteBookNote(db: Db, userId: number, id: number): Promise<void> {
  const result = await db.deleteFrom('book_notes').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  if (result.numDeletedRows === 0n) throw new ReaderNoteError('NOT_FOUND', `Note not found: ${id}`);
}
