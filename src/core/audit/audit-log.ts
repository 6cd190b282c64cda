// Recording audit events and reading them back a page at a time. Recording never fails the action it records: any
// error is handed to `onError` and swallowed. Rows older than the retention period are deleted as new ones are written.
import type { Db } from '../store/store.ts';
import type { AuditAction } from './audit-actions.ts';

/** Who acted when nobody signed in did (failed sign-ins, background work), as Grimmory names it. */
export const SYSTEM_USERNAME = 'system';
export const DEFAULT_AUDIT_RETENTION_DAYS = 90;

// Column sizes of Grimmory's table: a longer description is cut with an ellipsis, as Grimmory does.
const MAX_DESCRIPTION = 1024;
const MAX_USERNAME = 255;
const MAX_IP = 45;
const MAX_ENTITY_TYPE = 100;
/** Retention runs at most this often per catalog, so a busy day costs one DELETE an hour, not one per event. */
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface AuditEntry {
  /** The acting user; null when nobody is signed in. */
  userId: number | null;
  username: string;
  action: AuditAction;
  entityType?: string | null;
  entityId?: number | null;
  description: string;
  ip?: string | null;
}

export interface RecordAuditOptions {
  /** Days of history kept; 0 keeps everything. */
  retentionDays?: number;
  now?: Date;
  /** Told about a row that could not be written (the action itself goes on). */
  onError?: (error: unknown) => void;
}

const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 3)}...` : text);

const lastPrune = new WeakMap<Db, number>();

/** Deletes the rows older than `retentionDays` days before `now`; returns how many went. 0 days keeps everything. */
export async function pruneAuditLog(db: Db, retentionDays: number, now: Date = new Date()): Promise<number> {
  if (!(retentionDays > 0)) return 0;
  const cutoff = new Date(now.getTime() - retentionDays * DAY_MS).toISOString();
  const result = await db.deleteFrom('audit_log').where('created_at', '<', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Writes one audit row (and, at most hourly, prunes old ones). Resolves false instead of throwing when it fails. */
export async function recordAudit(db: Db, entry: AuditEntry, options: RecordAuditOptions = {}): Promise<boolean> {
  const now = options.now ?? new Date();
  try {
    await db
      .insertInto('audit_log')
      .values({
        user_id: entry.userId,
        username: cut(entry.username || SYSTEM_USERNAME, MAX_USERNAME),
        action: entry.action,
        entity_type: entry.entityType ? cut(entry.entityType, MAX_ENTITY_TYPE) : null,
        entity_id: entry.entityId ?? null,
        description: cut(entry.description, MAX_DESCRIPTION),
        ip_address: entry.ip ? entry.ip.slice(0, MAX_IP) : null,
        created_at: now.toISOString(),
      })
      .execute();
    const retention = options.retentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS;
    const last = lastPrune.get(db);
    if (retention > 0 && (last === undefined || now.getTime() - last >= PRUNE_INTERVAL_MS)) {
      lastPrune.set(db, now.getTime());
      await pruneAuditLog(db, retention, now);
    }
    return true;
  } catch (error) {
    options.onError?.(error);
    return false;
  }
}

export interface AuditRecord {
  id: number;
  userId: number | null;
  username: string;
  action: string;
  entityType: string | null;
  entityId: number | null;
  description: string;
  ipAddress: string | null;
  countryCode: string | null;
  /** ISO-8601 instant. */
  createdAt: string;
}

export interface AuditQuery {
  page: number;
  size: number;
  action?: AuditAction;
  userId?: number;
  username?: string;
  /** Instants, inclusive. */
  from?: Date;
  to?: Date;
}

/** One page of the log, newest first, with the number of rows matching the filters. */
export async function listAuditLogs(db: Db, query: AuditQuery): Promise<{ rows: AuditRecord[]; total: number }> {
  let base = db.selectFrom('audit_log');
  if (query.action !== undefined) base = base.where('action', '=', query.action);
  if (query.userId !== undefined) base = base.where('user_id', '=', query.userId);
  if (query.username !== undefined) base = base.where('username', '=', query.username);
  if (query.from !== undefined) base = base.where('created_at', '>=', query.from.toISOString());
  if (query.to !== undefined) base = base.where('created_at', '<=', query.to.toISOString());
  const counted = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const rows = await base
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(query.size)
    .offset(query.page * query.size)
    .execute();
  return {
    total: Number(counted.n),
    rows: rows.map((r) => ({
      id: r.id,
      userId: r.user_id,
      username: r.username,
      action: r.action,
      entityType: r.entity_type,
      entityId: r.entity_id,
      description: r.description,
      ipAddress: r.ip_address,
      countryCode: r.country_code,
      createdAt: r.created_at,
    })),
  };
}

/** Every name that appears in the log, sorted: the choices of the username filter. */
export async function auditUsernames(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('audit_log').select('username').distinct().orderBy('username').execute();
  return rows.map((r) => r.username);
}

/**
 * A Java `LocalDateTime` as the web UI sends it (`2024-05-01T00:00:00`, seconds and fraction optional) read as the
 * server's local time; an explicit `Z` or offset is honoured. Undefined when the text is not such a date-time.
 */
export function parseLocalDateTime(text: string): Date | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s = '0', fraction = '0', zone] = m;
  const ms = Number(fraction.padEnd(3, '0').slice(0, 3));
  const parts = [Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms] as const;
  // Out-of-range fields (month 13, 30 February, 25:00) roll over in Date; refuse them instead. Checked in UTC, where no
  // daylight-saving gap can move an hour.
  const utc = new Date(Date.UTC(...parts));
  const fields = [utc.getUTCFullYear(), utc.getUTCMonth(), utc.getUTCDate(), utc.getUTCHours(), utc.getUTCMinutes(), utc.getUTCSeconds()];
  if (fields.some((v, i) => v !== parts[i])) return undefined;
  if (!zone) return new Date(...parts);
  if (zone === 'Z') return utc;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const offsetMinutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2));
  return new Date(utc.getTime() - sign * offsetMinutes * 60_000);
}
