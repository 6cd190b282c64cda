// Sessions per local day: the reading heatmaps (a year, a month) and every reading day there has been.
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { dateOfDay, type Period } from './calendar.ts';
import { callerSessions, sessionOffsets, type SessionKind } from './session-scope.ts';
import { tallySessions } from './session-tally.ts';
import { localDaySql } from './zone-offsets.ts';
import { dialectOf } from '../store/dialect.ts';

export interface DayActivity {
  /** Local day number (calendar.ts). */
  day: number;
  sessions: number;
  durationSeconds: number;
}

/** Per local day of start, in day order: how many sessions of the kind began and how long they lasted. */
export async function sessionsPerDay(db: Db, principal: Principal, kind: SessionKind, period?: Partial<Period>): Promise<DayActivity[]> {
  const spans = await sessionOffsets(db, principal.userId, period);
  const sessions = await callerSessions(db, principal, { kind, period });
  const days = await tallySessions(dialectOf(db), sessions, localDaySql(dialectOf(db), sql.ref('reading_sessions.start_time'), spans));
  return [...days].sort(([a], [b]) => a - b).map(([day, t]) => ({ day, sessions: t.sessions, durationSeconds: t.seconds }));
}

/** ReadingSessionHeatmapResponse */
export interface HeatmapDay {
  date: string;
  count: number;
}

export const heatmapDays = (days: readonly DayActivity[]): HeatmapDay[] => days.map((d) => ({ date: dateOfDay(d.day), count: d.sessions }));

/** Reading sessions per local day of the period (a year or a month), or of all time. */
export async function readingHeatmap(db: Db, principal: Principal, period?: Period): Promise<HeatmapDay[]> {
  return heatmapDays(await sessionsPerDay(db, principal, 'reading', period));
}
