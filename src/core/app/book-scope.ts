// Which books an app list starts from: the caller's visible books that are not deleted and have a file (or are
// paper books), optionally narrowed to one library, one shelf or one magic shelf, each checked for access first.
import type { SqlBool } from 'kysely';
import { sql } from 'kysely';
import { hasAny, isAdmin, type Principal } from '../auth/principal.ts';
import { canSeeLibrary, visibleBookFilter } from '../auth/visibility.ts';
import { compileMagicShelf } from '../opds/magic-shelf-rules.ts';
import type { Store } from '../store/store.ts';
import { appForbidden, appNotFound } from './app-error.ts';
import { FALSE, type Cond } from './book-filters.ts';
import { booksWithMetadata } from '../books/books-with-metadata.ts';

/** Grimmory's app lists leave out deleted books and books that have neither a file nor a paper copy. */
export const LISTED = sql<SqlBool>`(book.deleted = 0 and (book.is_physical = 1 or exists (select 1 from book_file lf where lf.book_id = book.id)))`;

export interface BookScope {
  libraryId?: number;
  shelfId?: number;
  magicShelfId?: number;
}

/** Conditions known to read only the book row and its mappings, not the metadata row (`m`); see readsMetadata. */
const offMetadata = new WeakSet<Cond>();

function offTheMetadata(condition: Cond): Cond {
  offMetadata.add(condition);
  return condition;
}

/**
 * Whether a count of the listed books under these conditions needs the metadata join: unless every condition is known
 * not to read `m` (a library or a shelf), it is assumed to.
 */
export const readsMetadata = (conditions: readonly Cond[]): boolean => conditions.some((c) => !offMetadata.has(c));

export function libraryCondition(principal: Principal, libraryId: number): Cond {
  if (!canSeeLibrary(principal, libraryId)) throw appForbidden(`Access denied to library ${libraryId}`);
  return offTheMetadata(sql<SqlBool>`book.library_id = ${libraryId}`);
}

/** A shelf of the caller's or a public one (Grimmory makes no exception for admins here). */
export async function shelfCondition(store: Store, principal: Principal, shelfId: number): Promise<Cond> {
  const shelf = (await store.exec.get('SELECT user_id, is_public FROM shelf WHERE id = ?', [shelfId])) as { user_id: number; is_public: number } | undefined;
  if (!shelf) throw appNotFound(`Shelf not found with ID: ${shelfId}`);
  if (shelf.is_public !== 1 && shelf.user_id !== principal.userId) throw appForbidden(`Access denied to shelf ${shelfId}`);
  return offTheMetadata(sql<SqlBool>`book.id in (select sm.book_id from book_shelf_mapping sm where sm.shelf_id = ${shelfId})`);
}

/**
 * The magic shelf's rules for the caller: admins may open any; others need canAccessOpds and a shelf that is theirs
 * or public. Rules that are not a rule group at all match no book.
 */
export async function magicShelfCondition(store: Store, principal: Principal, magicShelfId: number): Promise<Cond> {
  const shelf = (await store.exec.get('SELECT user_id, is_public, filter_json FROM magic_shelf WHERE id = ?', [magicShelfId])) as
    | { user_id: number; is_public: number; filter_json: string }
    | undefined;
  if (!shelf) throw appNotFound(`Magic shelf not found with ID: ${magicShelfId}`);
  if (!hasAny(principal, ['admin', 'canAccessOpds'])) throw appForbidden('You are not allowed to access this resource');
  if (shelf.user_id !== principal.userId && shelf.is_public !== 1 && !isAdmin(principal)) throw appForbidden('You are not allowed to access this magic shelf');
  const rules = compileMagicShelf(store.dialect, shelf.filter_json, principal.userId);
  return rules ? sql<SqlBool>`(${rules})` : FALSE;
}

/** The conditions of a scope, after checking the caller may open each part (AppError 403/404 otherwise). */
export async function scopeConditions(store: Store, principal: Principal, scope: BookScope): Promise<Cond[]> {
  const out: Cond[] = [];
  if (scope.libraryId !== undefined) out.push(libraryCondition(principal, scope.libraryId));
  if (scope.shelfId !== undefined) out.push(await shelfCondition(store, principal, scope.shelfId));
  if (scope.magicShelfId !== undefined) out.push(await magicShelfCondition(store, principal, scope.magicShelfId));
  return out;
}

/**
 * The listed books the caller may see, with their metadata as `m`. `metadata: false` leaves the metadata join out
 * (SQLite keeps an unused LEFT JOIN, which doubles the cost of counting 100,000 books); nothing may read `m` then.
 */
export function listedBooks(store: Store, principal: Principal, options: { libraryIndex?: boolean; metadata?: boolean } = {}) {
  return booksWithMetadata(store.db, options.metadata !== false).where(visibleBookFilter(principal, { libraryIndex: options.libraryIndex })).where(LISTED);
}

export type ListedBooks = ReturnType<typeof listedBooks>;

/**
 * The same books read from their metadata rows (an inner join: every book has one, see everyBookHasMetadata), so
 * that an order by an indexed metadata column (title, series) walks that index instead of sorting every book.
 */
export function listedBooksByMetadata(store: Store, principal: Principal) {
  return store.db
    .selectFrom('book_metadata as m')
    .innerJoin('book', 'book.id', 'm.book_id')
    .where(visibleBookFilter(principal, { libraryIndex: false }))
    .where(LISTED);
}
