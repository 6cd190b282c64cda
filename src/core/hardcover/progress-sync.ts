// Progress changes waiting to go to Hardcover, pushed in the background one user at a time. A change for a user
// without sync costs one settings read and sends nothing; changes to one book that pile up while a push runs collapse
// into the newest; each user's key has its own rate limit; a failure is logged and never reaches the reader.
import { asString } from '../metadata/values.ts';
import type { RateLimiter } from '../metadata/provider.ts';
import type { HttpClient } from '../net/http-client.ts';
import type { Db } from '../store/store.ts';
import { createTokenBucket, hardcoverApi } from './hardcover-api.ts';
import { pushProgress, type BookIdentifiers } from './progress-push.ts';
import { hardcoverSyncKey } from './sync-settings.ts';

export interface SyncLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export interface ProgressSyncOptions {
  db: Db;
  http: HttpClient;
  /** Hardcover's GraphQL URL. */
  endpoint: string;
  log: SyncLog;
  /** Told about every background job (the daemon waits for them on shutdown). */
  track?: (job: Promise<void>) => void;
  /** The local date written on reads, YYYY-MM-DD. */
  today?: () => string;
  /** The limiter for one API key; default: a burst of 10, then 60 a minute. */
  limiterFor?: (apiKey: string) => RateLimiter;
}

export interface ProgressChange {
  userId: number;
  /** The book, or a look-up run in the background (KOReader names a document, not a book). */
  bookId: number | (() => Promise<number | undefined>);
  /** 0..100. */
  percent: number;
}

export interface ProgressSync {
  /** Queues the change and returns at once; never throws. */
  progressChanged(change: ProgressChange): void;
  /** Resolves when nothing is queued or running. */
  idle(): Promise<void>;
}

/** Books waiting per user: a reader turning pages in many books at once still holds a bounded queue. */
const MAX_PENDING_PER_USER = 200;
/** (user, book) → the percent last pushed, so a repeated report sends nothing. */
const MAX_REMEMBERED = 10_000;

export function localDate(date: Date = new Date()): string {
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** The identifiers Hardcover can be searched by; undefined for a book that is gone. */
export async function bookIdentifiers(db: Db, bookId: number): Promise<BookIdentifiers | undefined> {
  const row = await db
    .selectFrom('book')
    .leftJoin('book_metadata', 'book_metadata.book_id', 'book.id')
    .select(['book.id', 'book_metadata.hardcover_book_id', 'book_metadata.hardcover_id', 'book_metadata.isbn_13', 'book_metadata.isbn_10'])
    .where('book.id', '=', bookId)
    .where('book.deleted', '=', 0)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    hardcoverBookId: asString(row.hardcover_book_id) ?? null,
    hardcoverSlug: asString(row.hardcover_id) ?? null,
    isbn13: asString(row.isbn_13) ?? null,
    isbn10: asString(row.isbn_10) ?? null,
  };
}

export function createProgressSync(options: ProgressSyncOptions): ProgressSync {
  const { db, log } = options;
  const inFlight = new Set<Promise<void>>();
  const queues = new Map<number, { pending: Map<number, number>; running: boolean }>();
  const lastPushed = new Map<string, number>();
  const limiters = new Map<string, RateLimiter>();
  const limiterFor = (apiKey: string): RateLimiter => {
    let limiter = limiters.get(apiKey);
    if (!limiter) {
      limiter = options.limiterFor?.(apiKey) ?? createTokenBucket(10, 60);
      limiters.set(apiKey, limiter);
    }
    return limiter;
  };

  const track = (job: Promise<void>): void => {
    inFlight.add(job);
    options.track?.(job);
    void job.finally(() => inFlight.delete(job));
  };

  const remember = (memo: string, percent: number): void => {
    lastPushed.delete(memo);
    lastPushed.set(memo, percent);
    if (lastPushed.size > MAX_REMEMBERED) lastPushed.delete(lastPushed.keys().next().value as string);
  };

  async function pushOne(userId: number, bookId: number, percent: number): Promise<void> {
    // Read again: sync may have been turned off (or the key changed) since the change was queued.
    const apiKey = await hardcoverSyncKey(db, userId);
    if (!apiKey) return;
    const memo = `${userId}:${bookId}`;
    if (lastPushed.get(memo) === percent) return;
    const ids = await bookIdentifiers(db, bookId);
    if (!ids) return;
    const api = hardcoverApi({ http: options.http, endpoint: options.endpoint, apiKey, limiter: limiterFor(apiKey) });
    const outcome = await pushProgress(api, ids, percent, (options.today ?? localDate)());
    if (outcome.status === 'synced') {
      remember(memo, percent);
      log.info({ userId, bookId, hardcoverBookId: outcome.bookId, editionId: outcome.editionId, progressPages: outcome.progressPages, pages: outcome.pages }, 'hardcover: progress synced');
    } else {
      log.info({ userId, bookId, reason: outcome.reason }, 'hardcover: progress not synced');
    }
  }

  async function drain(userId: number, queue: { pending: Map<number, number>; running: boolean }): Promise<void> {
    try {
      for (let next = queue.pending.entries().next(); !next.done; next = queue.pending.entries().next()) {
        const [bookId, percent] = next.value;
        queue.pending.delete(bookId);
        try {
          await pushOne(userId, bookId, percent);
        } catch (error) {
          log.warn({ userId, bookId, err: error }, 'hardcover: progress sync failed');
        }
      }
    } finally {
      queue.running = false;
      if (queue.pending.size === 0) queues.delete(userId);
    }
  }

  async function intake(change: ProgressChange): Promise<void> {
    if (!(await hardcoverSyncKey(db, change.userId))) return;
    const bookId = typeof change.bookId === 'number' ? change.bookId : await change.bookId();
    if (bookId === undefined) return;
    const percent = Math.min(100, Math.max(0, change.percent));
    let queue = queues.get(change.userId);
    if (!queue) {
      queue = { pending: new Map(), running: false };
      queues.set(change.userId, queue);
    }
    queue.pending.delete(bookId);
    queue.pending.set(bookId, percent);
    if (queue.pending.size > MAX_PENDING_PER_USER) queue.pending.delete(queue.pending.keys().next().value as number);
    if (!queue.running) {
      queue.running = true;
      track(drain(change.userId, queue));
    }
  }

  return {
    progressChanged(change) {
      if (!Number.isFinite(change.percent)) return;
      track(intake(change).catch((error: unknown) => log.warn({ userId: change.userId, err: error }, 'hardcover: progress sync failed')));
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
