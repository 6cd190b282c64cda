// The book timeline: each book read in a year, from its first session to its last.
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { localDateOf, localPeriod } from './calendar.ts';
import { callerSessions } from './session-scope.ts';

/** BookTimelineResponse */
export interface BookSpan {
  bookId: number;
  title: string;
  pageCount: number | null;
  firstSessionDate: string | null;
  lastSessionDate: string | null;
  totalSessions: number;
  totalDurationSeconds: number;
  /** The furthest session end, as a 0–1 fraction (sessions carry percents). */
  maxProgress: number;
  readStatus: string | null;
}

/** Books with sessions (of any kind) begun in the local year, ordered by their first one. */
export async function bookTimeline(db: Db, principal: Principal, year: number): Promise<BookSpan[]> {
  const sessions = await callerSessions(db, principal, { kind: 'any', period: localPeriod(year) });
  const rows = await sessions
    .leftJoin('book_metadata as m', 'm.book_id', 'reading_sessions.book_id')
    .leftJoin('user_book_progress as p', (join) => join.onRef('p.book_id', '=', 'reading_sessions.book_id').onRef('p.user_id', '=', 'reading_sessions.user_id'))
    .select((eb) => [
      'reading_sessions.book_id',
      // One metadata row and one progress row per book: max() only names the value for the grouping.
      sql<string>`coalesce(max(m.title), 'Unknown')`.as('title'),
      sql<number | null>`max(m.page_count)`.as('page_count'),
      eb.fn.min('reading_sessions.start_time').as('first'),
      eb.fn.max('reading_sessions.end_time').as('last'),
      eb.fn.countAll<number>().as('sessions'),
      sql<number>`coalesce(sum(reading_sessions.duration_seconds), 0)`.as('duration'),
      sql<number>`coalesce(max(reading_sessions.end_progress), 0.0) / 100.0`.as('progress'),
      sql<string | null>`max(p.read_status)`.as('read_status'),
    ])
    .groupBy('reading_sessions.book_id')
    .orderBy(sql`first`)
    .orderBy('reading_sessions.book_id')
    .execute();
  return rows.map((r) => ({
    bookId: r.book_id,
    title: r.title,
    pageCount: r.page_count,
    firstSessionDate: r.first === null ? null : localDateOf(Date.parse(r.first)),
    lastSessionDate: r.last === null ? null : localDateOf(Date.parse(r.last)),
    totalSessions: Number(r.sessions),
    totalDurationSeconds: Number(r.duration),
    maxProgress: Number(r.progress),
    readStatus: r.read_status,
  }));
}
