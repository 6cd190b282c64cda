// Sessions and seconds per key (a local day, a local hour), summed in JavaScript from one string the database streams out.
// SQLite groups by sorting every row; for a long history (100,000 sessions) handing each row's key and length over
// as "key seconds,key seconds,…" and adding them up here costs a third of a GROUP BY's time.
import { sql, type RawBuilder } from 'kysely';
import type { SqlDialect } from '../store/dialect.ts';
import { inForm } from '../store/dialect-forms.ts';
import type { SessionQuery } from './session-scope.ts';

export interface Tally {
  sessions: number;
  seconds: number;
}

/** Reads one integer at `from`; returns it and where it ends. */
function readInteger(text: string, from: number): [value: number, end: number] {
  let i = from;
  const negative = text.charCodeAt(i) === 45; // '-'
  if (negative) i++;
  let value = 0;
  for (let c = text.charCodeAt(i); c >= 48 && c <= 57; c = text.charCodeAt(++i)) value = value * 10 + (c - 48);
  return [negative ? -value : value, i];
}

/** Totals per key from "key seconds" records separated by commas, keys in first-seen order. */
export function tallyRecords(records: string): Map<number, Tally> {
  const out = new Map<number, Tally>();
  let current: Tally | undefined;
  let currentKey = Number.NaN;
  for (let i = 0; i < records.length; ) {
    const [key, afterKey] = readInteger(records, i);
    const [seconds, afterValue] = readInteger(records, afterKey + 1);
    i = afterValue + 1;
    if (key !== currentKey || current === undefined) {
      current = out.get(key);
      if (current === undefined) out.set(key, (current = { sessions: 0, seconds: 0 }));
      currentKey = key;
    }
    current.sessions += 1;
    current.seconds += seconds;
  }
  return out;
}

/** The sessions of `query` tallied per value of `key` (an integer expression over the session row). */
export async function tallySessions(dialect: SqlDialect, query: SessionQuery, key: RawBuilder<number>): Promise<Map<number, Tally>> {
  const records = inForm<string | null>((e) => dialect.groupConcat(e, `','`), sql`${key} || ' ' || reading_sessions.duration_seconds`);
  const row = await query.select(records.as('records')).executeTakeFirst();
  return tallyRecords(row?.records ?? '');
}
