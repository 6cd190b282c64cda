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

/** Grimmory's app lists leave out deleted books and books that have neither a file nor a paper copy. */
export const LISTED = sql<SqlBool>`(book.deleted = 0 and (book.is_physical = 1 or exists (select 1 from book_file lf where lf.book_id = book.id)))`;

export interface BookScope {
  libraryId?: number;
  shelfId?: number;
  magicShelfId?: number;
}

export function libraryCondition(principal: Principal, libraryId: number): Cond {
  if (!canSeeLibrary(principal, libraryId)) throw appForbidden(`Access denied to library ${libraryId}`);
  return sql<SqlBool>`book.library_id = ${libraryId}`;
}

/** A shelf of the caller's or a public one (Grimmory makes no exception for admins here). */
export function shelfCondition(store: Store, principal: Principal, shelfId: number): Cond {
  const shelf = store.sqlite.prepare('SELECT user_id, is_public FROM shelf WHERE id = ?').get(shelfId) as { user_id: number; is_public: number } | undefined;
  if (!shelf) throw appNotFound(`Shelf not found with ID: ${shelfId}`);
  if (shelf.is_public !== 1 && shelf.user_id !== principal.userId) throw appForbidden(`Access denied to shelf ${shelfId}`);
  return sql<SqlBool>`book.id in (select sm.book_id from book_shelf_mapping sm where sm.shelf_id = ${shelfId})`;
}

/**
 * The magic shelf's rules for the caller: admins may open any; others need canAccessOpds and a shelf that is theirs
 * or public. Rules that are not a rule group at all match no book.
 */
export function magicShelfCondition(store: Store, principal: Principal, magicShelfId: number): Cond {
  const shelf = store.sqlite.prepare('SELECT user_id, is_public, filter_json FROM magic_shelf WHERE id = ?').get(magicShelfId) as
    | { user_id: number; is_public: number; filter_json: string }
    | undefined;
  if (!shelf) throw appNotFound(`Magic shelf not found with ID: ${magicShelfId}`);
  if (!hasAny(principal, ['admin', 'canAccessOpds'])) throw appForbidden('You are not allowed to access this resource');
  if (shelf.user_id !== principal.userId && shelf.is_public !== 1 && !isAdmin(principal)) throw appForbidden('You are not allowed to access this magic shelf');
  const rules = compileMagicShelf(store.dialect, shelf.filter_json, principal.userId);
  return rules ? sql<SqlBool>`(${rules})` : FALSE;
}

/** The conditions of a scope, after checking the caller may open each part (AppError 403/404 otherwise). */
export function scopeConditions(store: Store, principal: Principal, scope: BookScope): Cond[] {
  const out: Cond[] = [];
  if (scope.libraryId !== undefined) out.push(libraryCondition(principal, scope.libraryId));
  if (scope.shelfId !== undefined) out.push(shelfCondition(store, principal, scope.shelfId));
  if (scope.magicShelfId !== undefined) out.push(magicShelfCondition(store, principal, scope.magicShelfId));
  return out;
}

/** The listed books the caller may see, with their metadata as `m`. */
export function listedBooks(store: Store, principal: Principal, options: { libraryIndex?: boolean } = {}) {
  return store.db
    .selectFrom('book')
    .leftJoin('book_metadata as m', 'm.book_id', 'book.id')
    .where(visibleBookFilter(principal, { libraryIndex: options.libraryIndex }))
    .where(LISTED);
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
