// The durable queue of progress changes waiting to go to Hardcover (table hardcover_push). Any process that receives a
// change writes it; only the process holding the hardcover-push lease reads and removes rows. One row per (user, book):
// a newer change replaces the percent of one not yet sent and raises its revision, so a push that was running while the
// change came in does not remove it (the newer percent goes out next). "Newer" is by the time the change was received:
// two processes (a phone on one replica, the web reader on another) may write their changes in either order.
import { kyselyExec, type SqlExec } from '../store/sql-exec.ts';
import type { Db } from '../store/store.ts';

export interface QueuedPush {
  userId: number;
  bookId: number;
  /** 0..100. */
  percent: number;
  /** When the change was received (ISO 8601). */
  changedAt: string;
  revision: number;
  /** Failed tries of this change so far. */
  attempts: number;
  dueAtMs: number;
}

export interface PushChange {
  userId: number;
  bookId: number;
  percent: number;
}

const COLUMNS = 'user_id, book_id, percent, changed_at, revision, attempts, due_at_ms';

function pushOf(row: Record<string, unknown>): QueuedPush {
  return {
    userId: Number(row.user_id),
    bookId: Number(row.book_id),
    percent: Number(row.percent),
    changedAt: String(row.changed_at),
    revision: Number(row.revision),
    attempts: Number(row.attempts),
    dueAtMs: Number(row.due_at_ms),
  };
}

const execOf = (db: Db): SqlExec => kyselyExec(db);

/**
 * Records a change received at `receivedAt`, due at once. It replaces a change to the same book not yet sent (and its
 * failed tries) unless that one was received later.
 */
export async function queuePush(db: Db, change: PushChange, receivedAt: Date = new Date()): Promise<void> {
  await execOf(db).run(
    `insert into hardcover_push (${COLUMNS}, last_error) values (?, ?, ?, ?, 1, 0, ?, null)
     on conflict (user_id, book_id) do update set percent = excluded.percent, changed_at = excluded.changed_at,
       revision = hardcover_push.revision + 1, attempts = 0, due_at_ms = excluded.due_at_ms, last_error = null
     where hardcover_push.changed_at <= excluded.changed_at`,
    [change.userId, change.bookId, change.percent, receivedAt.toISOString(), receivedAt.getTime()],
  );
}

/** Users with a change due by `nowMs`, the longest waiting first. */
export async function usersWithDuePushes(db: Db, nowMs: number, limit: number): Promise<number[]> {
  const rows = await execOf(db).all('select user_id, min(due_at_ms) as due from hardcover_push where due_at_ms <= ? group by user_id order by due, user_id limit ?', [nowMs, limit]);
  return rows.map((row) => Number(row.user_id));
}

/** The user's change that has waited longest among those due by `nowMs` (read afresh: the newest percent). */
export async function nextDuePush(db: Db, userId: number, nowMs: number): Promise<QueuedPush | undefined> {
  const row = await execOf(db).get(`select ${COLUMNS} from hardcover_push where user_id = ? and due_at_ms <= ? order by due_at_ms, book_id limit 1`, [userId, nowMs]);
  return row ? pushOf(row) : undefined;
}

/** When the next change that is not yet due falls due (epoch ms), if any is waiting. */
export async function nextDueAt(db: Db, nowMs: number): Promise<number | undefined> {
  const row = await execOf(db).get('select min(due_at_ms) as due from hardcover_push where due_at_ms > ?', [nowMs]);
  return row?.due === null || row?.due === undefined ? undefined : Number(row.due);
}

/** Removes the change once sent (or given up), unless a newer change to the book came in meanwhile. */
export async function removePush(db: Db, push: QueuedPush): Promise<void> {
  await execOf(db).run('delete from hardcover_push where user_id = ? and book_id = ? and revision = ?', [push.userId, push.bookId, push.revision]);
}

/** Counts a failed try and sets the next one, unless a newer change came in meanwhile (it is tried afresh). */
export async function postponePush(db: Db, push: QueuedPush, dueAtMs: number, error: string): Promise<void> {
  await execOf(db).run('update hardcover_push set attempts = ?, due_at_ms = ?, last_error = ? where user_id = ? and book_id = ? and revision = ?', [
    push.attempts + 1,
    dueAtMs,
    error.slice(0, 1000),
    push.userId,
    push.bookId,
    push.revision,
  ]);
}
