// Notes anchored to a passage (Grimmory's book notes v2): the CFI, the selected text, the note, a colour.
import { nowIso } from '../time.ts';
import type { Db } from '../store/store.ts';
import { givenValues, ReaderNoteError, requireOwned } from './reader-note-error.ts';

export interface AnchoredNote {
  id: number;
  userId: number;
  bookId: number;
  cfi: string;
  selectedText: string | null;
  noteContent: string;
  color: string | null;
  chapterTitle: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface NewAnchoredNote {
  bookId: number;
  cfi: string;
  selectedText?: string | null;
  noteContent: string;
  color?: string | null;
  chapterTitle?: string | null;
}

export interface AnchoredNoteChanges {
  noteContent?: string | null;
  color?: string | null;
  chapterTitle?: string | null;
}

type Row = { id: number; user_id: number; book_id: number; cfi: string; selected_text: string | null; note_content: string; color: string | null; chapter_title: string | null; created_at: string; updated_at: string };

function fromRow(r: Row): AnchoredNote {
  return { id: r.id, userId: r.user_id, bookId: r.book_id, cfi: r.cfi, selectedText: r.selected_text, noteContent: r.note_content, color: r.color, chapterTitle: r.chapter_title, createdAt: r.created_at, updatedAt: r.updated_at };
}

export async function listAnchoredNotes(db: Db, userId: number, bookId: number): Promise<AnchoredNote[]> {
  const rows = await db.selectFrom('book_notes_v2').selectAll().where('user_id', '=', userId).where('book_id', '=', bookId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  return rows.map(fromRow);
}

export async function getAnchoredNote(db: Db, userId: number, id: number): Promise<AnchoredNote> {
  const row = await db.selectFrom('book_notes_v2').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return fromRow(requireOwned(row, 'Note', id));
}

export async function createAnchoredNote(db: Db, userId: number, input: NewAnchoredNote): Promise<AnchoredNote> {
  if (input.noteContent.trim() === '') throw new ReaderNoteError('INVALID', 'A note needs content');
  const row = await db
    .insertInto('book_notes_v2')
    .values({ user_id: userId, book_id: input.bookId, cfi: input.cfi, selected_text: input.selectedText ?? null, note_content: input.noteContent, color: input.color ?? null, chapter_title: input.chapterTitle ?? null })
    .returningAll()
    .executeTakeFirstOrThrow();
  return fromRow(row);
}

export async function updateAnchoredNote(db: Db, userId: number, id: number, changes: AnchoredNoteChanges): Promise<AnchoredNote> {
  await getAnchoredNote(db, userId, id);
  const given = givenValues(changes);
  await db.updateTable('book_notes_v2').set({ note_content: given.noteContent, color: given.color, chapter_title: given.chapterTitle, updated_at: nowIso() }).where('id', '=', id).where('user_id', '=', userId).execute();
  return getAnchoredNote(db, userId, id);
}

export async function deleteAnchoredNote(db: Db, userId: number, id: number): Promise<void> {
  const result = await db.deleteFrom('book_notes_v2').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  if (result.numDeletedRows === 0n) throw new ReaderNoteError('NOT_FOUND', `Note not found: ${id}`);
}
