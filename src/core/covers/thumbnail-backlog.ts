// Thumbnails made after a scan. A scan stores each book's cover as soon as it is settled (the book's own JPEG, or a
// bounded JPEG made from another image) and queues its thumbnail (table cover_thumbnail_pending); the thumbnail is
// made by whichever comes first: a request for it (`ensureThumbnail`, from the cover routes) or the backlog job
// (`makePendingThumbnails`, run by bindery serve, or by `bindery scan --thumbnails`). The queue is in the catalog, so
// nothing is forgotten across a restart; settling it is bookkeeping, not a catalog change (no page cache is dropped).
import { randomUUID } from 'node:crypto';
import { rename, rm, stat, writeFile } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { FormatError } from '../formats/errors.ts';
import type { SqlExec } from '../store/sql-exec.ts';
import type { Store } from '../store/store.ts';
import { thumbnailOfCoverFile, type CoverKind } from './cover-images.ts';
import { coverFile } from './cover-store.ts';

/** In the scan's write transaction: this book's cover of `kind` was stored without its thumbnail. */
export async function queueThumbnail(exec: SqlExec, bookId: number, kind: CoverKind): Promise<void> {
  await exec.run('insert into cover_thumbnail_pending (book_id, kind) values (?, ?) on conflict do nothing', [bookId, kind]);
}

/** How many thumbnails are still to be made. */
export async function pendingThumbnailCount(store: Store): Promise<number> {
  const row = await store.exec.get('select count(*) as n from cover_thumbnail_pending');
  return Number(row?.n ?? 0);
}

const fileStat = (path: string): Promise<Stats | undefined> => stat(path).catch(() => undefined);

/** Same file, same content as far as a replacement (always a rename onto the path) would show. */
const sameFile = (a: Stats, b: Stats | undefined): boolean => b !== undefined && a.ino === b.ino && a.mtimeMs === b.mtimeMs && a.size === b.size;

export type ThumbnailState = 'present' | 'made' | 'no-cover';

/**
 * Makes the thumbnail of a book's stored cover unless it exists. A cover replaced while its thumbnail was being made
 * has it made again from the new one; a cover that cannot be decoded is removed, so the book shows no cover, as a
 * scan that made the thumbnail at once would have left it.
 */
async function makeMissingThumbnail(coversRoot: string, bookId: number, kind: CoverKind): Promise<ThumbnailState> {
  const thumbnail = coverFile(coversRoot, bookId, kind, 'thumbnail');
  const cover = coverFile(coversRoot, bookId, kind, 'cover');
  for (;;) {
    if ((await fileStat(thumbnail))?.isFile()) return 'present';
    const before = await fileStat(cover);
    if (!before?.isFile()) return 'no-cover';
    let image: Buffer;
    try {
      image = await thumbnailOfCoverFile(cover, kind);
    } catch (error) {
      if (!(error instanceof FormatError)) throw error;
      if (sameFile(before, await fileStat(cover))) {
        await rm(cover, { force: true });
        return 'no-cover';
      }
      continue;
    }
    if (!sameFile(before, await fileStat(cover))) continue;
    const tmp = `${thumbnail}.${randomUUID()}.tmp`;
    await writeFile(tmp, image);
    await rename(tmp, thumbnail);
    return 'made';
  }
}

const inFlight = new Map<string, Promise<ThumbnailState>>();

/** The thumbnail of a book's cover, made now if it is missing; concurrent calls for one thumbnail share the work. */
export function ensureThumbnail(coversRoot: string, bookId: number, kind: CoverKind): Promise<ThumbnailState> {
  const key = coverFile(coversRoot, bookId, kind, 'thumbnail');
  let making = inFlight.get(key);
  if (!making) {
    making = makeMissingThumbnail(coversRoot, bookId, kind).finally(() => inFlight.delete(key));
    inFlight.set(key, making);
  }
  return making;
}

export interface BacklogOptions {
  /** Thumbnails made at the same time (each one a libvips pipeline on the thread pool). */
  concurrency?: number;
  /** Stops taking new rows once true (a daemon closing, a lease lost). */
  stopped?: () => boolean;
  /** A failure other than an undecodable cover (a full disk, say): that row stays queued, the rest go on. */
  onError?: (error: unknown, bookId: number, kind: CoverKind) => void;
}

const BATCH = 64;
const PENDING = 'select book_id, kind from cover_thumbnail_pending';
const PENDING_ORDER = 'order by book_id desc, kind limit ?';

/**
 * Makes every queued thumbnail, newest books first (the ones a "recently added" view shows), and settles their rows.
 * Returns how many were made; rows that failed stay for the next run.
 */
export async function makePendingThumbnails(store: Store, coversRoot: string, options: BacklogOptions = {}): Promise<number> {
  const concurrency = Math.max(1, options.concurrency ?? 1);
  let made = 0;
  // Rows that failed stay in the table: walk past them in (book_id desc, kind) order rather than reading them again.
  let after: { book_id: number; kind: CoverKind } | undefined;
  while (!options.stopped?.()) {
    const batch = (await (after
      ? store.exec.all(`${PENDING} where book_id < ? or (book_id = ? and kind > CAST(? AS text)) ${PENDING_ORDER}`, [after.book_id, after.book_id, after.kind, BATCH])
      : store.exec.all(`${PENDING} ${PENDING_ORDER}`, [BATCH]))) as { book_id: number; kind: CoverKind }[];
    if (batch.length === 0) break;
    after = batch.at(-1);
    const settled: { book_id: number; kind: CoverKind }[] = [];
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < batch.length && !options.stopped?.()) {
        const row = batch[next++]!;
        try {
          if ((await ensureThumbnail(coversRoot, row.book_id, row.kind)) === 'made') made++;
          settled.push(row);
        } catch (error) {
          options.onError?.(error, row.book_id, row.kind);
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, lane));
    if (settled.length > 0) {
      const which = settled.map(() => '(book_id = ? and kind = CAST(? AS text))').join(' or ');
      await store.bookkeeping.exec.run(`delete from cover_thumbnail_pending where ${which}`, settled.flatMap((row) => [row.book_id, row.kind]));
    }
  }
  return made;
}
