// The app's home screen lists and discovery: continue reading / listening, recently added / scanned, search and a
// random page. Each returns book ids (the caller turns them into summaries); all run as SQL with a LIMIT.
import type { SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import type { Store } from '../store/store.ts';
import { searchCondition } from './book-filters.ts';
import { libraryCondition, listedBooks } from './book-scope.ts';
import { columnOf, rememberedCount } from './sql.ts';
import type { PageOfIds } from './book-query.ts';

/** Books added within this many days count as recently added. */
export const RECENTLY_ADDED_DAYS = 30;

/**
 * Books the caller is reading (READING or RE_READING) that have a book file of the kind — audiobook for listening,
 * any other format for reading — most recently read first.
 */
export function inProgressBooks(store: Store, principal: Principal, kind: 'reading' | 'listening', limit: number): Promise<number[]> {
  const fileKind = kind === 'listening' ? sql`f.book_type = 'AUDIOBOOK'` : sql`f.book_type <> 'AUDIOBOOK'`;
  const compiled = store.db
    .selectFrom('user_book_progress as p')
    .innerJoin('book', 'book.id', 'p.book_id')
    .select('p.book_id')
    .where('p.user_id', '=', principal.userId)
    .where(sql<SqlBool>`p.read_status in ('READING', 'RE_READING') and p.last_read_time is not null and book.deleted = 0`)
    .where(sql<SqlBool>`exists (select 1 from book_file f where f.book_id = book.id and f.is_book = 1 and ${fileKind})`)
    .where(visibleBookFilter(principal, { perRow: true }))
    .orderBy('p.last_read_time', 'desc')
    .orderBy('p.book_id', 'desc')
    .limit(limit)
    .compile();
  return columnOf<number>(store.exec, compiled);
}

/** Newest first, among books added in the last 30 days. */
export function recentlyAddedBooks(store: Store, principal: Principal, limit: number, now: Date = new Date()): Promise<number[]> {
  const since = new Date(now.getTime() - RECENTLY_ADDED_DAYS * 86_400_000).toISOString();
  const compiled = listedBooks(store, principal, { libraryIndex: false })
    .where('book.added_on', '>=', since)
    .select('book.id')
    .orderBy('book.added_on', 'desc')
    .orderBy('book.id', 'desc')
    .limit(limit)
    .compile();
  return columnOf<number>(store.exec, compiled);
}

/** Most recently scanned first (books never scanned, such as paper books, are left out). */
export function recentlyScannedBooks(store: Store, principal: Principal, limit: number): Promise<number[]> {
  const compiled = store.db
    .selectFrom('book')
    .select('book.id')
    .where(visibleBookFilter(principal))
    .where(sql<SqlBool>`book.deleted = 0 and book.scanned_on is not null`)
    .orderBy('book.scanned_on', 'desc')
    .orderBy('book.id', 'desc')
    .limit(limit)
    .compile();
  return columnOf<number>(store.exec, compiled);
}

/** Books whose title, series or an author contains the text, newest first. */
export async function searchBooks(store: Store, principal: Principal, text: string, page: { offset: number; limit: number }): Promise<PageOfIds> {
  const matching = () => listedBooks(store, principal).where(searchCondition(text, store.dialect));
  const total = await rememberedCount(store, matching().select(sql<number>`count(*)`.as('n')).compile());
  if (page.offset >= total) return { ids: [], total };
  const compiled = matching().select('book.id').orderBy('book.added_on', 'desc').orderBy('book.id', 'desc').limit(page.limit).offset(page.offset).compile();
  return { ids: await columnOf<number>(store.exec, compiled), total };
}

/**
 * A run of `size` books starting at a random page boundary (Grimmory's "random": a random page, not a shuffle), and
 * how many books there are in all.
 */
export async function randomBooks(store: Store, principal: Principal, size: number, libraryId: number | undefined, random: () => number = Math.random): Promise<PageOfIds> {
  const scoped = () => {
    const base = listedBooks(store, principal);
    return libraryId === undefined ? base : base.where(libraryCondition(principal, libraryId));
  };
  const total = await rememberedCount(store, scoped().select(sql<number>`count(*)`.as('n')).compile());
  if (total === 0) return { ids: [], total };
  const start = Math.floor(random() * (Math.max(0, total - size) + 1));
  const offset = Math.floor(start / size) * size;
  const compiled = scoped().select('book.id').orderBy('book.id').limit(size).offset(offset).compile();
  return { ids: await columnOf<number>(store.exec, compiled), total };
}
