// Listening per local day of a month: sessions and whole minutes.
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { dateOfDay, localPeriod } from './calendar.ts';
import { sessionsPerDay } from './day-counts.ts';

/** ListeningHeatmapResponse */
export interface ListeningDay {
  date: string;
  sessions: number;
  durationMinutes: number;
}

export async function listeningHeatmap(db: Db, principal: Principal, year: number, month: number): Promise<ListeningDay[]> {
  const days = await sessionsPerDay(db, principal, 'listening', localPeriod(year, month));
  return days.map((d) => ({ date: dateOfDay(d.day), sessions: d.sessions, durationMinutes: Math.round(d.durationSeconds / 60) }));
}
