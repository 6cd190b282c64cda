// Sends the queued progress changes (push-queue.ts) to Hardcover: run by the one process that holds the hardcover-push
// lease, so a change is sent once however many server processes share the catalog. It looks at the queue when told a
// change was recorded here, when the catalog changed (another process may have recorded one: the store's generation,
// which follows every process's commits, is checked every half second without touching the database), when a
// postponed change falls due, and once a minute whatever happens.
//
// Each user's changes go out one at a time, users side by side; each API key has its own rate limit. A change is sent
// with its newest percent, and a percent already sent for that book is not sent again. A row is removed only once the
// change is sent, or skipped (sync turned off, the book gone or unknown to Hardcover), or given up after MAX_ATTEMPTS
// failed tries; each failure is logged and tried again later (1, 4, 16 then 64 minutes on). A process killed mid-push
// leaves the row, and the next holder sends it again.
import type { RateLimiter } from '../metadata/provider.ts';
import { asString } from '../metadata/values.ts';
import type { HttpClient } from '../net/http-client.ts';
import { sameGeneration, type Generation } from '../store/snapshot.ts';
import type { Db } from '../store/store.ts';
import { createTokenBucket, hardcoverApi } from './hardcover-api.ts';
import { pushProgress, type BookIdentifiers } from './progress-push.ts';
import type { SyncLog } from './progress-sync.ts';
import { nextDueAt, nextDuePush, postponePush, removePush, usersWithDuePushes, type QueuedPush } from './push-queue.ts';
import { hardcoverSyncKey } from './sync-settings.ts';

export interface ProgressPusherOptions {
  db: Db;
  http: HttpClient;
  /** Hardcover's GraphQL URL. */
  endpoint: string;
  log: SyncLog;
  /** The catalog's generation (Store.generation): when it moves, the queue is looked at. */
  generation: () => Generation;
  /** Told about every background job (the daemon waits for them on shutdown). */
  track?: (job: Promise<void>) => void;
  /** The limiter for one API key; default: a burst of 10, then 60 a minute. */
  limiterFor?: (apiKey: string) => RateLimiter;
  /** How long to wait before the try after `attempts` failed ones (ms). */
  retryDelayMs?: (attempts: number) => number;
  /** How often the generation is compared (ms). */
  checkEveryMs?: number;
}

export interface ProgressPusher {
  /** Looks at the queue now. */
  wake(): void;
  /** Resolves when nothing is being looked at or sent. */
  idle(): Promise<void>;
  /** Sends nothing more; resolves once the pushes under way are done. */
  stop(): Promise<void>;
}

/** Tries of one change before it is given up. */
export const MAX_ATTEMPTS = 5;
/** (user, book) → the percent last sent, so a repeated report sends nothing. */
const MAX_REMEMBERED = 10_000;
const CHECK_MS = 500;
/** The queue is looked at this often even when nothing seems to have changed. */
const SWEEP_MS = 60_000;
/** After the catalog could not be read, the next look waits this long. */
const FAILED_LOOK_PAUSE_MS = 5_000;
/** Users started per look; the others are picked up when one of them is done. */
const USERS_PER_LOOK = 100;

export function defaultRetryDelayMs(attempts: number): number {
  return 60_000 * 4 ** Math.max(0, attempts - 1);
}

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

export function startProgressPusher(options: ProgressPusherOptions): ProgressPusher {
  const { db, log } = options;
  const retryDelayMs = options.retryDelayMs ?? defaultRetryDelayMs;
  const drains = new Map<number, Promise<void>>();
  const lastPushed = new Map<string, number>();
  const limiters = new Map<string, RateLimiter>();
  let stopped = false;
  let looking: Promise<void> | undefined;
  let lookAgain = false;
  let seen: Generation | undefined;
  let lastLookAt = 0;
  let nextDue: number | undefined;
  let pausedUntil = 0;

  const track = (job: Promise<void>): void => options.track?.(job);

  const limiterFor = (apiKey: string): RateLimiter => {
    let limiter = limiters.get(apiKey);
    if (!limiter) {
      limiter = options.limiterFor?.(apiKey) ?? createTokenBucket(10, 60);
      limiters.set(apiKey, limiter);
    }
    return limiter;
  };

  const remember = (memo: string, percent: number): void => {
    lastPushed.delete(memo);
    lastPushed.set(memo, percent);
    if (lastPushed.size > MAX_REMEMBERED) lastPushed.delete(lastPushed.keys().next().value as string);
  };

  /** Sends one change, or finds it needs no sending; throws when Hardcover could not be reached or refused it. */
  async function send(push: QueuedPush): Promise<void> {
    const { userId, bookId, percent } = push;
    // Read now: sync may have been turned off (or the key changed) since the change was recorded.
    const apiKey = await hardcoverSyncKey(db, userId);
    const memo = `${userId}:${bookId}`;
    const ids = apiKey && lastPushed.get(memo) !== percent ? await bookIdentifiers(db, bookId) : undefined;
    if (!apiKey || !ids) return;
    const api = hardcoverApi({ http: options.http, endpoint: options.endpoint, apiKey, limiter: limiterFor(apiKey) });
    const outcome = await pushProgress(api, ids, percent, localDate(new Date(push.changedAt)));
    if (outcome.status === 'synced') {
      remember(memo, percent);
      log.info({ userId, bookId, hardcoverBookId: outcome.bookId, editionId: outcome.editionId, progressPages: outcome.progressPages, pages: outcome.pages }, 'hardcover: progress synced');
    } else {
      log.info({ userId, bookId, reason: outcome.reason }, 'hardcover: progress not synced');
    }
  }

  async function pushOne(push: QueuedPush): Promise<void> {
    try {
      await send(push);
    } catch (error) {
      const attempts = push.attempts + 1;
      const details = { userId: push.userId, bookId: push.bookId, attempts, err: error };
      if (attempts < MAX_ATTEMPTS) {
        const retryInMs = retryDelayMs(attempts);
        log.warn({ ...details, retryInMs }, 'hardcover: progress sync failed; it will be tried again');
        await postponePush(db, push, Date.now() + retryInMs, error instanceof Error ? error.message : String(error));
        return;
      }
      log.warn(details, 'hardcover: progress sync failed too often; given up');
    }
    await removePush(db, push);
  }

  /** The user's due changes, one at a time, until none is left (changes recorded meanwhile included). */
  async function drain(userId: number): Promise<void> {
    let failed = false;
    try {
      for (let push = await nextDuePush(db, userId, Date.now()); push && !stopped; push = await nextDuePush(db, userId, Date.now())) await pushOne(push);
    } catch (error) {
      failed = true;
      pausedUntil = Date.now() + FAILED_LOOK_PAUSE_MS;
      log.warn({ userId, err: error }, 'hardcover: progress queue not read');
    } finally {
      drains.delete(userId);
      // A change recorded while the last look skipped this user (busy then) is picked up now.
      if (!failed) wake();
    }
  }

  async function look(): Promise<void> {
    try {
      do {
        lookAgain = false;
        seen = options.generation();
        lastLookAt = Date.now();
        for (const userId of await usersWithDuePushes(db, lastLookAt, USERS_PER_LOOK)) {
          if (stopped) return;
          if (drains.has(userId)) continue;
          const job = drain(userId);
          drains.set(userId, job);
          track(job);
        }
        nextDue = await nextDueAt(db, Date.now());
      } while (lookAgain && !stopped);
    } catch (error) {
      pausedUntil = Date.now() + FAILED_LOOK_PAUSE_MS;
      log.warn({ err: error }, 'hardcover: progress queue not read');
    } finally {
      looking = undefined;
    }
  }

  function wake(): void {
    if (stopped) return;
    if (looking) {
      lookAgain = true;
      return;
    }
    const job = look();
    // look() ends in `finally` only after its first await, so this assignment comes first.
    looking = job;
    track(job);
  }

  const timer = setInterval(() => {
    const now = Date.now();
    if (looking || now < pausedUntil) return;
    const changed = !seen || !sameGeneration(seen, options.generation());
    if (changed || (nextDue !== undefined && now >= nextDue) || now - lastLookAt >= SWEEP_MS) wake();
  }, options.checkEveryMs ?? CHECK_MS);
  timer.unref();
  wake();

  const idle = async (): Promise<void> => {
    for (;;) {
      const jobs = [looking, ...drains.values()].filter((job): job is Promise<void> => job !== undefined);
      if (jobs.length === 0) return;
      await Promise.allSettled(jobs);
    }
  };

  return {
    wake,
    idle,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await idle();
    },
  };
}
