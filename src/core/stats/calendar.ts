// The server's local calendar, which every statistic follows (Grimmory groups by ZoneId.systemDefault()): the zone
import { localDateTime } from '../time.ts';
// of this process, as JavaScript's Date knows it (TZ). Days are counted as "day numbers" (days since 1970-01-01 on
// the local calendar), which SQL can compute and JavaScript can turn back into dates.

const DAY_MS = 86_400_000;

export const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** The day number of a calendar date (month 1–12). */
export function dayNumber(year: number, month: number, day: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  return Math.floor(d.getTime() / DAY_MS);
}

/** `yyyy-MM-dd` of a day number. */
export function dateOfDay(day: number): string {
  const d = new Date(day * DAY_MS);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

/** Day of week of a day number, Sunday = 0 … Saturday = 6 (1970-01-01 was a Thursday). */
export function weekdayOfDay(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

/** Grimmory's numbering of weekdays in statistics: Sunday = 1 … Saturday = 7. */
export const sundayFirst = (weekday: number): number => weekday + 1;

/** ISO-8601 week-based year and week of a day number. */
export function isoWeekOfDay(day: number): { year: number; week: number } {
  const isoWeekday = weekdayOfDay(day) || 7;
  const thursday = new Date((day + 4 - isoWeekday) * DAY_MS);
  const year = thursday.getUTCFullYear();
  const dayOfYear = Math.floor(thursday.getTime() / DAY_MS) - dayNumber(year, 1, 1);
  return { year, week: Math.floor(dayOfYear / 7) + 1 };
}

/** The instant (ms) the local day starts; on a day whose midnight a clock change skips, the first minute it has. */
export function localMidnight(year: number, month: number, day: number): number {
  const d = new Date(0);
  d.setFullYear(year, month - 1, day);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

/** The local calendar date of an instant, as a day number. */
export function localDayOf(ms: number): number {
  const d = new Date(ms);
  return dayNumber(d.getFullYear(), d.getMonth() + 1, d.getDate());
}

/** `yyyy-MM-dd` of an instant on the local calendar. */
export const localDateOf = (ms: number): string => dateOfDay(localDayOf(ms));

/** An instant as a zone-less local date-time the way Jackson writes a LocalDateTime (fraction only when non-zero). */
export function localDateTimeOf(ms: number): string {
  return localDateTime(new Date(ms), 'auto');
}

const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * Instants as the catalog stores them: ISO-8601 UTC with milliseconds, which compare as text. Kept within years
 * 0001–9999, whose text has four year digits (an expanded year would compare wrongly).
 */
export const isoOf = (ms: number): string => new Date(Math.min(Math.max(ms, FIRST_INSTANT), LAST_INSTANT)).toISOString();

/** A half-open range of instants, as stored text: start ≤ t < end. */
export interface Period {
  start: string;
  end: string;
}

/** The local calendar year, or one month of it (1–12). */
export function localPeriod(year: number, month?: number): Period {
  if (month === undefined) return { start: isoOf(localMidnight(year, 1, 1)), end: isoOf(localMidnight(year + 1, 1, 1)) };
  return { start: isoOf(localMidnight(year, month, 1)), end: isoOf(localMidnight(month === 12 ? year + 1 : year, month === 12 ? 1 : month + 1, 1)) };
}

/**
 * Grimmory's week `week` of `year` for the week timeline: January 1st moved by (week − its week-of-year) weeks, where
 * weeks start on Monday and the first week is the one with at least four days of January (January 1st of a Friday,
 * Saturday or Sunday is in week 0); the Monday-to-Monday local week around that day.
 */
export function localWeekPeriod(year: number, week: number): Period {
  const jan1 = dayNumber(year, 1, 1);
  const isoWeekday = weekdayOfDay(jan1) || 7;
  const weekOfJan1 = isoWeekday <= 4 ? 1 : 0;
  const monday = jan1 - (isoWeekday - 1) + (week - weekOfJan1) * 7;
  const at = (day: number): number => {
    const d = new Date(day * DAY_MS);
    return localMidnight(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate());
  };
  return { start: isoOf(at(monday)), end: isoOf(at(monday + 7)) };
}
