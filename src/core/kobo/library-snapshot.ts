// Snapshots of a user's Kobo shelf. A sync session takes one snapshot when it starts and pages through it; the next
// session diffs its own snapshot against the last finished one: books added, books whose file, metadata or cover
// changed, books gone. Every step is an indexed query over the snapshot rows, so a page costs the same on a 10,000-book
// shelf as on a small one.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import type { Db } from '../store/store.ts';
import { parseFormatPriority } from '../books/book-json.ts';
import { primaryOrderSql } from '../books/primary-file.ts';
import { libraryPriorities } from './kobo-books.ts';
import { kyselyExec, rowsOf, type SqlExec } from '../store/sql-exec.ts';
import type { SyncToken } from './sync-token.ts';

/** A snapshot's reads and writes: Store.bookkeeping.db (or a transaction of it) for writes, any reader for reads. */
type Trx = Db;

/** Snapshots nobody finished or came back to within this time are dropped (a device gone for good). */
const FORGET_AFTER_DAYS = 90;

/** The snapshots a device's token names that still exist (one query for both). */
export async function snapshotsOf(exec: SqlExec, userId: number, token: Pick<SyncToken, 'ongoingSyncPointId' | 'lastSuccessfulSyncPointId'>): Promise<{ ongoingId: string | undefined; previousId: string | undefined }> {
  const named = [token.ongoingSyncPointId, token.lastSuccessfulSyncPointId].filter((id): id is string => id !== null);
  // Every sync page asks: plain SQL, one placeholder per id named (one or two).
  const found =
    named.length === 0
      ? new Set<string>()
      : new Set((await rowsOf<{ id: string }>(exec, `SELECT id FROM kobo_library_snapshot WHERE id IN (${named.map(() => '?').join(', ')}) AND user_id = ?`, [...named, userId])).map((r) => r.id));
  const existing = (id: string | null): string | undefined => (id !== null && found.has(id) ? id : undefined);
  return { ongoingId: existing(token.ongoingSyncPointId), previousId: existing(token.lastSuccessfulSyncPointId) };
}

/**
 * The books of the shelf the device may receive now, one row each: visible to the user, in the catalog, with an EPUB
 * as primary file (chosen as pickPrimary does, in SQL), in the state the snapshot records.
 */
async function shelfContents(trx: Trx, principal: Principal, shelfId: number) {
  const priorities = new Map([...(await libraryPriorities(kyselyExec(trx)))].map(([id, text]) => [id, parseFormatPriority(text)]));
  const ranked = trx
    .selectFrom('book')
    .innerJoin('book_file as f', (join) => join.onRef('f.book_id', '=', 'book.id').on('f.is_book', '=', 1))
    .select([
      'book.id as book_id',
      'f.book_type',
      'f.current_hash as file_hash',
      'book.metadata_updated_at',
      'book.book_cover_hash as cover_hash',
      sql<number>`ROW_NUMBER() OVER (PARTITION BY book.id ORDER BY ${primaryOrderSql('f', 'book.library_id', priorities)})`.as('pick'),
    ])
    .where('book.id', 'in', trx.selectFrom('book_shelf_mapping').select('book_id').where('shelf_id', '=', shelfId))
    .where('book.deleted', '=', 0)
    .where('book.is_physical', '=', 0)
    .where(visibleBookFilter(principal));
  return trx
    .selectFrom(ranked.as('s'))
    .select(['s.book_id', 's.file_hash', 's.metadata_updated_at', 's.cover_hash'])
    .where('s.pick', '=', 1)
    .where('s.book_type', '=', 'EPUB');
}

type ShelfContents = Awaited<ReturnType<typeof shelfContents>>;

/** `a` and `b` equal, NULL equal to NULL. */
const bothEqual = (a: string, b: string): string => `(${a} = ${b} OR (${a} IS NULL AND ${b} IS NULL))`;

/** Whether the previous snapshot's row `p` holds the shelf row `s` in the state it has now. */
const SYNCED_BEFORE = sql.raw(
  `CASE WHEN p.book_id IS NOT NULL AND ${bothEqual('p.file_hash', 's.file_hash')} AND ${bothEqual('p.metadata_updated_at', 's.metadata_updated_at')} AND ${bothEqual('p.cover_hash', 's.cover_hash')} THEN 1 ELSE 0 END`,
);

/**
 * Whether the previous snapshot holds exactly the shelf as it is. A finished snapshot is entirely on the device
 * (whatever its `synced` flags say: they record what was already there when it was written).
 */
async function sameAsPrevious(trx: Trx, contents: ShelfContents, previousId: string): Promise<boolean> {
  const counts = await sql<{ books: number | string; synced: number | string | null; previous: number | string }>`SELECT count(*) AS books,
      SUM(${SYNCED_BEFORE}) AS synced,
      (SELECT count(*) FROM kobo_library_snapshot_book WHERE snapshot_id = ${previousId}) AS previous
    FROM ${contents} AS s LEFT JOIN kobo_library_snapshot_book p ON p.snapshot_id = ${previousId} AND p.book_id = s.book_id`.execute(trx);
  const row = counts.rows[0];
  const books = Number(row?.books ?? 0);
  return books === Number(row?.previous ?? -1) && books === Number(row?.synced ?? 0);
}

/**
 * A device starts a session from `referenceId`: it got the whole session that ended on it, so it needs neither the
 * snapshot that session was compared with (kept until now for a retry of its last page) nor any other session begun
 * from the same reference and given up (an aborted sync, a first page whose answer was lost). Snapshots belong to the
 * device whose sessions wrote them, so another device's are never among these.
 */
async function forgetBefore(trx: Trx, userId: number, referenceId: string): Promise<void> {
  const reference = await trx.selectFrom('kobo_library_snapshot').select('previous_snapshot_id').where('id', '=', referenceId).executeTakeFirst();
  await trx
    .deleteFrom('kobo_library_snapshot')
    .where('user_id', '=', userId)
    .where('id', '!=', referenceId)
    .where((eb) => eb.or([eb('previous_snapshot_id', '=', referenceId), ...(reference?.previous_snapshot_id ? [eb('id', '=', reference.previous_snapshot_id)] : [])]))
    .execute();
}

/**
 * The snapshot a new session pages through. When the shelf is exactly as the previous (finished) snapshot holds it,
 * that snapshot is reused and nothing is written: a sync with nothing new costs one read. Otherwise a new one is
 * written in one statement, books unchanged since the previous one already marked synced (the device has them as
 * they are). Neither the shelf's books nor the previous snapshot's rows pass through JavaScript.
 */
export async function createSnapshot(trx: Trx, principal: Principal, shelfId: number | undefined, previousId: string | undefined): Promise<string> {
  if (previousId !== undefined) await forgetBefore(trx, principal.userId, previousId);
  const contents = shelfId === undefined ? undefined : await shelfContents(trx, principal, shelfId);
  if (previousId !== undefined) {
    const unchanged = contents === undefined
      ? (await trx.selectFrom('kobo_library_snapshot_book').select('book_id').where('snapshot_id', '=', previousId).limit(1).executeTakeFirst()) === undefined
      : await sameAsPrevious(trx, contents, previousId);
    if (unchanged) return previousId;
  }
  const id = randomUUID();
  await trx.insertInto('kobo_library_snapshot').values({ id, user_id: principal.userId, created_date: new Date().toISOString(), previous_snapshot_id: previousId ?? null }).execute();
  if (contents !== undefined) {
    await sql`INSERT INTO kobo_library_snapshot_book (snapshot_id, book_id, synced, file_hash, metadata_updated_at, cover_hash)
      SELECT CAST(${id} AS text), s.book_id, ${SYNCED_BEFORE}, s.file_hash, s.metadata_updated_at, s.cover_hash
      FROM ${contents} AS s LEFT JOIN kobo_library_snapshot_book p ON p.snapshot_id = CAST(${previousId ?? ''} AS text) AND p.book_id = s.book_id`.execute(trx);
  }
  return id;
}

export interface PageOfIds {
  ids: number[];
  /** More books of this phase wait for a later page. */
  more: boolean;
}

const pageOf = (ids: number[], limit: number): PageOfIds => ({ ids: ids.slice(0, limit), more: ids.length > limit });

const UNSENT = (exists: 'EXISTS' | 'NOT EXISTS'): string => `SELECT c.book_id FROM kobo_library_snapshot_book c
  WHERE c.snapshot_id = ? AND c.synced = 0 AND c.book_id > ?
    AND ${exists} (SELECT 1 FROM kobo_library_snapshot_book p WHERE p.snapshot_id = ? AND p.book_id = c.book_id)
  ORDER BY c.book_id LIMIT ?`;
const UNSENT_ADDED = UNSENT('NOT EXISTS');
const UNSENT_CHANGED = UNSENT('EXISTS');

/**
 * The next books of the current snapshot the device lacks after `afterBookId`, in book id order: those the previous
 * snapshot lacked (`added`) or held in another state (`changed`). Rows are never updated while a session pages through
 * them: which row is unsent was settled when the snapshot was written (`synced` = the device already had the book as
 * it is), and how far the device has come is the position in its token. So the same token always gives the same page.
 * `limit` may be 0: the answer then only says whether any wait. Plain SQL: it runs on every page.
 */
export async function unsentAfter(exec: SqlExec, currentId: string, previousId: string | undefined, kind: 'added' | 'changed', afterBookId: number, limit: number): Promise<PageOfIds> {
  // A reused snapshot (nothing changed) is its own previous: nothing of it is unsent.
  if ((kind === 'changed' && previousId === undefined) || currentId === previousId) return { ids: [], more: false };
  const rows = (await exec.all(kind === 'added' ? UNSENT_ADDED : UNSENT_CHANGED, [currentId, afterBookId, previousId ?? '', limit + 1])) as unknown as { book_id: number }[];
  return pageOf(rows.map((r) => r.book_id), limit);
}

export interface Removed {
  bookId: number;
  coverHash: string | null;
}

const REMOVED = `SELECT p.book_id, p.cover_hash FROM kobo_library_snapshot_book p
  WHERE p.snapshot_id = ? AND p.book_id > ?
    AND NOT EXISTS (SELECT 1 FROM kobo_library_snapshot_book c WHERE c.snapshot_id = ? AND c.book_id = p.book_id)
  ORDER BY p.book_id LIMIT ?`;

/** The previous snapshot's books the current one lacks, after `afterBookId` in book id order. */
export async function removedAfter(exec: SqlExec, currentId: string, previousId: string | undefined, afterBookId: number, limit: number): Promise<{ removed: Removed[]; more: boolean }> {
  if (previousId === undefined || currentId === previousId) return { removed: [], more: false };
  const rows = (await exec.all(REMOVED, [previousId, afterBookId, currentId, limit + 1])) as unknown as { book_id: number; cover_hash: string | null }[];
  return { removed: rows.slice(0, limit).map((r) => ({ bookId: r.book_id, coverHash: r.cover_hash })), more: rows.length > limit };
}

/** The session is over: the current snapshot becomes the device's reference. Snapshots nobody came back to go. */
export async function finishSession(trx: Trx, userId: number, currentId: string): Promise<void> {
  // Left by versions that tracked reported removals in a table (the position in the token does it now).
  await trx.deleteFrom('kobo_removed_books_tracking').where('snapshot_id', '=', currentId).where('user_id', '=', userId).execute();
  const cutoff = new Date(Date.now() - FORGET_AFTER_DAYS * 24 * 3600 * 1000).toISOString();
  await trx.deleteFrom('kobo_library_snapshot').where('user_id', '=', userId).where('id', '!=', currentId).where('created_date', '<', cutoff).execute();
}
