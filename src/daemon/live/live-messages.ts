// From what happened (outbox events) to what each connected user is sent: the Grimmory web UI's STOMP destinations
// and Komga's SSE events, each only to users who may see what it is about (the same visibility the REST routes use).
// Payloads are built once per event and shared by every connection that gets them.
import { isAdmin, type Principal } from '../../core/auth/principal.ts';
import { canSeeLibrary, visibleAmong } from '../../core/auth/visibility.ts';
import { bookdropSummary } from '../../core/bookdrop/bookdrop-summary.ts';
import { bareBooksJson } from '../../core/books/book-list.ts';
import type { Audience, LiveEvent, RemovedBook } from '../../core/events/live-events.ts';
import type { StoredEvent } from '../../core/events/outbox.ts';
import { bookName, loadBookRows } from '../../core/komga/catalog.ts';
import { seriesId, seriesNameOf } from '../../core/komga/series.ts';
import { readSetting } from '../../core/settings/app-settings.ts';
import type { Store } from '../../core/store/store.ts';

export type Protocol = 'stomp' | 'komga';

/** One message for the connections of one protocol: a STOMP destination or an SSE event name, and its JSON. */
export interface Outbound {
  protocol: Protocol;
  name: string;
  /** The JSON text, or (Komga events that name the reader's own account) a function of the connection's Komga user id. */
  body: string | ((komgaUserId: string) => string);
}

export interface Recipient {
  principal: Principal;
  protocols: ReadonlySet<Protocol>;
}

export interface Translation {
  /** Per user id, in event order. */
  messages: Map<number, Outbound[]>;
  /** Users whose sessions ended, with the reason: their connections are told, then closed. */
  revoked: Map<number, string>;
  /** A library was added, changed or removed: its folders' health may have changed. */
  librariesChanged: boolean;
}

const queue = (name: string): string => `/user/queue/${name}`;

/**
 * Every STOMP destination Bindery sends to (docs/api-coverage.md lists them against Grimmory's). Grimmory declares
 * `/user/queue/book-metadata-batch-update` but never sends it; neither does Bindery.
 */
export const STOMP_DESTINATIONS = [
  ...['book-add', 'book-update', 'books-cover-update', 'books-remove', 'book-metadata-update', 'book-metadata-batch-progress', 'bookdrop-file', 'log', 'task-progress', 'session-revoked'].map(queue),
  '/topic/library-health',
] as const;

const STOMP_BOOK_DESTINATION = {
  'books-added': queue('book-add'),
  'books-changed': queue('book-update'),
  'books-metadata-changed': queue('book-metadata-update'),
} as const;

const KOMGA_BOOK_EVENT = { 'books-added': 'BookAdded', 'books-changed': 'BookChanged', 'books-metadata-changed': 'BookChanged', 'covers-changed': 'BookChanged' } as const;

function isManager(principal: Principal): boolean {
  return isAdmin(principal) || principal.permissions.canManageLibrary;
}

function reaches(audience: Audience, principal: Principal): boolean {
  return audience === 'managers' ? isManager(principal) : audience.userId === principal.userId;
}

interface KomgaBookRef {
  bookId: string;
  seriesId: string;
  libraryId: string;
}

/** Lazily built, shared parts of one batch's payloads. */
class BatchCache {
  private readonly store: Store;
  private readonly books = new Map<number, string>();
  private readonly komgaRefs = new Map<number, KomgaBookRef>();
  private groupUnknown: boolean | undefined;
  private bookdrop: string | undefined;

  constructor(store: Store) {
    this.store = store;
  }

  /** Book JSON (Grimmory's `Book` without the description or anyone's reading state), for the ids that still exist. */
  async bookBodies(ids: readonly number[]): Promise<Map<number, string>> {
    const missing = ids.filter((id) => !this.books.has(id));
    if (missing.length > 0) {
      for (const book of await bareBooksJson(this.store, missing, { listView: false, withDescription: false })) this.books.set(book.id as number, JSON.stringify(book));
    }
    const out = new Map<number, string>();
    for (const id of ids) {
      const body = this.books.get(id);
      if (body !== undefined) out.set(id, body);
    }
    return out;
  }

  async komgaGroupUnknown(): Promise<boolean> {
    this.groupUnknown ??= (await readSetting(this.store.db, 'KOMGA_GROUP_UNKNOWN')) !== false;
    return this.groupUnknown;
  }

  async komgaRefsOf(ids: readonly number[]): Promise<Map<number, KomgaBookRef>> {
    const groupUnknown = await this.komgaGroupUnknown();
    const missing = ids.filter((id) => !this.komgaRefs.has(id));
    for (const row of await loadBookRows(this.store, missing)) {
      const { name } = seriesNameOf({ libraryId: row.libraryId, seriesName: row.seriesName, name: bookName(row) }, groupUnknown);
      this.komgaRefs.set(row.id, { bookId: String(row.id), seriesId: seriesId(row.libraryId, name), libraryId: String(row.libraryId) });
    }
    const out = new Map<number, KomgaBookRef>();
    for (const id of ids) {
      const ref = this.komgaRefs.get(id);
      if (ref) out.set(id, ref);
    }
    return out;
  }

  async removedRef(book: RemovedBook): Promise<KomgaBookRef> {
    const name = book.title && book.title.trim() !== '' ? book.title : `Book ${book.id}`;
    const series = seriesNameOf({ libraryId: book.libraryId, seriesName: book.seriesName, name }, await this.komgaGroupUnknown());
    return { bookId: String(book.id), seriesId: seriesId(book.libraryId, series.name), libraryId: String(book.libraryId) };
  }

  async bookdropBody(): Promise<string> {
    this.bookdrop ??= JSON.stringify(await bookdropSummary(this.store.db));
    return this.bookdrop;
  }
}

/** Komga's SeriesChanged for each series the books are in, once per series. */
function seriesChanged(refs: Iterable<KomgaBookRef>): Outbound[] {
  const seen = new Map<string, KomgaBookRef>();
  for (const ref of refs) if (!seen.has(ref.seriesId)) seen.set(ref.seriesId, ref);
  return [...seen.values()].map((ref) => ({ protocol: 'komga', name: 'SeriesChanged', body: JSON.stringify({ seriesId: ref.seriesId, libraryId: ref.libraryId }) }));
}

type BookEvent = Extract<LiveEvent, { bookIds: number[] }> & { kind: 'books-added' | 'books-changed' | 'books-metadata-changed' | 'covers-changed' };

async function bookMessages(store: Store, cache: BatchCache, event: BookEvent, recipient: Recipient): Promise<Outbound[]> {
  const { principal, protocols } = recipient;
  const visible = isAdmin(principal) ? event.bookIds : [...(await visibleAmong(store.db, principal, event.bookIds))];
  if (visible.length === 0) return [];
  const out: Outbound[] = [];
  if (protocols.has('stomp')) {
    if (event.kind === 'covers-changed') {
      const rows = await store.db.selectFrom('book_metadata').select(['book_id', 'cover_updated_on']).where('book_id', 'in', visible).execute();
      const updates = rows.map((r) => ({ id: r.book_id, coverUpdatedOn: r.cover_updated_on }));
      if (updates.length > 0) out.push({ protocol: 'stomp', name: queue('books-cover-update'), body: JSON.stringify(updates) });
    } else {
      const destination = STOMP_BOOK_DESTINATION[event.kind];
      for (const body of (await cache.bookBodies(visible)).values()) out.push({ protocol: 'stomp', name: destination, body });
    }
  }
  if (protocols.has('komga')) {
    const refs = await cache.komgaRefsOf(visible);
    const name = KOMGA_BOOK_EVENT[event.kind];
    for (const ref of refs.values()) {
      out.push({ protocol: 'komga', name, body: JSON.stringify(ref) });
      if (event.kind === 'covers-changed') out.push({ protocol: 'komga', name: 'ThumbnailBookAdded', body: JSON.stringify({ bookId: ref.bookId, seriesId: ref.seriesId, selected: true }) });
    }
    out.push(...seriesChanged(refs.values()));
  }
  return out;
}

async function removalMessages(cache: BatchCache, books: RemovedBook[], recipient: Recipient): Promise<Outbound[]> {
  // The books are gone with their metadata, so content restrictions can no longer be tested: a user with
  // restrictions hears of no removal (their next fetch shows it) rather than of a book they were not allowed to see.
  if (recipient.principal.restrictions.length > 0) return [];
  const visible = books.filter((b) => canSeeLibrary(recipient.principal, b.libraryId));
  if (visible.length === 0) return [];
  const out: Outbound[] = [];
  if (recipient.protocols.has('stomp')) out.push({ protocol: 'stomp', name: queue('books-remove'), body: JSON.stringify(visible.map((b) => b.id)) });
  if (recipient.protocols.has('komga')) {
    const refs = await Promise.all(visible.map((b) => cache.removedRef(b)));
    for (const ref of refs) out.push({ protocol: 'komga', name: 'BookDeleted', body: JSON.stringify(ref) });
    out.push(...seriesChanged(refs));
  }
  return out;
}

const stomp = (name: string, payload: unknown): Outbound => ({ protocol: 'stomp', name: queue(name), body: JSON.stringify(payload) });

async function messagesFor(store: Store, cache: BatchCache, stored: StoredEvent, recipient: Recipient): Promise<Outbound[]> {
  const { event } = stored;
  const { principal } = recipient;
  switch (event.kind) {
    case 'books-added':
    case 'books-changed':
    case 'books-metadata-changed':
    case 'covers-changed':
      return bookMessages(store, cache, event, recipient);
    case 'books-removed':
      return removalMessages(cache, event.books, recipient);
    case 'bookdrop-changed':
      return isManager(principal) && recipient.protocols.has('stomp') ? [{ protocol: 'stomp', name: queue('bookdrop-file'), body: await cache.bookdropBody() }] : [];
    case 'log':
      return reaches(event.audience, principal) ? [stomp('log', { timestamp: new Date(stored.createdAtMs).toISOString(), message: event.message, severity: event.severity })] : [];
    case 'task-progress':
      return reaches(event.audience, principal)
        ? [stomp('task-progress', { taskId: event.taskId, taskType: event.taskType, message: event.message, progress: event.progress, taskStatus: event.taskStatus })]
        : [];
    case 'metadata-progress':
      return reaches(event.audience, principal)
        ? [stomp('book-metadata-batch-progress', { taskId: event.taskId, completed: event.completed, total: event.total, message: event.message, status: event.status, review: event.review })]
        : [];
    case 'library-changed': {
      if (event.change !== 'deleted' && !canSeeLibrary(principal, event.libraryId)) return [];
      const name = { added: 'LibraryAdded', changed: 'LibraryChanged', deleted: 'LibraryDeleted' }[event.change];
      return [{ protocol: 'komga', name, body: JSON.stringify({ libraryId: String(event.libraryId) }) }];
    }
    case 'read-progress': {
      if (event.userId !== principal.userId || !recipient.protocols.has('komga')) return [];
      const refs = await cache.komgaRefsOf(event.bookIds);
      const out: Outbound[] = [];
      for (const ref of refs.values()) {
        out.push({ protocol: 'komga', name: event.deleted ? 'ReadProgressDeleted' : 'ReadProgressChanged', body: (userId) => JSON.stringify({ bookId: ref.bookId, userId }) });
      }
      for (const seriesRef of new Set([...refs.values()].map((r) => r.seriesId))) {
        out.push({ protocol: 'komga', name: 'ReadProgressSeriesChanged', body: (userId) => JSON.stringify({ seriesId: seriesRef, userId }) });
      }
      return out;
    }
    case 'session-revoked':
      // Sent by the hub itself: the account may be gone, and with it the principal.
      return [];
  }
}

/** What the connections of a user whose sessions ended are told before they close. */
export function revocationMessages(reason: string): Outbound[] {
  return [stomp('session-revoked', { reason }), { protocol: 'komga', name: 'SessionExpired', body: (userId) => JSON.stringify({ userId }) }];
}

/** What each recipient is sent for a batch of events; a failure on one event for one user drops only that. */
export async function translate(store: Store, events: readonly StoredEvent[], recipients: ReadonlyMap<number, Recipient>, onError: (error: unknown) => void): Promise<Translation> {
  const cache = new BatchCache(store);
  const out: Translation = { messages: new Map(), revoked: new Map(), librariesChanged: false };
  for (const stored of events) {
    if (stored.event.kind === 'session-revoked') out.revoked.set(stored.event.userId, stored.event.reason);
    if (stored.event.kind === 'library-changed') out.librariesChanged = true;
    for (const [userId, recipient] of recipients) {
      let messages: Outbound[];
      try {
        messages = await messagesFor(store, cache, stored, recipient);
      } catch (error) {
        onError(error);
        continue;
      }
      if (messages.length === 0) continue;
      const list = out.messages.get(userId);
      if (list) list.push(...messages);
      else out.messages.set(userId, messages);
    }
  }
  return out;
}
