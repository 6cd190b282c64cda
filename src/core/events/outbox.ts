// The events outbox in the catalog: one row per event, appended by whichever process made the change (the daemon, a
// `bindery scan` from cron) and read by every server process after the last id it has seen. On SQLite the ids are
// handed out inside the write lock, so they become visible in order and "everything after id N" never skips a row.
// (A PostgreSQL engine would read the same table, woken by LISTEN/NOTIFY, and order by commit rather than by id.)
// Retention: rows older than EVENT_RETENTION_MS, and all but the newest EVENT_RETENTION_ROWS, are deleted by whoever
// appends or reads; a reader that falls further behind skips ahead (its clients re-fetch, see docs/live-updates.md).
import type { Transaction } from 'kysely';
import { isSqlExec, kyselyExec, type SqlExec, type SqlValue } from '../store/sql-exec.ts';
import type { DB } from '../store/db-types.ts';
import type { Db } from '../store/store.ts';
import type { LiveEvent } from './live-events.ts';

export const EVENT_RETENTION_MS = 10 * 60 * 1000;
export const EVENT_RETENTION_ROWS = 20_000;
const PRUNE_EVERY = 500;

export interface StoredEvent {
  id: number;
  createdAtMs: number;
  event: LiveEvent;
}

/** Where an event is written: the change's own transaction (Kysely or raw statements), or the catalog itself. */
export type EventTarget = Db | Transaction<DB> | SqlExec;

async function run(target: EventTarget, sql: string, params: SqlValue[]): Promise<void> {
  const exec = isSqlExec(target as Transaction<DB> | SqlExec) ? (target as SqlExec) : kyselyExec(target as Db);
  await exec.run(sql, params);
}

const listeners = new Set<() => void>();
let appended = 0;

/** Called (synchronously, after the insert) whenever this process appends an event: a server polls at once. */
export function onEventAppended(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export async function appendEvent(target: EventTarget, event: LiveEvent, now = Date.now()): Promise<void> {
  const { kind, ...payload } = event;
  await run(target, 'insert into event_outbox (kind, payload, created_at_ms) values (?, ?, ?)', [kind, JSON.stringify(payload), now]);
  // The first event of a process prunes too: a catalog only ever written by short CLI runs stays bounded.
  if (appended++ % PRUNE_EVERY === 0) await pruneEvents(target, now);
  for (const listener of listeners) listener();
}

export async function pruneEvents(target: EventTarget, now = Date.now()): Promise<void> {
  await run(target, 'delete from event_outbox where created_at_ms < ? or id <= (select max(id) from event_outbox) - ?', [now - EVENT_RETENTION_MS, EVENT_RETENTION_ROWS]);
}

interface OutboxRow {
  id: number;
  kind: string;
  payload: string;
  created_at_ms: number;
}

/** Events after `afterId`, oldest first, at most `limit`. Rows that do not parse are skipped. */
export function eventsAfter(rows: OutboxRow[]): StoredEvent[] {
  const out: StoredEvent[] = [];
  for (const row of rows) {
    try {
      out.push({ id: row.id, createdAtMs: row.created_at_ms, event: { kind: row.kind, ...(JSON.parse(row.payload) as object) } as LiveEvent });
    } catch {
      // A row written by a newer or broken writer: skipped, like any other missed hint.
    }
  }
  return out;
}

export const SELECT_EVENTS_AFTER = 'select id, kind, payload, created_at_ms from event_outbox where id > ? order by id limit ?';
export const SELECT_LAST_EVENT_ID = 'select coalesce(max(id), 0) from event_outbox';
export type { OutboxRow };
