// Progress changes on their way to Hardcover, as every process that receives one (web and app readers, KOReader, Kobo)
// hands them over: in the background, recorded in the catalog's push queue (push-queue.ts), where the process holding
// the hardcover-push lease picks them up (progress-pusher.ts). A change for a user without sync costs one settings read
// and records nothing; a failure is logged and never reaches the reader.
import type { Db } from '../store/store.ts';
import { queuePush } from './push-queue.ts';
import { hardcoverSyncKey } from './sync-settings.ts';

export interface SyncLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export interface ProgressSyncOptions {
  db: Db;
  log: SyncLog;
  /** Told about every background job (the daemon waits for them on shutdown). */
  track?: (job: Promise<void>) => void;
  /** Called once a change is in the queue (the pusher of this process, if it runs, looks at once). */
  recorded?: () => void;
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
  /** Resolves when no change is being recorded. */
  idle(): Promise<void>;
}

export function createProgressSync(options: ProgressSyncOptions): ProgressSync {
  const { db, log } = options;
  const inFlight = new Set<Promise<void>>();

  const track = (job: Promise<void>): void => {
    inFlight.add(job);
    options.track?.(job);
    void job.finally(() => inFlight.delete(job));
  };

  async function record(change: ProgressChange, receivedAt: Date): Promise<void> {
    if (!(await hardcoverSyncKey(db, change.userId))) return;
    const bookId = typeof change.bookId === 'number' ? change.bookId : await change.bookId();
    if (bookId === undefined) return;
    await queuePush(db, { userId: change.userId, bookId, percent: Math.min(100, Math.max(0, change.percent)) }, receivedAt);
    options.recorded?.();
  }

  // Changes are queued one after the other, in the order they were reported: each is a read and a write, and two of
  // them under way at once (one book read on a phone, then on the web reader) could land in the queue in either order.
  let last: Promise<void> = Promise.resolve();
  return {
    progressChanged(change) {
      if (!Number.isFinite(change.percent)) return;
      const receivedAt = new Date();
      last = last.then(() => record(change, receivedAt)).catch((error: unknown) => log.warn({ userId: change.userId, err: error }, 'hardcover: progress change not queued'));
      track(last);
    },
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
