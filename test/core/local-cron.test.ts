// Cron schedules in the server's zone (src/core/tasks/local-cron.ts): the same run times cron computes when given the
// zone by its IANA name, across DST changes, in zones east and west of UTC and with half-hour offsets; no
// Intl.DateTimeFormat made on the way (what kept ~5 MB of ICU data resident in the idle daemon).
import { CronTime } from 'cron';
import type { DateTime } from 'luxon';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { cronExpressionError, localCronJob } from '../../src/core/tasks/local-cron.ts';

const originalTz = process.env.TZ;
afterAll(() => {
  if (originalTz === undefined) delete process.env.TZ;
  else process.env.TZ = originalTz;
});
afterEach(() => vi.restoreAllMocks());

/** The next `count` run times of a job after `from`, as cron's timer computes them. */
function runs(time: CronTime, from: Date, count: number): string[] {
  const out: string[] = [];
  let after: DateTime | Date = from;
  for (let i = 0; i < count; i++) {
    after = time.getNextDateFrom(after);
    out.push(after.toUTC().toISO() as string);
  }
  return out;
}

function localRuns(expression: string, from: Date, count: number): string[] {
  const job = localCronJob(expression, () => undefined);
  void job.stop();
  return runs(job.cronTime, from, count);
}

describe('local cron schedules', () => {
  it('computes run times without making an Intl.DateTimeFormat', () => {
    process.env.TZ = 'Europe/Berlin';
    const made = vi.spyOn(Intl, 'DateTimeFormat');
    expect(localRuns('0 0 3 * * *', new Date('2026-03-28T00:00:00Z'), 2)).toEqual(['2026-03-28T02:00:00.000Z', '2026-03-29T01:00:00.000Z']);
    expect(cronExpressionError('0 0 3 * * *')).toBeUndefined();
    expect(made).not.toHaveBeenCalled();
  });

  it.each(['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'UTC'])('runs at the local times of %s, DST changes included', (zone) => {
    process.env.TZ = zone;
    // A year of a daily run at 02:30 (missing or doubled on a DST change in some zones), of weekly and monthly
    // runs, and two months around each DST change of every 20 minutes in the early morning.
    const from = new Date('2026-01-15T10:20:30Z');
    for (const [expression, count] of [['0 30 2 * * *', 370], ['0 15 1 * * 0', 55], ['0 0 0 1 * *', 13]] as const) {
      expect(localRuns(expression, from, count), expression).toEqual(runs(new CronTime(expression, zone), from, count));
    }
    for (const start of [new Date('2026-03-01T00:00:00Z'), new Date('2026-09-20T00:00:00Z')]) {
      expect(localRuns('0 */20 1-3 * * *', start, 9 * 60)).toEqual(runs(new CronTime('0 */20 1-3 * * *', zone), start, 9 * 60));
    }
  });

  it('follows a change of the process time zone', () => {
    process.env.TZ = 'America/New_York';
    expect(localRuns('0 0 9 * * *', new Date('2026-07-01T00:00:00Z'), 1)).toEqual(['2026-07-01T13:00:00.000Z']);
    process.env.TZ = 'Asia/Tokyo';
    expect(localRuns('0 0 9 * * *', new Date('2026-07-01T00:00:00Z'), 1)).toEqual(['2026-07-02T00:00:00.000Z']);
  });

  it('says why an expression is refused', () => {
    expect(cronExpressionError('0 0 25 * * *')?.message).toMatch(/.+/);
    expect(cronExpressionError('not a cron')).toBeInstanceOf(Error);
  });
});
