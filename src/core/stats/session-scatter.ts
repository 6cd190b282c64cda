// Session scatter: the latest sessions as points (local time of day of the start, length, weekday).
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { sundayFirst, type Period } from './calendar.ts';
import { callerSessions, type SessionKind } from './session-scope.ts';

/** SessionScatterResponse */
export interface ScatterPoint {
  hourOfDay: number;
  durationMinutes: number;
  dayOfWeek: number;
}

/** Grimmory plots at most this many, newest first. */
const POINT_LIMIT = 500;

export function scatterPoint(startTime: string, durationSeconds: number): ScatterPoint {
  const start = new Date(startTime);
  return { hourOfDay: start.getHours() + start.getMinutes() / 60, durationMinutes: durationSeconds / 60, dayOfWeek: sundayFirst(start.getDay()) };
}

export async function sessionScatter(db: Db, principal: Principal, kind: SessionKind, period?: Period): Promise<ScatterPoint[]> {
  const sessions = await callerSessions(db, principal, { kind, period });
  const rows = await sessions
    .select(['reading_sessions.start_time', 'reading_sessions.duration_seconds'])
    .orderBy('reading_sessions.start_time', 'desc')
    .orderBy('reading_sessions.id', 'desc')
    .limit(POINT_LIMIT)
    .execute();
  return rows.map((r) => scatterPoint(r.start_time, r.duration_seconds));
}
