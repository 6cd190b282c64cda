// Reading the events outbox in order of commit, on either engine. Ids are handed out when a row is inserted, but on
// PostgreSQL transactions commit in any order: a row with a smaller id can become visible after a larger one was read.
// The cursor remembers the ids it skipped over ("holes") and looks for them again for a while; a hole that never fills
// was a rolled-back insert. On SQLite ids are handed out inside the write lock, so holes are only ever rollbacks.
import { SELECT_EVENTS_AFTER, SELECT_LAST_EVENT_ID, type OutboxRow } from './outbox.ts';
import type { SqlExec } from '../store/sql-exec.ts';

/** How long a skipped id is waited for: longer than any write transaction that appends an event should take. */
export const HOLE_WAIT_MS = 60_000;
/** Holes remembered at most (a mass rollback must not grow the list without bound); the oldest are given up. */
const MAX_HOLES = 2000;

export class OutboxCursor {
  private lastId = 0;
  /** Skipped id → when it was first skipped (ms). */
  private readonly holes = new Map<number, number>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /** Starts after the newest event: earlier ones concern nobody connected now. */
  async start(exec: SqlExec): Promise<void> {
    const row = await exec.get(SELECT_LAST_EVENT_ID);
    this.lastId = Number(row ? Object.values(row)[0] : 0) || 0;
    this.holes.clear();
  }

  /**
   * The events committed since the last call (at most `limit` new ones, plus any that filled a hole), oldest first.
   * `more` says whether the limit was reached.
   */
  async next(exec: SqlExec, limit: number): Promise<{ rows: OutboxRow[]; more: boolean }> {
    const filled = this.holes.size > 0 ? await this.fillHoles(exec) : [];
    const fresh = (await exec.all(SELECT_EVENTS_AFTER, [this.lastId, limit])) as unknown as OutboxRow[];
    const now = this.now();
    for (const row of fresh) {
      for (let id = this.lastId + 1; id < row.id && this.holes.size < MAX_HOLES + 1; id++) this.holes.set(id, now);
      this.lastId = row.id;
    }
    while (this.holes.size > MAX_HOLES) this.holes.delete(this.holes.keys().next().value as number);
    return { rows: filled.length > 0 ? [...filled, ...fresh] : fresh, more: fresh.length === limit };
  }

  private async fillHoles(exec: SqlExec): Promise<OutboxRow[]> {
    const cutoff = this.now() - HOLE_WAIT_MS;
    for (const [id, since] of this.holes) if (since < cutoff) this.holes.delete(id);
    if (this.holes.size === 0) return [];
    const ids = [...this.holes.keys()];
    const rows = (await exec.all(`select id, kind, payload, created_at_ms from event_outbox where id in (${ids.map(() => '?').join(', ')}) order by id`, ids)) as unknown as OutboxRow[];
    for (const row of rows) this.holes.delete(row.id);
    return rows;
  }
}
