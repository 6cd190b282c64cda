// What happened, as the rest of the code reports it for live updates: domain code says "these books were added" or
// "task X is at 40 %"; which clients hear of it, and in which wire shape (STOMP for the web UI, SSE for Komga
// clients), is decided by the server processes that tail the outbox (src/daemon/live/). Events are hints to refresh.
import { appendEvent, type EventTarget } from './outbox.ts';

/** Who a message that is not about books goes to. */
export type Audience =
  /** One user (the one who started the task, or whose sessions ended). */
  | { userId: number }
  /** Admins and users who may manage libraries (what no single user started: a cron scan, the bookdrop). */
  | 'managers';

export type LogSeverity = 'INFO' | 'WARN' | 'ERROR';

/** A book as it was just before it left the catalog: enough to tell who could see it and which series it was in. */
export interface RemovedBook {
  id: number;
  libraryId: number;
  seriesName: string | null;
  title: string | null;
}

export type LiveEvent =
  /** New books (scan, upload, bookdrop import, physical book). */
  | { kind: 'books-added'; bookIds: number[] }
  /** Books whose files, place or metadata changed (rescan, move, edit, missing or back). */
  | { kind: 'books-changed'; bookIds: number[] }
  /** Books whose metadata a metadata fetch task replaced. */
  | { kind: 'books-metadata-changed'; bookIds: number[] }
  | { kind: 'covers-changed'; bookIds: number[] }
  | { kind: 'books-removed'; books: RemovedBook[] }
  /** The bookdrop folder's content changed; the counts are read when the event is sent. */
  | { kind: 'bookdrop-changed' }
  | { kind: 'library-changed'; libraryId: number; change: 'added' | 'changed' | 'deleted' }
  | { kind: 'log'; audience: Audience; message: string; severity: LogSeverity }
  | { kind: 'task-progress'; audience: Audience; taskId: string; taskType: string; message: string; progress: number; taskStatus: string }
  | { kind: 'metadata-progress'; audience: Audience; taskId: string; completed: number; total: number; message: string; status: string; review: boolean }
  /** A user's reading progress on books changed (Komga clients); `deleted` when it was cleared. */
  | { kind: 'read-progress'; userId: number; bookIds: number[]; deleted: boolean }
  /** Every session of the user ended: their live connections get told and are closed. */
  | { kind: 'session-revoked'; userId: number; reason: string };

export type LiveEventKind = LiveEvent['kind'];

function isEmpty(event: LiveEvent): boolean {
  if ('bookIds' in event) return event.bookIds.length === 0;
  if (event.kind === 'books-removed') return event.books.length === 0;
  return false;
}

/**
 * Reports what happened. Pass the change's transaction where there is one (the event then commits with it) or the
 * catalog. Never throws: a lost hint must not undo or fail the change it describes.
 */
export async function emitEvent(target: EventTarget, event: LiveEvent): Promise<void> {
  if (isEmpty(event)) return;
  try {
    await appendEvent(target, event);
  } catch {
    // The outbox is missing or locked past busy_timeout: clients catch up on their next fetch. (Inside a PostgreSQL
    // transaction a failed statement aborts the transaction all the same; the statements are portable, so only a lost
    // connection gets here, and that fails the change anyway.)
  }
}

/**
 * Every session of the user ended (password changed, account disabled or deleted, signed out everywhere, OIDC
 * back-channel logout): each server process tells the user's live connections (`/user/queue/session-revoked`, Komga
 * `SessionExpired`) and closes them.
 */
export function publishSessionRevoked(target: EventTarget, userId: number, reason = 'sessions_revoked'): Promise<void> {
  return emitEvent(target, { kind: 'session-revoked', userId, reason });
}
