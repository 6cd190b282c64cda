// One /v1/library/sync page: at most 100 books (new, then changed, then removed), and once every book is out the
// reading states and shelf tags. The session's books are fixed by its snapshot (written when it starts, never updated
// while it is paged through); how far the device has come is the position in the token it sends back, so a page
// writes nothing and the same token always gives the same page. A page is read in one read snapshot; the snapshots
// and sessions are written as bookkeeping (Store.bookkeeping.db) and the sent stamps of reading states as reading
// state: a device syncing moves neither the catalog's generation nor holds a write open while its pages are built,
// so every other feed's kept pages and lists stay kept.
import type { Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import type { SqlExec } from '../store/sql-exec.ts';
import type { Store } from '../store/store.ts';
import { syncsToKobo } from './compatibility.ts';
import type { AnnouncedDownload } from './download-file.ts';
import { bookMetadata, changedMetadata, changedReadingState, newEntitlement, removedEntitlement, type Json, type KoboUrls } from './entitlements.ts';
import { loadKoboBooks, loadPrimaries, type KoboBook, type KoboPrimaryFile } from './kobo-books.ts';
import { koboShelfId } from './kobo-shelf.ts';
import { createSnapshot, finishSession, removedAfter, snapshotsOf, unsentAfter, type PageOfIds, type Removed } from './library-snapshot.ts';
import { initialStates, pendingStates, stampSent, type DeviceContext, type PendingStates } from './reading-state-store.ts';
import { orderedState } from './reading-state.ts';
import type { LocationLoader } from './span-locations.ts';
import type { KoboServerSettings } from './server-settings.ts';
import { shelfTags } from './shelf-tags.ts';
import type { KoboSettingsRow } from './sync-settings.ts';
import { koboTimestamp } from './kobo-time.ts';
import { SESSION_START, type SyncPosition, type SyncToken } from './sync-token.ts';

/** Books per page, as Kobo's store pages them. */
export const SYNC_PAGE_SIZE = 100;

export interface SyncPageInput {
  store: Store;
  principal: Principal;
  settings: KoboSettingsRow;
  server: KoboServerSettings;
  urls: KoboUrls;
  token: SyncToken;
  now?: Date;
  /** Places web-reader positions in the KEPUBs (two-way sync). */
  locations?: LocationLoader;
}

export interface LocalPage {
  items: Json[];
  /** The metadata of the page's books with the files their downloads send, for settleDownloadSizes. */
  downloads: AnnouncedDownload[];
  /** More books wait: the device must call again (X-Kobo-sync: continue). */
  more: boolean;
  /** Where the next page starts (`done` once every book is out). */
  next: SyncPosition;
  currentId: string;
  previousId: string | undefined;
}

/**
 * Books added to the library since auto-add was turned on go on the Kobo shelf (once: removing one keeps it off). A
 * catalog write, made only when the library has books the device's mark has not passed yet.
 */
async function autoAdd(store: Store, principal: Principal, settings: KoboSettingsRow, shelfId: number | undefined): Promise<void> {
  if (settings.auto_add_to_shelf !== 1 || settings.sync_enabled !== 1 || shelfId === undefined) return;
  const after = settings.auto_add_after_book_id ?? 0;
  const newest = (await store.db.selectFrom('book').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst())?.id ?? 0;
  if (newest <= after) return;
  await store.write(async ({ db: trx, exec }) => {
    const books = await trx
      .selectFrom('book')
      .select('book.id')
      .where('book.id', '>', after)
      .where('book.id', '<=', newest)
      .where('book.deleted', '=', 0)
      .where('book.is_physical', '=', 0)
      .where(visibleBookFilter(principal))
      .execute();
    await trx.updateTable('kobo_user_settings').set({ auto_add_after_book_id: newest }).where('id', '=', settings.id).execute();
    if (books.length === 0) return;
    const ids = books.map((b) => b.id);
    const primaries = await loadPrimaries({ exec, dialect: store.dialect }, ids);
    const eligible = ids.filter((id) => syncsToKobo(primaries.get(id)));
    for (let i = 0; i < eligible.length; i += 500) {
      await trx
        .insertInto('book_shelf_mapping')
        .values(eligible.slice(i, i + 500).map((book_id) => ({ book_id, shelf_id: shelfId })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  });
}

/** A new session: the shelf's auto-added books, then its snapshot (bookkeeping), compared with `previousId`. */
async function startSession(store: Store, principal: Principal, settings: KoboSettingsRow, previousId: string | undefined): Promise<string> {
  const shelfId = await koboShelfId(store.db, principal.userId);
  await autoAdd(store, principal, settings, shelfId);
  return store.bookkeeping.db.transaction().execute((trx) => createSnapshot(trx, principal, shelfId, previousId));
}

function deviceContext(input: SyncPageInput): DeviceContext {
  return {
    userId: input.principal.userId,
    twoWay: input.settings.two_way_progress_sync === 1,
    thresholds: { reading: input.settings.progress_mark_as_reading_threshold ?? 1, finished: input.settings.progress_mark_as_finished_threshold ?? 99 },
  };
}

interface PageBooks {
  added: number[];
  changed: number[];
  removed: Removed[];
  next: SyncPosition;
}

/**
 * The books of the page starting at `from`: up to SYNC_PAGE_SIZE, phase after phase, and the position after them. A
 * phase found exhausted moves the position on even when the page is full, so the device is told `continue` only when
 * books really wait.
 */
async function booksOfPage(exec: SqlExec, currentId: string, previousId: string | undefined, from: SyncPosition): Promise<PageBooks> {
  const out: PageBooks = { added: [], changed: [], removed: [], next: from };
  let room = SYNC_PAGE_SIZE;
  const walk = (taken: PageOfIds, phase: SyncPosition['phase'], following: SyncPosition['phase']): boolean => {
    room -= taken.ids.length;
    const last = taken.ids.at(-1);
    out.next = taken.more ? { phase, afterBookId: last ?? out.next.afterBookId } : { phase: following, afterBookId: 0 };
    return taken.more;
  };
  if (out.next.phase === 'added') {
    const taken = await unsentAfter(exec, currentId, previousId, 'added', out.next.afterBookId, room);
    out.added = taken.ids;
    if (walk(taken, 'added', 'changed')) return out;
  }
  if (out.next.phase === 'changed') {
    const taken = await unsentAfter(exec, currentId, previousId, 'changed', out.next.afterBookId, room);
    out.changed = taken.ids;
    if (walk(taken, 'changed', 'removed')) return out;
  }
  if (out.next.phase === 'removed') {
    const taken = await removedAfter(exec, currentId, previousId, out.next.afterBookId, room);
    out.removed = taken.removed;
    walk({ ids: taken.removed.map((r) => r.bookId), more: taken.more }, 'removed', 'done');
  }
  return out;
}

/**
 * The library part of a page, read in one snapshot. The last page (`more` false) also carries the reading states and
 * tags; the session is finished separately (finishSync), after the Kobo store had its say when forwarding.
 */
export async function localSyncPage(input: SyncPageInput): Promise<LocalPage> {
  const { store, principal, settings, server, urls } = input;
  const now = input.now ?? new Date();
  const ctx = deviceContext(input);
  const { previousId, ongoingId } = await snapshotsOf(store.exec, principal.userId, input.token);
  const currentId = ongoingId ?? (await startSession(store, principal, settings, previousId));
  const from = ongoingId !== undefined ? (input.token.position ?? SESSION_START) : SESSION_START;
  let pending: PendingStates | undefined;
  const page = await store.read(async ({ db, exec }) => {
    const reader = { exec, dialect: store.dialect };
    const { added, changed, removed, next } = await booksOfPage(exec, currentId, previousId, from);
    const more = next.phase !== 'done';

    const books = await loadKoboBooks(reader, [...added, ...changed]);
    const byId = new Map(books.map((b) => [b.id, b]));
    const addedIds = new Set(added);
    const states = await initialStates(reader, ctx, books.filter((b) => addedIds.has(b.id)), now, input.locations);
    const items: Json[] = [];
    const downloads: AnnouncedDownload[] = [];
    const metadataOf = (book: KoboBook, primary: KoboPrimaryFile): Json => {
      const metadata = bookMetadata(book, server, urls);
      downloads.push({ metadata, primary });
      return metadata;
    };
    const stamp = koboTimestamp(now);
    for (const id of added) {
      const book = byId.get(id);
      const state = states.get(id);
      if (book && state && syncsToKobo(book.primary)) items.push(newEntitlement(book, metadataOf(book, book.primary), state, stamp));
    }
    for (const id of changed) {
      const book = byId.get(id);
      if (book && syncsToKobo(book.primary)) items.push(changedMetadata(book, metadataOf(book, book.primary), stamp));
    }
    if (removed.length > 0) {
      const addedOn = new Map(
        (await db.selectFrom('book').select(['id', 'added_on']).where('id', 'in', removed.map((r) => r.bookId)).execute()).map((r) => [r.id, r.added_on]),
      );
      for (const r of removed) items.push(removedEntitlement(r.bookId, addedOn.get(r.bookId) ?? null, r.coverHash, stamp));
    }

    if (!more) {
      pending = await pendingStates(db, ctx, currentId, (ids) => loadPrimaries(reader, ids), now, input.locations);
      for (const state of pending.states) items.push(changedReadingState(orderedState(state)));
      items.push(...(await shelfTags(db, store, principal, currentId)));
    }
    return { items, downloads, more, next, currentId, previousId };
  });
  if (pending) await stampSent(store.readingState.db, principal.userId, pending.sent);
  return page;
}

/** The device has everything: its reference becomes the current snapshot. */
export async function finishSync(store: Store, userId: number, page: Pick<LocalPage, 'currentId'>): Promise<void> {
  await store.bookkeeping.db.transaction().execute((trx) => finishSession(trx, userId, page.currentId));
}

/**
 * The token for the device's next call. `more` may be true after the library's last page (the Kobo store has more):
 * the position is then `done`, and the following pages carry the store's part alone.
 */
export function nextToken(token: SyncToken, page: Pick<LocalPage, 'currentId' | 'next'>, more: boolean, rawKoboSyncToken: string | null = token.rawKoboSyncToken): SyncToken {
  return more
    ? { ongoingSyncPointId: page.currentId, lastSuccessfulSyncPointId: token.lastSuccessfulSyncPointId, rawKoboSyncToken, position: page.next }
    : { ongoingSyncPointId: null, lastSuccessfulSyncPointId: page.currentId, rawKoboSyncToken };
}
