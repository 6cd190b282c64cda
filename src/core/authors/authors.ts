// Authors as the catalog knows them, counted and filtered by what the reader may see.
import { sql } from 'kysely';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import type { Db } from '../store/store.ts';

export interface AuthorRow {
  id: number;
  name: string;
  description: string | null;
  asin: string | null;
  name_locked: number;
  description_locked: number;
  asin_locked: number;
  photo_locked: number;
}

const dropNulls = (o: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined));

/** Visible books per author. */
async function visibleCounts(db: Db, principal: Principal, authorIds?: readonly number[]): Promise<Map<number, number>> {
  let q = db
    .selectFrom('book_metadata_author_mapping as m')
    .innerJoin('book', 'book.id', 'm.book_id')
    .select(['m.author_id', sql<number>`count(distinct book.id)`.as('n')])
    .where(visibleBookFilter(principal))
    .groupBy('m.author_id');
  if (authorIds) q = q.where('m.author_id', 'in', [...authorIds]);
  return new Map((await q.execute()).map((r) => [r.author_id, Number(r.n)]));
}

/**
 * Grimmory's `AuthorSummary` list, by name. Admins get every author (those without books count 0);
 * other users only authors with at least one book they may see. `withPhoto`: the ids of authors that have a photo.
 */
export async function listAuthors(db: Db, principal: Principal, withPhoto: ReadonlySet<number> = new Set()): Promise<Record<string, unknown>[]> {
  const authors = await db.selectFrom('author').select(['id', 'name', 'asin']).orderBy('name').orderBy('id').execute();
  const counts = await visibleCounts(db, principal);
  const admin = isAdmin(principal);
  return authors
    .filter((a) => admin || (counts.get(a.id) ?? 0) > 0)
    .map((a) => dropNulls({ id: a.id, name: a.name, asin: a.asin, bookCount: counts.get(a.id) ?? 0, hasPhoto: withPhoto.has(a.id) }));
}

/** One author's `AuthorSummary` as the caller sees it (the book count is of the books they may see). */
export async function authorSummary(db: Db, principal: Principal, author: Pick<AuthorRow, 'id' | 'name' | 'asin'>, hasPhoto: boolean): Promise<Record<string, unknown>> {
  const bookCount = (await visibleCounts(db, principal, [author.id])).get(author.id) ?? 0;
  return dropNulls({ id: author.id, name: author.name, asin: author.asin, bookCount, hasPhoto });
}

export function detailsJson(a: AuthorRow): Record<string, unknown> {
  return dropNulls({
    id: a.id,
    name: a.name,
    description: a.description,
    asin: a.asin,
    nameLocked: a.name_locked === 1,
    descriptionLocked: a.description_locked === 1,
    asinLocked: a.asin_locked === 1,
    photoLocked: a.photo_locked === 1,
  });
}

const DETAIL_COLUMNS = ['id', 'name', 'description', 'asin', 'name_locked', 'description_locked', 'asin_locked', 'photo_locked'] as const;

/** Non-admins only see authors of books they may see. */
async function visibleTo(db: Db, principal: Principal, authorId: number): Promise<boolean> {
  if (isAdmin(principal)) return true;
  return ((await visibleCounts(db, principal, [authorId])).get(authorId) ?? 0) > 0;
}

export async function authorById(db: Db, authorId: number): Promise<AuthorRow | undefined> {
  return db.selectFrom('author').select(DETAIL_COLUMNS).where('id', '=', authorId).executeTakeFirst();
}

/** The author's row, or undefined when there is no such author or the caller may not see any of their books. */
export async function visibleAuthor(db: Db, principal: Principal, authorId: number): Promise<AuthorRow | undefined> {
  const author = await authorById(db, authorId);
  if (!author || !(await visibleTo(db, principal, author.id))) return undefined;
  return author;
}

/** Of the ids, those of existing authors the caller may see, in the order given, each once. */
export async function visibleAuthorIds(db: Db, principal: Principal, authorIds: readonly number[]): Promise<number[]> {
  const unique = [...new Set(authorIds)];
  if (unique.length === 0) return [];
  const existing = new Set((await db.selectFrom('author').select('id').where('id', 'in', unique).execute()).map((r) => r.id));
  if (isAdmin(principal)) return unique.filter((id) => existing.has(id));
  const counts = await visibleCounts(db, principal, unique);
  return unique.filter((id) => existing.has(id) && (counts.get(id) ?? 0) > 0);
}

/** `AuthorDetails`, or undefined when there is no such author or the caller may not see any of their books. */
export async function authorDetails(db: Db, principal: Principal, authorId: number): Promise<Record<string, unknown> | undefined> {
  const author = await visibleAuthor(db, principal, authorId);
  return author ? detailsJson(author) : undefined;
}

/** Like `authorDetails`, looked up by exact name regardless of letter case. */
export async function authorDetailsByName(db: Db, principal: Principal, name: string): Promise<Record<string, unknown> | undefined> {
  const author = await db.selectFrom('author').select(DETAIL_COLUMNS).where(sql<boolean>`lower(name) = lower(${name})`).orderBy('id').executeTakeFirst();
  if (!author || !(await visibleTo(db, principal, author.id))) return undefined;
  return detailsJson(author);
}

/** The book's author names in credit order. */
export async function authorNamesOfBook(db: Db, bookId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('book_metadata_author_mapping as m')
    .innerJoin('author', 'author.id', 'm.author_id')
    .select('author.name')
    .where('m.book_id', '=', bookId)
    .orderBy('m.sort_order')
    .execute();
  return rows.map((r) => r.name);
}
