// Favorite days: sessions and time per local weekday on which they began.
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { DAY_NAMES, sundayFirst, weekdayOfDay, type Period } from './calendar.ts';
import { sessionsPerDay, type DayActivity } from './day-counts.ts';
import type { SessionKind } from './session-scope.ts';

/** FavoriteReadingDaysResponse: dayOfWeek counts from Sunday = 1, dayName is English. */
export interface WeekdayActivity {
  dayOfWeek: number;
  dayName: string;
  sessionCount: number;
  totalDurationSeconds: number;
}

/** Days folded into weekdays; weekdays without sessions are absent; Sunday first. */
export function weekdaysOf(days: readonly DayActivity[]): WeekdayActivity[] {
  const totals = DAY_NAMES.map((dayName, weekday) => ({ dayOfWeek: sundayFirst(weekday), dayName, sessionCount: 0, totalDurationSeconds: 0 }));
  for (const d of days) {
    const entry = totals[weekdayOfDay(d.day)] as WeekdayActivity;
    entry.sessionCount += d.sessions;
    entry.totalDurationSeconds += d.durationSeconds;
  }
  return totals.filter((t) => t.sessionCount > 0);
}

/** Sessions of the kind in the period (all time without one), per local weekday of their start. */
export async function favoriteDays(db: Db, principal: Principal, kind: SessionKind, period?: Period): Promise<WeekdayActivity[]> {
  return weekdaysOf(await sessionsPerDay(db, principal, kind, period));
}
