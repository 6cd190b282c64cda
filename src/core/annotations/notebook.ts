// The notebook: a user's highlights, anchored notes and bookmarks across all books, newest (or oldest) first,
// searchable, one page at a time or all of it for export.
import { sql, type RawBuilder } from 'kysely';
import { visibleBookFilter } from '../auth/visibility.ts';
import type { Principal } from '../auth/principal.ts';
import { dialectOf } from '../store/dialect.ts';
import { inForm } from '../store/dialect-forms.ts';
import type { Db } from '../store/store.ts';

export const NOTEBOOK_TYPES = ['HIGHLIGHT', 'NOTE', 'BOOKMARK'] as const;
export type NotebookType = (typeof NOTEBOOK_TYPES)[number];
export const NOTEBOOK_EXPORT_LIMIT = 50_000;
const BOOK_OPTIONS_LIMIT = 50;

export interface NotebookEntry {
  id: number;
  type: NotebookType;
  bookId: number;
  bookTitle: string | null;
  text: string | null;
  note: string | null;
  color: string | null;
  style: string | null;
  chapterTitle: string | null;
  primaryBookType: string | null;
  cfi: string | null;
  pageNumber: number | null;
  createdAt: string;
  updatedAt: string;
}

export interface NotebookQuery {
  types?: readonly string[];
  bookId?: number;
  search?: string;
  /** `asc` for oldest first; `chapter` by chapter title, then oldest first; anything else newest first. */
  sort?: string;
}

const primaryType = (alias: string): RawBuilder<unknown> => sql`(select bf.book_type from book_file bf where bf.book_id = ${sql.ref(`${alias}.book_id`)} order by bf.id limit 1)`;

/** All three kinds as one relation, with Grimmory's column meanings (a bookmark's title is its text, its notes its note). */
function entries(): RawBuilder<unknown> {
  return sql`(
    select a.id, 'HIGHLIGHT' as type, a.user_id, a.book_id, bm.title as book_title, a.text as text, a.note as note, a.color, a.style,
           a.chapter_title, ${primaryType('a')} as primary_book_type, a.cfi, cast(null as bigint) as page_number, a.created_at, a.updated_at
      from annotations a join book_metadata bm on bm.book_id = a.book_id
    union all
    select n.id, 'NOTE', n.user_id, n.book_id, bm.title, n.selected_text, n.note_content, n.color, cast(null as text),
           n.chapter_title, ${primaryType('n')}, n.cfi, cast(null as bigint), n.created_at, n.updated_at
      from book_notes_v2 n join book_metadata bm on bm.book_id = n.book_id
    union all
    select b.id, 'BOOKMARK', b.user_id, b.book_id, bm.title, b.title, b.notes, b.color, cast(null as text),
           cast(null as text), ${primaryType('b')}, b.cfi, b.page_number, b.created_at, b.updated_at
      from book_marks b join book_metadata bm on bm.book_id = b.book_id
  )`;
}

/** `%text%` for LIKE, with the wildcard characters of the search itself taken literally. */
function likePattern(search: string | undefined): string | undefined {
  const trimmed = search?.trim();
  if (!trimmed) return undefined;
  return `%${trimmed.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The book title contains the pattern, ASCII letters in any case (as SQLite's LIKE). */
const titleLike = (db: Db, pattern: string) => inForm<boolean>((p) => dialectOf(db).likeNocase('ne.book_title', p), pattern);

function filtered(db: Db, principal: Principal, query: NotebookQuery) {
  const types = (query.types ?? []).map((t) => t.toUpperCase()).filter((t): t is NotebookType => (NOTEBOOK_TYPES as readonly string[]).includes(t));
  const pattern = likePattern(query.search);
  let q = db
    .selectFrom(entries().as('ne') as never)
    .where(sql.ref('ne.user_id'), '=', principal.userId)
    // Per entry rather than as the set of visible books: a notebook holds far fewer entries than a catalog holds books.
    .where(({ exists }) => exists(db.selectFrom('book').select('book.id').where(sql<boolean>`book.id = ne.book_id`).where(visibleBookFilter(principal, { perRow: true }))));
  if (types.length > 0) q = q.where(sql.ref('ne.type'), 'in', types);
  if (query.bookId !== undefined) q = q.where(sql.ref('ne.book_id'), '=', query.bookId);
  if (pattern) {
    const d = dialectOf(db);
    q = q.where(sql<boolean>`(${sql.join(['ne.text', 'ne.note', 'ne.book_title', 'ne.chapter_title'].map((column) => inForm((p) => d.likeNocase(column, p), pattern)), sql` or `)})`);
  }
  return q;
}

interface Row {
  id: number;
  type: NotebookType;
  book_id: number;
  book_title: string | null;
  text: string | null;
  note: string | null;
  color: string | null;
  style: string | null;
  chapter_title: string | null;
  primary_book_type: string | null;
  cfi: string | null;
  page_number: number | null;
  created_at: string;
  updated_at: string;
}

function fromRow(r: Row): NotebookEntry {
  return { id: r.id, type: r.type, bookId: r.book_id, bookTitle: r.book_title, text: r.text, note: r.note, color: r.color, style: r.style, chapterTitle: r.chapter_title, primaryBookType: r.primary_book_type, cfi: r.cfi, pageNumber: r.page_number, createdAt: r.created_at, updatedAt: r.updated_at };
}

export async function notebookEntries(db: Db, principal: Principal, query: NotebookQuery, page: { offset: number; limit: number }): Promise<{ entries: NotebookEntry[]; total: number }> {
  const sort = query.sort?.toLowerCase();
  const direction = sort === 'asc' || sort === 'chapter' ? 'asc' : 'desc';
  let ordered = filtered(db, principal, query).selectAll();
  if (sort === 'chapter') ordered = ordered.orderBy(sql.ref('ne.chapter_title'), (ob) => ob.asc().nullsFirst());
  const rows = (await ordered
    .orderBy(sql.ref('ne.created_at'), direction)
    .orderBy(sql.ref('ne.type'))
    .orderBy(sql.ref('ne.id'), direction)
    .limit(page.limit)
    .offset(page.offset)
    .execute()) as unknown as Row[];
  const count = (await filtered(db, principal, query).select(sql<number>`count(*)`.as('n')).executeTakeFirst()) as { n: number } | undefined;
  return { entries: rows.map(fromRow), total: count?.n ?? 0 };
}

/** The books the user has notebook entries for, by title (at most 50), for the notebook's book filter. */
export async function notebookBooks(db: Db, principal: Principal, search: string | undefined): Promise<{ bookId: number; bookTitle: string | null }[]> {
  const pattern = likePattern(search);
  let q = filtered(db, principal, {});
  if (pattern) q = q.where(titleLike(db, pattern));
  const rows = (await q.select([sql<number>`ne.book_id`.as('bookId'), sql<string | null>`ne.book_title`.as('bookTitle')]).distinct().orderBy(sql.ref('bookTitle'), (ob) => ob.asc().nullsFirst()).limit(BOOK_OPTIONS_LIMIT).execute()) as unknown as { bookId: number; bookTitle: string | null }[];
  return rows;
}

/** The books the user has notebook entries for, by title, a page at a time, with how many entries each has. */
export async function notebookBookCounts(
  db: Db,
  principal: Principal,
  search: string | undefined,
  page: { offset: number; limit: number },
): Promise<{ books: { bookId: number; bookTitle: string | null; noteCount: number }[]; total: number }> {
  const pattern = likePattern(search);
  const matching = () => {
    const q = filtered(db, principal, {});
    return pattern ? q.where(titleLike(db, pattern)) : q;
  };
  const books = (await matching()
    // One title per book: max() only names it for the grouping.
    .select([sql<number>`ne.book_id`.as('bookId'), sql<string | null>`max(ne.book_title)`.as('bookTitle'), sql<number>`count(*)`.as('noteCount')])
    .groupBy(sql.ref('ne.book_id'))
    .orderBy(sql.ref('bookTitle'), (ob) => ob.asc().nullsFirst())
    .orderBy(sql.ref('bookId'))
    .limit(page.limit)
    .offset(page.offset)
    .execute()) as unknown as { bookId: number; bookTitle: string | null; noteCount: number }[];
  const count = (await matching().select(sql<number>`count(distinct ne.book_id)`.as('n')).executeTakeFirst()) as { n: number } | undefined;
  return { books, total: count?.n ?? 0 };
}
