// Listening per ISO week over the last weeks.
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { isoOf, isoWeekOfDay } from './calendar.ts';
import { sessionsPerDay, type DayActivity } from './day-counts.ts';

/** WeeklyListeningTrendResponse */
export interface ListeningWeek {
  year: number;
  week: number;
  totalDurationSeconds: number;
  sessions: number;
}

/** Days folded into ISO weeks (week-based year), oldest first; weeks without listening are absent. */
export function weeksOf(days: readonly DayActivity[]): ListeningWeek[] {
  const weeks = new Map<string, ListeningWeek>();
  for (const d of days) {
    const { year, week } = isoWeekOfDay(d.day);
    const key = `${year}-${week}`;
    const entry = weeks.get(key) ?? { year, week, totalDurationSeconds: 0, sessions: 0 };
    entry.totalDurationSeconds += d.durationSeconds;
    entry.sessions += d.sessions;
    weeks.set(key, entry);
  }
  return [...weeks.values()];
}

/** Audiobook sessions begun in the last `weeks` × 7 days (counted back from now, to the millisecond). */
export async function listeningTrend(db: Db, principal: Principal, weeks: number, now: Date = new Date()): Promise<ListeningWeek[]> {
  const since = isoOf(now.getTime() - weeks * 7 * 86_400_000);
  return weeksOf(await sessionsPerDay(db, principal, 'listening', { start: since }));
}
