// Bookmarks: a place in a book (EPUB CFI, PDF page, or audiobook track and time) a user keeps, with title, colour,
// notes and priority.
import { nowIso } from '../time.ts';
import type { Db } from '../store/store.ts';
import { givenValues, ReaderNoteError, requireOwned } from './reader-note-error.ts';

export interface Bookmark {
  id: number;
  userId: number;
  bookId: number;
  cfi: string | null;
  positionMs: number | null;
  trackIndex: number | null;
  pageNumber: number | null;
  title: string | null;
  color: string | null;
  notes: string | null;
  priority: number | null;
  createdAt: string;
  updatedAt: string;
}

export interface NewBookmark {
  bookId: number;
  cfi?: string | null;
  positionMs?: number | null;
  trackIndex?: number | null;
  pageNumber?: number | null;
  title?: string | null;
}

export interface BookmarkChanges {
  title?: string | null;
  cfi?: string | null;
  color?: string | null;
  notes?: string | null;
  priority?: number | null;
  pageNumber?: number | null;
}

type Row = { id: number; user_id: number; book_id: number; cfi: string | null; position_ms: number | null; track_index: number | null; page_number: number | null; title: string | null; color: string | null; notes: string | null; priority: number | null; created_at: string; updated_at: string };

function fromRow(r: Row): Bookmark {
  return { id: r.id, userId: r.user_id, bookId: r.book_id, cfi: r.cfi, positionMs: r.position_ms, trackIndex: r.track_index, pageNumber: r.page_number, title: r.title, color: r.color, notes: r.notes, priority: r.priority, createdAt: r.created_at, updatedAt: r.updated_at };
}

export async function listBookmarks(db: Db, userId: number, bookId: number): Promise<Bookmark[]> {
  const rows = await db.selectFrom('book_marks').selectAll().where('user_id', '=', userId).where('book_id', '=', bookId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  return rows.map(fromRow);
}

export async function getBookmark(db: Db, userId: number, id: number): Promise<Bookmark> {
  const row = await db.selectFrom('book_marks').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return fromRow(requireOwned(row, 'Bookmark', id));
}

/** One bookmark per place: the same CFI, the same PDF page, or the same audiobook track and second. */
export async function createBookmark(db: Db, userId: number, input: NewBookmark): Promise<Bookmark> {
  const audio = input.positionMs !== undefined && input.positionMs !== null;
  if (!input.cfi && !audio && !input.pageNumber) throw new ReaderNoteError('INVALID', 'A bookmark needs a location: cfi, pageNumber or positionMs');
  return db.transaction().execute(async (tx) => {
    let clash = tx.selectFrom('book_marks').select('id').where('user_id', '=', userId).where('book_id', '=', input.bookId);
    if (input.cfi) clash = clash.where('cfi', '=', input.cfi);
    else if (audio) clash = clash.where('track_index', 'is', input.trackIndex ?? null).where('position_ms', '>=', Math.floor((input.positionMs as number) / 1000) * 1000).where('position_ms', '<', Math.floor((input.positionMs as number) / 1000) * 1000 + 1000);
    else clash = clash.where('page_number', '=', input.pageNumber as number).where('cfi', 'is', null);
    if (await clash.executeTakeFirst()) throw new ReaderNoteError('DUPLICATE', 'Bookmark already exists at this location');
    const row = await tx
      .insertInto('book_marks')
      .values({ user_id: userId, book_id: input.bookId, cfi: input.cfi ?? null, position_ms: input.positionMs ?? null, track_index: input.trackIndex ?? null, page_number: input.pageNumber ?? null, title: input.title ?? null })
      .returningAll()
      .executeTakeFirstOrThrow();
    return fromRow(row);
  });
}

export async function updateBookmark(db: Db, userId: number, id: number, changes: BookmarkChanges): Promise<Bookmark> {
  await getBookmark(db, userId, id);
  const given = givenValues(changes);
  await db
    .updateTable('book_marks')
    .set({ title: given.title, cfi: given.cfi, color: given.color, notes: given.notes, priority: given.priority, page_number: given.pageNumber, updated_at: nowIso() })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .execute();
  return getBookmark(db, userId, id);
}

export async function deleteBookmark(db: Db, userId: number, id: number): Promise<void> {
  const result = await db.deleteFrom('book_marks').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  if (result.numDeletedRows === 0n) throw new ReaderNoteError('NOT_FOUND', `Bookmark not found: ${id}`);
}
