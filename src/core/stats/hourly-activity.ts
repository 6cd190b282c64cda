// Peak hours: sessions and time per local hour of the day at which they began.
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import type { Period } from './calendar.ts';
import { callerSessions, sessionOffsets, type SessionKind } from './session-scope.ts';
import { tallySessions } from './session-tally.ts';
import { localHourSql } from './zone-offsets.ts';
import { dialectOf } from '../store/dialect.ts';

/** PeakHoursResponse */
export interface HourActivity {
  hourOfDay: number;
  sessionCount: number;
  totalDurationSeconds: number;
}

/** Hours with at least one session of the kind in the period (all time without one), in hour order. */
export async function peakHours(db: Db, principal: Principal, kind: SessionKind, period?: Period): Promise<HourActivity[]> {
  const spans = await sessionOffsets(db, principal.userId, period);
  const sessions = await callerSessions(db, principal, { kind, period });
  const hours = await tallySessions(dialectOf(db), sessions, localHourSql(dialectOf(db), sql.ref('reading_sessions.start_time'), spans));
  return [...hours]
    .sort(([a], [b]) => a - b)
    .map(([hourOfDay, t]) => ({ hourOfDay, sessionCount: t.sessions, totalDurationSeconds: t.seconds }));
}
