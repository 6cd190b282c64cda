// Reading speed: progress gained per minute of reading, averaged per local day the sessions were recorded on.
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { dateOfDay, localPeriod } from './calendar.ts';
import { callerSessions } from './session-scope.ts';
import { localDaySql, offsetSpans } from './zone-offsets.ts';
import { dialectOf } from '../store/dialect.ts';

/** ReadingSpeedResponse */
export interface ReadingSpeedDay {
  date: string;
  avgProgressPerMinute: number;
  totalSessions: number;
}

/**
 * Sessions that lasted and moved forward (duration > 0, progress delta > 0), recorded in the local year: per day of
 * recording, the mean of progressDelta / minutes. Grimmory groups these by when the session was saved, not when it began.
 */
export async function readingSpeed(db: Db, principal: Principal, year: number): Promise<ReadingSpeedDay[]> {
  const period = localPeriod(year);
  const spans = offsetSpans(Date.parse(period.start), Date.parse(period.end));
  const sessions = await callerSessions(db, principal, { kind: 'any' });
  const rows = await sessions
    .where('reading_sessions.created_at', '>=', period.start)
    .where('reading_sessions.created_at', '<', period.end)
    .where('reading_sessions.duration_seconds', '>', 0)
    .where('reading_sessions.progress_delta', '>', 0)
    .select((eb) => [
      localDaySql(dialectOf(db), sql.ref('reading_sessions.created_at'), spans).as('day'),
      sql<number>`avg(reading_sessions.progress_delta / (reading_sessions.duration_seconds / 60.0))`.as('speed'),
      eb.fn.countAll<number>().as('sessions'),
    ])
    .groupBy(sql`day`)
    .orderBy(sql`day`)
    .execute();
  return rows.map((r) => ({ date: dateOfDay(Number(r.day)), avgProgressPerMinute: Number(r.speed), totalSessions: Number(r.sessions) }));
}
