// Books as the caller sees them: which ids are visible, and their Book JSON with the caller's own parts, in batches.
import type { Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import { memosPerOwner, readerSource } from '../store/snapshot.ts';
import type { Store } from '../store/store.ts';
import { libraryRoots, loadBundles, type CatalogReader } from './book-bundles.ts';
import { assembleBook, type BookBundle, type BookJsonOptions, type Json } from './book-json.ts';
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
export async function visibleBookIds(reader: CatalogReader, principal: Principal, filter: { libraryId?: number } = {}): Promise<number[]> {
  let query = reader.db.selectFrom('book').select('book.id').where(visibleBookFilter(principal)).where('book.deleted', '=', 0).orderBy('book.id');
  if (filter.libraryId !== undefined) query = query.where('book.library_id', '=', filter.libraryId);
  const { sql, parameters } = query.compile();
  const rows = (await reader.exec.all(sql, parameters as number[])) as { id: number }[];
  return rows.map((r) => r.id);
}

/**
 * Kept per principal object: a cached principal is reloaded (a new object) once the catalog changes, and the memo
 * checks the catalog too. Counting a shelf of thousands of books costs more than the rest of a single-book request.
 */
const shelfCountMemos = memosPerOwner<Principal, Map<number, number>>(100);

/** Per shelf the principal can see (own or public), how many of its books they may see: hidden books are not counted. */
function visibleShelfCounts(store: Store, principal: Principal): (reader: CatalogReader) => Promise<Map<number, number>> {
  const count = async (reader: CatalogReader): Promise<Map<number, number>> => {
    const { sql, parameters } = reader.db
      .selectFrom('book_shelf_mapping as m')
      .innerJoin('shelf', 'shelf.id', 'm.shelf_id')
      .innerJoin('book', 'book.id', 'm.book_id')
      .select(['m.shelf_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where((eb) => eb.or([eb('shelf.user_id', '=', principal.userId), eb('shelf.is_public', '=', 1)]))
      .where(visibleBookFilter(principal))
      .groupBy('m.shelf_id')
      .compile();
    const rows = (await reader.exec.all(sql, parameters as number[])) as { shelf_id: number; n: number }[];
    return new Map(rows.map((r) => [r.shelf_id, r.n]));
  };
  return (reader) => {
    const memo = shelfCountMemos(store);
    return memo.getAsync(readerSource(store, reader), principal, () => count(reader));
  };
}

function userStates(store: Store, reader: CatalogReader, options: BookViewOptions): UserBookStates {
  return new UserBookStates(reader, options.principal.userId, visibleShelfCounts(store, options.principal));
}

/** One batch of books as JSON objects with the user's parts, in id order. */
async function batchJson(reader: CatalogReader, states: UserBookStates, roots: Map<number, string>, batch: readonly number[], options: BookViewOptions): Promise<Json[]> {
  const user = await states.forBooks(batch, reader);
  const bundles = await loadBundles(reader, batch, options);
  const out: Json[] = [];
  for (let i = 0; i < bundles.length; i++) {
    const bundle = bundles[i] as BookBundle;
    out.push(states.apply(assembleBook(bundle, roots, options), user.get(bundle.book.id), options.user));
  }
  return out;
}

/**
 * Book JSON for the given ids that exist, in the order given. Pass a snapshot's scope as `reader` to read inside it;
 * otherwise the books are read in one snapshot of their own.
 */
export function booksJson(store: Store, ids: readonly number[], options: BookViewOptions, reader?: CatalogReader): Promise<Json[]> {
  const build = async (scope: CatalogReader): Promise<Json[]> => {
    const roots = await libraryRoots(scope);
    const states = userStates(store, scope, options);
    const byId = new Map<number, Json>();
    for (let i = 0; i < ids.length; i += BATCH) {
      for (const book of await batchJson(scope, states, roots, ids.slice(i, i + BATCH), options)) byId.set(book.id as number, book);
    }
    return ids.map((id) => byId.get(id)).filter((b): b is Json => b !== undefined);
  };
  return reader ? build(reader) : store.read(build);
}

/**
 * The JSON array text of the given books, produced a batch at a time as the consumer reads: memory stays at one batch
 * however large the library. Pass it to `Readable.from` to stream it. Each batch is read in one snapshot (a snapshot
 * cannot stay open while other requests run).
 */
export async function* bookArrayChunks(store: Store, ids: readonly number[], options: BookViewOptions): AsyncGenerator<string> {
  const roots = await libraryRoots(store);
  const states = userStates(store, store, options);
  let first = true;
  yield '[';
  for (let i = 0; i < ids.length; i += BATCH) {
    const batch = ids.slice(i, i + BATCH);
    const parts = await store.read(async (scope) => (await batchJson(scope, states, roots, batch, options)).map((book) => JSON.stringify(book)));
    if (parts.length === 0) continue;
    yield (first ? '' : ',') + parts.join(',');
    first = false;
  }
  yield ']';
}

/** Book JSON for the given ids that exist, without any user's parts: what a live update sends to everyone who may see it. */
export function bareBooksJson(store: Store, ids: readonly number[], options: BookJsonOptions): Promise<Json[]> {
  return store.read(async (scope) => {
    const roots = await libraryRoots(scope);
    const out: Json[] = [];
    for (let i = 0; i < ids.length; i += BATCH) {
      for (const bundle of await loadBundles(scope, ids.slice(i, i + BATCH), options)) out.push(assembleBook(bundle, roots, options));
    }
    return out;
  });
}
