// The completion race: how the books finished in a year progressed, session by session.
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { localPeriod } from './calendar.ts';
import { callerSessions } from './session-scope.ts';

/** CompletionRaceResponse */
export interface RaceSession {
  bookId: number;
  bookTitle: string;
  sessionDate: string;
  endProgress: number;
}

/** Grimmory keeps the last ten books of its book-id order. */
const BOOK_LIMIT = 10;

/**
 * Sessions with an end progress of the books the caller has READ and settled (finished, else status change, else last
 * read) in the local year; of those books the ten with the highest ids; by book, then start.
 */
export async function completionRace(db: Db, principal: Principal, year: number): Promise<RaceSession[]> {
  const period = localPeriod(year);
  const settled = sql<string | null>`coalesce(p.date_finished, p.read_status_modified_time, p.last_read_time)`;
  const sessions = await callerSessions(db, principal, { kind: 'any' });
  const raced = sessions
    .innerJoin('user_book_progress as p', (join) => join.onRef('p.book_id', '=', 'reading_sessions.book_id').onRef('p.user_id', '=', 'reading_sessions.user_id'))
    .where('p.read_status', '=', 'READ')
    .where(settled, '>=', period.start)
    .where(settled, '<', period.end)
    .where('reading_sessions.end_progress', 'is not', null);
  const books = raced.select('reading_sessions.book_id').distinct().orderBy('reading_sessions.book_id', 'desc').limit(BOOK_LIMIT);
  const rows = await raced
    .where('reading_sessions.book_id', 'in', books)
    .leftJoin('book_metadata as m', 'm.book_id', 'reading_sessions.book_id')
    .select(['reading_sessions.book_id', sql<string>`coalesce(m.title, 'Unknown Book')`.as('title'), 'reading_sessions.start_time', 'reading_sessions.end_progress'])
    .orderBy('reading_sessions.book_id')
    .orderBy('reading_sessions.start_time')
    .orderBy('reading_sessions.id')
    .execute();
  return rows.map((r) => ({ bookId: r.book_id, bookTitle: r.title, sessionDate: r.start_time, endProgress: r.end_progress as number }));
}
