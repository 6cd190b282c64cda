// Highlights: a passage of an EPUB (by CFI) a user marked, with colour, style and an optional note.
import { nowIso } from '../time.ts';
import type { Db } from '../store/store.ts';
import { givenValues, ReaderNoteError, requireOwned } from './reader-note-error.ts';

export const DEFAULT_HIGHLIGHT_COLOR = '#FFFF00';
export const DEFAULT_HIGHLIGHT_STYLE = 'highlight';

export interface Annotation {
  id: number;
  userId: number;
  bookId: number;
  cfi: string;
  text: string;
  color: string | null;
  style: string | null;
  note: string | null;
  chapterTitle: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface NewAnnotation {
  bookId: number;
  cfi: string;
  text: string;
  color?: string | null;
  style?: string | null;
  note?: string | null;
  chapterTitle?: string | null;
}

export interface AnnotationChanges {
  color?: string | null;
  style?: string | null;
  note?: string | null;
}

type Row = { id: number; user_id: number; book_id: number; cfi: string; text: string; color: string | null; style: string | null; note: string | null; chapter_title: string | null; created_at: string; updated_at: string };

function fromRow(r: Row): Annotation {
  return { id: r.id, userId: r.user_id, bookId: r.book_id, cfi: r.cfi, text: r.text, color: r.color, style: r.style, note: r.note, chapterTitle: r.chapter_title, createdAt: r.created_at, updatedAt: r.updated_at };
}

export async function listAnnotations(db: Db, userId: number, bookId: number): Promise<Annotation[]> {
  const rows = await db.selectFrom('annotations').selectAll().where('user_id', '=', userId).where('book_id', '=', bookId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  return rows.map(fromRow);
}

export async function getAnnotation(db: Db, userId: number, id: number): Promise<Annotation> {
  const row = await db.selectFrom('annotations').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  return fromRow(requireOwned(row, 'Annotation', id));
}

/** One highlight per CFI and user; colour and style default to a yellow highlight. */
export async function createAnnotation(db: Db, userId: number, input: NewAnnotation): Promise<Annotation> {
  return db.transaction().execute(async (tx) => {
    const clash = await tx.selectFrom('annotations').select('id').where('user_id', '=', userId).where('book_id', '=', input.bookId).where('cfi', '=', input.cfi).executeTakeFirst();
    if (clash) throw new ReaderNoteError('DUPLICATE', 'Annotation already exists at this location');
    const row = await tx
      .insertInto('annotations')
      .values({
        user_id: userId,
        book_id: input.bookId,
        cfi: input.cfi,
        text: input.text,
        color: input.color ?? DEFAULT_HIGHLIGHT_COLOR,
        style: input.style ?? DEFAULT_HIGHLIGHT_STYLE,
        note: input.note ?? null,
        chapter_title: input.chapterTitle ?? null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return fromRow(row);
  });
}

export async function updateAnnotation(db: Db, userId: number, id: number, changes: AnnotationChanges): Promise<Annotation> {
  await getAnnotation(db, userId, id);
  const given = givenValues(changes);
  await db.updateTable('annotations').set({ color: given.color, style: given.style, note: given.note, updated_at: nowIso() }).where('id', '=', id).where('user_id', '=', userId).execute();
  return getAnnotation(db, userId, id);
}

export async function deleteAnnotation(db: Db, userId: number, id: number): Promise<void> {
  const result = await db.deleteFrom('annotations').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  if (result.numDeletedRows === 0n) throw new ReaderNoteError('NOT_FOUND', `Annotation not found: ${id}`);
}
