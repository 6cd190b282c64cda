// Reading streaks: consecutive local days with at least one reading session.
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { dateOfDay, localDayOf } from './calendar.ts';
import { sessionsPerDay } from './day-counts.ts';

/** ReadingStreakResponse */
export interface ReadingStreak {
  currentStreak: number;
  longestStreak: number;
  totalReadingDays: number;
  last52Weeks: { date: string; active: boolean }[];
}

/**
 * From the reading days (ascending day numbers, each once) and today: the run of days ending today, or yesterday
 * when nothing has been read yet today; the longest run ever; and the 365 days ending today.
 */
export function streakOf(days: readonly number[], today: number): ReadingStreak {
  const read = new Set(days);
  let currentStreak = 0;
  for (let day = read.has(today) ? today : today - 1; read.has(day); day--) currentStreak++;
  let longestStreak = 0;
  let run = 0;
  let previous: number | undefined;
  for (const day of days) {
    run = previous !== undefined && day === previous + 1 ? run + 1 : 1;
    longestStreak = Math.max(longestStreak, run);
    previous = day;
  }
  const last52Weeks: ReadingStreak['last52Weeks'] = [];
  for (let day = today - 364; day <= today; day++) last52Weeks.push({ date: dateOfDay(day), active: read.has(day) });
  return { currentStreak, longestStreak, totalReadingDays: read.size, last52Weeks };
}

export async function readingStreak(db: Db, principal: Principal, now: Date = new Date()): Promise<ReadingStreak> {
  const days = await sessionsPerDay(db, principal, 'reading');
  return streakOf(
    days.map((d) => d.day),
    localDayOf(now.getTime()),
  );
}
