// The week calendar: every session that began in a given week, one entry each, in start order.
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { localDateTimeOf, localWeekPeriod } from './calendar.ts';
import { callerSessions } from './session-scope.ts';

/** ReadingSessionTimelineResponse (one per session: totalSessions is always 1). */
export interface TimelineSession {
  bookId: number;
  bookTitle: string;
  bookType: string | null;
  startDate: string;
  endDate: string;
  totalSessions: number;
  totalDurationSeconds: number;
}

/** Sessions of every kind in week `week` of `year` (see localWeekPeriod), titled by metadata, else first file name. */
export async function weekTimeline(db: Db, principal: Principal, year: number, week: number): Promise<TimelineSession[]> {
  const sessions = await callerSessions(db, principal, { kind: 'any', period: localWeekPeriod(year, week) });
  const rows = await sessions
    .leftJoin('book_metadata', 'book_metadata.book_id', 'reading_sessions.book_id')
    .select([
      'reading_sessions.book_id',
      sql<string>`coalesce(book_metadata.title, (select f.file_name from book_file f where f.book_id = reading_sessions.book_id order by f.id limit 1), 'Unknown Book')`.as('title'),
      'reading_sessions.book_type',
      'reading_sessions.start_time',
      'reading_sessions.end_time',
      'reading_sessions.duration_seconds',
    ])
    .orderBy('reading_sessions.start_time')
    .orderBy('reading_sessions.id')
    .execute();
  return rows.map((r) => ({
    bookId: r.book_id,
    bookTitle: r.title,
    bookType: r.book_type,
    startDate: localDateTimeOf(Date.parse(r.start_time)),
    endDate: localDateTimeOf(Date.parse(r.end_time)),
    totalSessions: 1,
    totalDurationSeconds: r.duration_seconds,
  }));
}
