// Books as the caller sees them: which ids are visible, and their Book JSON with the caller's own parts, in batches.
import type { Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import { CatalogMemo, readSnapshot } from '../store/snapshot.ts';
import type { Store } from '../store/store.ts';
import { libraryRoots, loadBundlesSqlite } from './book-bundles.ts';
import { assembleBook, type BookJsonOptions, type Json } from './book-json.ts';
import { UserBookStates, type UserStateOptions } from './book-user-state.ts';

export interface BookViewOptions extends BookJsonOptions {
  principal: Principal;
  user: UserStateOptions;
}

/** Books per step: small steps leave little garbage behind each; 250 ran as fast as 1000 with about half the peak heap. */
const BATCH = 250;

/**
 * Ids of the books the principal may see (optionally of one library), ascending; one small query. Soft-deleted books
 * are left out, as in Grimmory's lists.
 */
export function visibleBookIds(store: Store, principal: Principal, filter: { libraryId?: number } = {}): number[] {
  let query = store.db.selectFrom('book').select('book.id').where(visibleBookFilter(principal)).where('book.deleted', '=', 0).orderBy('book.id');
  if (filter.libraryId !== undefined) query = query.where('book.library_id', '=', filter.libraryId);
  const { sql, parameters } = query.compile();
  return store.sqlite.prepare(sql).pluck().all(...(parameters as unknown[])) as number[];
}

/**
 * Kept per principal object: a cached principal is reloaded (a new object) once the catalog changes, and the memo
 * checks the catalog too. Counting a shelf of thousands of books costs more than the rest of a single-book request.
 */
const shelfCountMemos = new WeakMap<Store, CatalogMemo<Principal, Map<number, number>>>();

/** Per shelf the principal can see (own or public), how many of its books they may see: hidden books are not counted. */
function visibleShelfCounts(store: Store, principal: Principal): () => Map<number, number> {
  const count = (): Map<number, number> => {
    const { sql, parameters } = store.db
      .selectFrom('book_shelf_mapping as m')
      .innerJoin('shelf', 'shelf.id', 'm.shelf_id')
      .innerJoin('book', 'book.id', 'm.book_id')
      .select(['m.shelf_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where((eb) => eb.or([eb('shelf.user_id', '=', principal.userId), eb('shelf.is_public', '=', 1)]))
      .where(visibleBookFilter(principal))
      .groupBy('m.shelf_id')
      .compile();
    const rows = store.sqlite.prepare(sql).all(...(parameters as unknown[])) as { shelf_id: number; n: number }[];
    return new Map(rows.map((r) => [r.shelf_id, r.n]));
  };
  return () => {
    let memo = shelfCountMemos.get(store);
    if (!memo) shelfCountMemos.set(store, (memo = new CatalogMemo(100)));
    return memo.get(store, principal, count);
  };
}

function userStates(store: Store, options: BookViewOptions): UserBookStates {
  return new UserBookStates(store.sqlite, options.principal.userId, visibleShelfCounts(store, options.principal));
}

/** Book JSON for the given ids that exist, in the order given. */
export function booksJson(store: Store, ids: readonly number[], options: BookViewOptions): Json[] {
  return readSnapshot(store.sqlite, () => {
    const roots = libraryRoots(store.sqlite);
    const states = userStates(store, options);
    const byId = new Map<number, Json>();
    for (let i = 0; i < ids.length; i += BATCH) {
      const batch = ids.slice(i, i + BATCH);
      const user = states.forBooks(batch);
      for (const bundle of loadBundlesSqlite(store.sqlite, batch, options)) {
        byId.set(bundle.book.id, states.apply(assembleBook(bundle, roots, options), user.get(bundle.book.id), options.user));
      }
    }
    return ids.map((id) => byId.get(id)).filter((b): b is Json => b !== undefined);
  });
}

/**
 * The JSON array text of the given books, produced a batch at a time as the consumer reads: memory stays at one batch
 * however large the library. Pass it to `Readable.from` to stream it. Each batch is read in one snapshot (a snapshot
 * cannot stay open while other requests run).
 */
export function* bookArrayChunks(store: Store, ids: readonly number[], options: BookViewOptions): Generator<string> {
  const roots = libraryRoots(store.sqlite);
  const states = userStates(store, options);
  let first = true;
  yield '[';
  for (let i = 0; i < ids.length; i += BATCH) {
    const batch = ids.slice(i, i + BATCH);
    const parts = readSnapshot(store.sqlite, () => {
      const user = states.forBooks(batch);
      return loadBundlesSqlite(store.sqlite, batch, options).map((bundle) =>
        JSON.stringify(states.apply(assembleBook(bundle, roots, options), user.get(bundle.book.id), options.user)),
      );
    });
    if (parts.length === 0) continue;
    yield (first ? '' : ',') + parts.join(',');
    first = false;
  }
  yield ']';
}

/** Book JSON for the given ids that exist, without any user's parts: what a live update sends to everyone who may see it. */
export function bareBooksJson(store: Store, ids: readonly number[], options: BookJsonOptions): Json[] {
  return readSnapshot(store.sqlite, () => {
    const roots = libraryRoots(store.sqlite);
    const out: Json[] = [];
    for (let i = 0; i < ids.length; i += BATCH) {
      for (const bundle of loadBundlesSqlite(store.sqlite, ids.slice(i, i + BATCH), options)) out.push(assembleBook(bundle, roots, options));
    }
    return out;
  });
}
