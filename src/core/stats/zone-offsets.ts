// Local calendar arithmetic inside SQL. The offsets of the server's zone come from JavaScript's Date, never from
// SQLite's 'localtime' (the C library's zone data may be missing, as in slim containers, or differ from the one
// JavaScript uses), so a day or hour computed in SQL is the one calendar.ts computes for the same instant.
import { sql, type Expression, type RawBuilder } from 'kysely';
import type { SqlDialect } from '../store/dialect.ts';
import { inForm } from '../store/dialect-forms.ts';
import { isoOf } from './calendar.ts';

/** Instants before `until` (stored ISO text; null: no end) are `seconds` east of UTC. */
export interface OffsetSpan {
  until: string | null;
  seconds: number;
}

const WEEK_MS = 7 * 86_400_000;
// Zone changes are looked for in this range only; earlier or later instants take the offset at its edge.
const SCAN_FROM = Date.UTC(1900, 0, 1);
const SCAN_TO = Date.UTC(2200, 0, 1);
// 2000 Gregorian years of days, a whole number of weeks: keeps SQL's integer division on positive numbers.
const SHIFT_DAYS = 146_097 * 5;

const offsetAt = (ms: number): number => Math.round(-new Date(ms).getTimezoneOffset() * 60);

/**
 * The zone's offsets over [fromMs, toMs]. Changes are found week by week and then to the millisecond, so two changes
 * less than a week apart would be seen as none (no zone has had such a pair in this range).
 */
export function offsetSpans(fromMs: number, toMs: number): OffsetSpan[] {
  const lo = Math.min(Math.max(fromMs, SCAN_FROM), SCAN_TO);
  const hi = Math.max(Math.min(toMs, SCAN_TO), lo);
  const spans: OffsetSpan[] = [];
  let current = offsetAt(lo);
  let t = lo;
  while (t < hi) {
    const next = Math.min(t + WEEK_MS, hi);
    if (offsetAt(next) === current) {
      t = next;
      continue;
    }
    let before = t;
    let after = next;
    while (after - before > 1) {
      const mid = Math.floor((before + after) / 2);
      if (offsetAt(mid) === current) before = mid;
      else after = mid;
    }
    spans.push({ until: isoOf(after), seconds: current });
    current = offsetAt(after);
    t = after;
  }
  spans.push({ until: null, seconds: current });
  return spans;
}

/** The offset of the instant in `column`, as a balanced CASE: a handful of comparisons however many spans. */
function offsetOf(column: Expression<string | null>, spans: readonly OffsetSpan[], from = 0, to = spans.length): RawBuilder<number> {
  if (to - from <= 1) return sql.lit((spans[from] as OffsetSpan).seconds);
  const mid = (from + to) >> 1;
  const boundary = (spans[mid - 1] as OffsetSpan).until as string;
  return sql<number>`(case when ${column} < ${boundary} then ${offsetOf(column, spans, from, mid)} else ${offsetOf(column, spans, mid, to)} end)`;
}

/** Seconds since 1970 of the instant in `column`. */
const epochSeconds = (dialect: SqlDialect, column: Expression<string | null>): RawBuilder<number> => inForm(dialect.epochSeconds, column);

/** Local seconds since 1970 plus the shift. */
const shiftedLocalSeconds = (dialect: SqlDialect, column: Expression<string | null>, spans: readonly OffsetSpan[]): RawBuilder<number> =>
  sql<number>`(${epochSeconds(dialect, column)} + ${offsetOf(column, spans)} + ${sql.lit(SHIFT_DAYS * 86_400)})`;

/** The local day number of the instant in `column` (see calendar.ts). */
export const localDaySql = (dialect: SqlDialect, column: Expression<string | null>, spans: readonly OffsetSpan[]): RawBuilder<number> =>
  sql<number>`(${shiftedLocalSeconds(dialect, column, spans)} / 86400 - ${sql.lit(SHIFT_DAYS)})`;

/** The local hour (0–23) of the instant in `column`. */
export const localHourSql = (dialect: SqlDialect, column: Expression<string | null>, spans: readonly OffsetSpan[]): RawBuilder<number> =>
  sql<number>`(${shiftedLocalSeconds(dialect, column, spans)} % 86400 / 3600)`;

/** The local `yyyy-MM` of the instant in `column`. */
export const localMonthSql = (dialect: SqlDialect, column: Expression<string | null>, spans: readonly OffsetSpan[]): RawBuilder<string> =>
  inForm(dialect.utcMonthOfSeconds, sql`${epochSeconds(dialect, column)} + ${offsetOf(column, spans)}`);

/** Milliseconds since 1970 of the instant in `column`. */
export const epochMsSql = (dialect: SqlDialect, column: Expression<string | null>): RawBuilder<number> => inForm(dialect.epochMs, column);
