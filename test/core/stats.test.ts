// The small pure parts of the reading statistics: the local calendar and its zone offsets, the streamed tallies, and
// the shaping of streaks, grip scores, distributions and listening progress. Zone: Europe/Berlin (clock changes on
// 2025-03-30T01:00Z and 2025-10-26T01:00Z).
import { afterAll, describe, expect, it } from 'vitest';
import { finishFunnel, listeningCompletion, longestAudiobooks, type AudiobookProgress } from '../../src/core/stats/audiobook-progress.ts';
import { bucketOf, progressBuckets } from '../../src/core/stats/book-distributions.ts';
import { dateOfDay, dayNumber, isoWeekOfDay, localDateTimeOf, localPeriod, localWeekPeriod, weekdayOfDay } from '../../src/core/stats/calendar.ts';
import { completionMonths } from '../../src/core/stats/completion-timeline.ts';
import { latestMonths } from '../../src/core/stats/listening-pace.ts';
import { weeksOf } from '../../src/core/stats/listening-trend.ts';
import { gripOf, slope } from '../../src/core/stats/page-turner.ts';
import { streakOf } from '../../src/core/stats/reading-streak.ts';
import { tallyRecords } from '../../src/core/stats/session-tally.ts';
import { weekdaysOf } from '../../src/core/stats/weekday-activity.ts';
import { offsetSpans } from '../../src/core/stats/zone-offsets.ts';

const previousZone = process.env.TZ;
process.env.TZ = 'Europe/Berlin';
afterAll(() => {
  if (previousZone === undefined) delete process.env.TZ;
  else process.env.TZ = previousZone;
});

describe('the local calendar', () => {
  it('bounds local years and months as instants', () => {
    expect(localPeriod(2025)).toEqual({ start: '2024-12-31T23:00:00.000Z', end: '2025-12-31T23:00:00.000Z' });
    expect(localPeriod(2025, 4)).toEqual({ start: '2025-03-31T22:00:00.000Z', end: '2025-04-30T22:00:00.000Z' });
    expect(localPeriod(2025, 12)).toEqual({ start: '2025-11-30T23:00:00.000Z', end: '2025-12-31T23:00:00.000Z' });
  });

  it('finds the week Grimmory means, week 0 included', () => {
    // 2026 begins on a Thursday: week 1 holds it. 2027 begins on a Friday: January 1st–3rd are week 0.
    expect(localWeekPeriod(2026, 1)).toEqual({ start: '2025-12-28T23:00:00.000Z', end: '2026-01-04T23:00:00.000Z' });
    expect(localWeekPeriod(2027, 0)).toEqual({ start: '2026-12-27T23:00:00.000Z', end: '2027-01-03T23:00:00.000Z' });
    expect(localWeekPeriod(2027, 1)).toEqual({ start: '2027-01-03T23:00:00.000Z', end: '2027-01-10T23:00:00.000Z' });
    // Across the spring change the week is an hour short.
    expect(localWeekPeriod(2025, 13)).toEqual({ start: '2025-03-23T23:00:00.000Z', end: '2025-03-30T22:00:00.000Z' });
  });

  it('counts days, weekdays and ISO weeks', () => {
    expect(dayNumber(1970, 1, 1)).toBe(0);
    expect(dateOfDay(dayNumber(2024, 2, 29))).toBe('2024-02-29');
    expect(dateOfDay(dayNumber(1, 1, 1))).toBe('0001-01-01');
    expect(weekdayOfDay(dayNumber(2025, 6, 15))).toBe(0);
    expect(weekdayOfDay(dayNumber(1969, 12, 31))).toBe(3);
    expect(isoWeekOfDay(dayNumber(2026, 12, 31))).toEqual({ year: 2026, week: 53 });
    expect(isoWeekOfDay(dayNumber(2027, 1, 1))).toEqual({ year: 2026, week: 53 });
  });

  it('writes local date-times as Jackson writes a LocalDateTime', () => {
    expect(localDateTimeOf(Date.parse('2025-06-10T18:00:00Z'))).toBe('2025-06-10T20:00:00');
    expect(localDateTimeOf(Date.parse('2025-01-10T18:00:00.250Z'))).toBe('2025-01-10T19:00:00.250');
  });
});

describe('zone offsets', () => {
  it('finds each clock change to the millisecond', () => {
    expect(offsetSpans(Date.parse('2025-01-01T00:00:00Z'), Date.parse('2025-12-31T00:00:00Z'))).toEqual([
      { until: '2025-03-30T01:00:00.000Z', seconds: 3600 },
      { until: '2025-10-26T01:00:00.000Z', seconds: 7200 },
      { until: null, seconds: 3600 },
    ]);
  });

  it('needs one span for a range without a change, and handles an empty range', () => {
    expect(offsetSpans(Date.parse('2025-06-01T00:00:00Z'), Date.parse('2025-07-01T00:00:00Z'))).toEqual([{ until: null, seconds: 7200 }]);
    expect(offsetSpans(Date.parse('2025-07-01T00:00:00Z'), Date.parse('2025-06-01T00:00:00Z'))).toEqual([{ until: null, seconds: 7200 }]);
  });
});

describe('streamed tallies', () => {
  it('sums sessions and seconds per key, negative keys included', () => {
    const tally = tallyRecords('20250 600,20250 1200,-3 10,7 0,20250 1');
    expect([...tally]).toEqual([
      [20250, { sessions: 3, seconds: 1801 }],
      [-3, { sessions: 1, seconds: 10 }],
      [7, { sessions: 1, seconds: 0 }],
    ]);
    expect(tallyRecords('').size).toBe(0);
  });
});

describe('streaks', () => {
  it('counts from yesterday when nothing was read today, and finds the longest run', () => {
    const today = 20_000;
    const s = streakOf([today - 10, today - 9, today - 8, today - 7, today - 2, today - 1], today);
    expect(s).toMatchObject({ currentStreak: 2, longestStreak: 4, totalReadingDays: 6 });
    expect(s.last52Weeks).toHaveLength(365);
    expect(s.last52Weeks[0]?.date).toBe(dateOfDay(today - 364));
    expect(s.last52Weeks.at(-2)).toEqual({ date: dateOfDay(today - 1), active: true });
    expect(streakOf([today - 5], today)).toMatchObject({ currentStreak: 0, longestStreak: 1 });
    expect(streakOf([], today)).toMatchObject({ currentStreak: 0, longestStreak: 0, totalReadingDays: 0 });
  });
});

describe('grip scores', () => {
  const at = (hours: number): number => Date.UTC(2025, 0, 1) + hours * 3_600_000;

  it('fits slopes by least squares', () => {
    expect(slope([1])).toBe(0);
    expect(slope([1, 3, 5])).toBe(2);
    expect(slope([600, 1200, 1800, 3600, 2400, 900])).toBeCloseTo(20_700 / 105, 12);
  });

  it('rewards longer sessions, shrinking gaps and a finishing burst', () => {
    // Durations 10, 20, 30, 40 minutes; gaps 47, 23, 11 whole hours (each end → next start, truncated).
    const sessions = [
      { start: at(0), end: at(0) + 600_000, durationSeconds: 600 },
      { start: at(47.5), end: at(47.5) + 1_200_000, durationSeconds: 1200 },
      { start: at(71), end: at(71) + 1_800_000, durationSeconds: 1800 },
      { start: at(83), end: at(83) + 2_400_000, durationSeconds: 2400 },
    ];
    // Duration slope 600 → 1; gap slope −18 → 0.68; last quarter (2400) above the rest (1200): burst.
    expect(gripOf(sessions)).toEqual({ gripScore: Math.round(35 + 0.68 * 35 + 30), totalSessions: 4, avgSessionDurationSeconds: 1500, sessionAcceleration: 600, gapReduction: -18, finishBurst: true });
  });

  it('truncates negative gaps toward zero, as whole hours between instants do', () => {
    const overlapping = [
      { start: at(0), end: at(3), durationSeconds: 100 },
      { start: at(1.5), end: at(2), durationSeconds: 100 },
      { start: at(1.9), end: at(2), durationSeconds: 100 },
    ];
    // Gaps −1.5 h → −1, −0.1 h → 0: slope 1.
    expect(gripOf(overlapping).gapReduction).toBe(1);
  });
});

describe('shaping', () => {
  it('folds days into weekdays, Sunday first', () => {
    const sunday = dayNumber(2025, 6, 15);
    expect(weekdaysOf([{ day: sunday, sessions: 2, durationSeconds: 60 }, { day: sunday + 6, sessions: 1, durationSeconds: 5 }, { day: sunday + 7, sessions: 1, durationSeconds: 1 }])).toEqual([
      { dayOfWeek: 1, dayName: 'Sunday', sessionCount: 3, totalDurationSeconds: 61 },
      { dayOfWeek: 7, dayName: 'Saturday', sessionCount: 1, totalDurationSeconds: 5 },
    ]);
  });

  it('folds days into ISO weeks across a year end', () => {
    expect(weeksOf([{ day: dayNumber(2026, 12, 31), sessions: 1, durationSeconds: 10 }, { day: dayNumber(2027, 1, 3), sessions: 2, durationSeconds: 20 }, { day: dayNumber(2027, 1, 4), sessions: 1, durationSeconds: 5 }])).toEqual([
      { year: 2026, week: 53, totalDurationSeconds: 30, sessions: 3 },
      { year: 2027, week: 1, totalDurationSeconds: 5, sessions: 1 },
    ]);
  });

  it('buckets progress percents and keeps all six buckets', () => {
    expect([0, 1, 25, 26, 50, 51, 75, 76, 99, 100, 140].map(bucketOf)).toEqual([0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
    expect(progressBuckets([]).map((b) => b.count)).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('orders completion months newest first and statuses in ReadStatus order', () => {
    const months = completionMonths([
      { month: '2025-01', status: 'READ', books: 1 },
      { month: '2025-03', status: 'ABANDONED', books: 1 },
      { month: '2025-03', status: 'READ', books: 2 },
    ]);
    expect(months.map((m) => [m.year, m.month, m.completionRate])).toEqual([[2025, 3, 66.67], [2025, 1, 100]]);
    expect(Object.keys(months[0]?.statusBreakdown ?? {})).toEqual(['READ', 'ABANDONED']);
  });

  it('counts finishes per local month, newest first, limited', () => {
    // 2024-12-31T23:30Z is January 2025 in Berlin.
    const finishes = ['2024-12-31T23:30:00Z', '2025-01-15T10:00:00Z', '2024-12-01T10:00:00Z', '2023-05-05T10:00:00Z'].map(Date.parse);
    expect(latestMonths(finishes, 2)).toEqual([{ year: 2025, month: 1, books: 2 }, { year: 2024, month: 12, books: 1 }]);
    expect(latestMonths(finishes, 0)).toEqual([]);
  });

  it('reads audiobook progress as percents', () => {
    const book = (bookId: number, maxProgress: number, totalDurationSeconds: number, listenedDurationSeconds: number): AudiobookProgress => ({ bookId, title: `B${bookId}`, maxProgress, totalDurationSeconds, listenedDurationSeconds });
    const books = [book(1, 0, 100, 5), book(2, 24.96, 300, 50), book(3, 50, 200, 70), book(4, 97.99, 50, 10), book(5, 98, 400, 1)];
    expect(finishFunnel(books)).toEqual({ totalStarted: 4, reached25: 3, reached50: 3, reached75: 2, completed: 1 });
    expect(listeningCompletion(books)).toMatchObject({ totalAudiobooks: 5, completed: 1, inProgressCount: 3 });
    expect(listeningCompletion(books).inProgress.map((b) => [b.bookId, b.progressPercent])).toEqual([[3, 50], [2, 25], [4, 98]]);
    expect(longestAudiobooks(books).map((b) => b.bookId)).toEqual([5, 2, 3, 1, 4]);
  });
});
