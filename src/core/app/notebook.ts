// The app's notebook: the books a user has highlights, notes or bookmarks in, the entries of one book, and editing or
// deleting one entry, addressed by its id and its kind (`type`), as the three kinds keep separate ids.
import { updateAnchoredNote, deleteAnchoredNote } from '../annotations/anchored-notes.ts';
import { updateAnnotation, deleteAnnotation } from '../annotations/annotations.ts';
import { updateBookmark, deleteBookmark } from '../annotations/bookmarks.ts';
import { NOTEBOOK_TYPES, notebookBookCounts, notebookEntries, type NotebookType } from '../annotations/notebook.ts';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { appBadRequest } from './app-error.ts';
import { appPage, type AppPage } from './app-page.ts';
import type { Json } from './book-summary.ts';

/** AppNotebookEntry, as the app reads it; times are turned into the wire's zone-less form by the caller. */
export interface AppNotebookEntry {
  id: number;
  type: NotebookType;
  bookId: number;
  text?: string;
  note?: string;
  color?: string;
  style?: string;
  chapterTitle?: string;
  createdAt: string;
  updatedAt: string;
}

function entry(values: { id: number; type: NotebookType; bookId: number; text: string | null; note: string | null; color: string | null; style: string | null; chapterTitle: string | null; createdAt: string; updatedAt: string }): AppNotebookEntry {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== null && v !== undefined)) as unknown as AppNotebookEntry;
}

/** The kind named by `type` (any letter case), or 400 as Grimmory answers an unknown kind. */
export function notebookType(type: string): NotebookType {
  const upper = type.toUpperCase();
  const found = NOTEBOOK_TYPES.find((t) => t === upper);
  if (!found) throw appBadRequest(`Unknown entry type: ${type}`);
  return found;
}

/** `date_asc` oldest first, `chapter` by chapter then oldest first, anything else newest first. */
function entryOrder(sort: string | undefined): string {
  const lower = sort?.toLowerCase();
  return lower === 'chapter' ? 'chapter' : lower === 'date_asc' ? 'asc' : 'desc';
}

export interface EntriesQuery {
  types?: string[];
  search?: string;
  sort?: string;
}

/** A page of the user's entries in one book (books they may no longer see have none). */
export async function bookEntriesPage(db: Db, principal: Principal, bookId: number, query: EntriesQuery, page: number, size: number): Promise<AppPage<AppNotebookEntry>> {
  const types = (query.types ?? []).flatMap((t) => t.split(',')).map((t) => t.trim()).filter(Boolean);
  // Types that name no kind select nothing (an empty list means every kind).
  if (types.length > 0 && !types.some((t) => (NOTEBOOK_TYPES as readonly string[]).includes(t.toUpperCase()))) return appPage([], page, size, 0);
  const { entries, total } = await notebookEntries(db, principal, { bookId, types, search: query.search, sort: entryOrder(query.sort) }, { offset: page * size, limit: size });
  return appPage(
    entries.map((e) => entry({ id: e.id, type: e.type, bookId: e.bookId, text: e.text, note: e.note, color: e.color, style: e.style, chapterTitle: e.chapterTitle, createdAt: e.createdAt, updatedAt: e.updatedAt })),
    page,
    size,
    total,
  );
}

/** AppNotebookBookSummary: a page of the books with entries, by title, with their authors and cover time. */
export async function notebookBooksPage(db: Db, principal: Principal, search: string | undefined, page: number, size: number): Promise<AppPage<Json>> {
  const { books, total } = await notebookBookCounts(db, principal, search, { offset: page * size, limit: size });
  const ids = books.map((b) => b.bookId);
  const authors = new Map<number, string[]>();
  const covers = new Map<number, string | null>();
  if (ids.length > 0) {
    const names = await db
      .selectFrom('book_metadata_author_mapping as x')
      .innerJoin('author as a', 'a.id', 'x.author_id')
      .select(['x.book_id', 'a.name'])
      .where('x.book_id', 'in', ids)
      .orderBy('x.book_id')
      .orderBy('x.sort_order')
      .execute();
    for (const n of names) authors.set(n.book_id, [...(authors.get(n.book_id) ?? []), n.name]);
    for (const m of await db.selectFrom('book_metadata').select(['book_id', 'cover_updated_on']).where('book_id', 'in', ids).execute()) covers.set(m.book_id, m.cover_updated_on);
  }
  const content = books.map((b) => {
    const out: Json = { bookId: b.bookId };
    if (b.bookTitle !== null) out.bookTitle = b.bookTitle;
    out.noteCount = b.noteCount;
    out.authors = authors.get(b.bookId) ?? [];
    const cover = covers.get(b.bookId);
    if (cover) out.coverUpdatedOn = cover;
    return out;
  });
  return appPage(content, page, size, total);
}

export interface EntryChanges {
  note?: string | null;
  color?: string | null;
}

/** Changes the note and colour of one of the user's entries (what is not given stays); 404 when it is not theirs. */
export async function updateNotebookEntry(db: Db, userId: number, id: number, type: NotebookType, changes: EntryChanges): Promise<AppNotebookEntry> {
  switch (type) {
    case 'HIGHLIGHT': {
      const a = await updateAnnotation(db, userId, id, { note: changes.note, color: changes.color });
      return entry({ id: a.id, type, bookId: a.bookId, text: a.text, note: a.note, color: a.color, style: a.style, chapterTitle: a.chapterTitle, createdAt: a.createdAt, updatedAt: a.updatedAt });
    }
    case 'NOTE': {
      const n = await updateAnchoredNote(db, userId, id, { noteContent: changes.note, color: changes.color });
      return entry({ id: n.id, type, bookId: n.bookId, text: n.selectedText, note: n.noteContent, color: n.color, style: null, chapterTitle: n.chapterTitle, createdAt: n.createdAt, updatedAt: n.updatedAt });
    }
    case 'BOOKMARK': {
      const b = await updateBookmark(db, userId, id, { notes: changes.note, color: changes.color });
      return entry({ id: b.id, type, bookId: b.bookId, text: b.title, note: b.notes, color: b.color, style: null, chapterTitle: null, createdAt: b.createdAt, updatedAt: b.updatedAt });
    }
  }
}

export async function deleteNotebookEntry(db: Db, userId: number, id: number, type: NotebookType): Promise<void> {
  if (type === 'HIGHLIGHT') await deleteAnnotation(db, userId, id);
  else if (type === 'NOTE') await deleteAnchoredNote(db, userId, id);
  else await deleteBookmark(db, userId, id);
}
