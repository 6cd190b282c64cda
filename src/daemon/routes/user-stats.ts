// Reading and listening statistics (Grimmory's UserStatsController): always the caller's own sessions and progress,
// over the books the caller may see, on the server's local calendar. Parameters outside their range are a 400.
import Type from 'typebox';
import type { Principal } from '../../core/auth/principal.ts';
import { audiobookProgress, finishFunnel, listeningCompletion, longestAudiobooks } from '../../core/stats/audiobook-progress.ts';
import { bookDistributions } from '../../core/stats/book-distributions.ts';
import { bookTimeline } from '../../core/stats/book-timeline.ts';
import { localPeriod, type Period } from '../../core/stats/calendar.ts';
import { completionHeatmap } from '../../core/stats/completion-heatmap.ts';
import { completionRace } from '../../core/stats/completion-race.ts';
import { completionTimeline } from '../../core/stats/completion-timeline.ts';
import { readingHeatmap } from '../../core/stats/day-counts.ts';
import { genreStats } from '../../core/stats/genre-stats.ts';
import { peakHours } from '../../core/stats/hourly-activity.ts';
import { listeningAuthors } from '../../core/stats/listening-authors.ts';
import { listeningHeatmap } from '../../core/stats/listening-heatmap.ts';
import { listeningPace } from '../../core/stats/listening-pace.ts';
import { listeningTrend } from '../../core/stats/listening-trend.ts';
import { pageTurnerScores } from '../../core/stats/page-turner.ts';
import { readingSpeed } from '../../core/stats/reading-speed.ts';
import { readingStreak } from '../../core/stats/reading-streak.ts';
import { sessionScatter } from '../../core/stats/session-scatter.ts';
import { weekTimeline } from '../../core/stats/week-timeline.ts';
import { favoriteDays } from '../../core/stats/weekday-activity.ts';
import type { Db } from '../../core/store/store.ts';
import { principalOf } from '../authenticate.ts';
import type { DaemonContext } from '../context.ts';
import { adminOr, type RouteRequest, type RouteSpec } from '../route-spec.ts';

// Years whose instants the catalog's ISO text can hold.
const Year = Type.Integer({ minimum: 1, maximum: 9999 });
const Month = Type.Integer({ minimum: 1, maximum: 12 });
// The range Java's week-of-year field accepts (week 0 holds the days before a year's first week).
const Week = Type.Integer({ minimum: 0, maximum: 54 });

const YearQuery = Type.Object({ year: Year });
const MonthQuery = Type.Object({ year: Year, month: Month });
const OptionalPeriodQuery = Type.Object({ year: Type.Optional(Year), month: Type.Optional(Month) });

interface PeriodQuery {
  year?: number;
  month?: number;
}

/** No year: all time; a year: that year, or that month of it (a month without a year is ignored, as in Grimmory). */
const optionalPeriod = ({ year, month }: PeriodQuery): Period | undefined => (year === undefined ? undefined : localPeriod(year, month));

type StatHandler = (db: Db, principal: Principal, query: Record<string, number>) => Promise<unknown>;

function stat(url: string, querystring: ReturnType<typeof Type.Object> | undefined, compute: StatHandler): RouteSpec {
  return {
    method: 'GET',
    url: `/api/v1/user-stats${url}`,
    auth: 'jwt',
    rule: adminOr('canAccessUserStats'),
    ...(querystring ? { schema: { querystring } } : {}),
    handler: (request: RouteRequest, _reply: unknown, ctx: DaemonContext) => compute(ctx.store.db, principalOf(request), (request.query ?? {}) as Record<string, number>),
  };
}

export const userStatsRoutes: RouteSpec[] = [
  stat('/reading/heatmap', YearQuery, (db, p, q) => readingHeatmap(db, p, localPeriod(q.year as number))),
  stat('/reading/heatmap/monthly', MonthQuery, (db, p, q) => readingHeatmap(db, p, localPeriod(q.year as number, q.month))),
  stat('/reading/timeline', Type.Object({ year: Year, week: Week }), (db, p, q) => weekTimeline(db, p, q.year as number, q.week as number)),
  stat('/reading/speed', YearQuery, (db, p, q) => readingSpeed(db, p, q.year as number)),
  stat('/reading/peak-hours', OptionalPeriodQuery, (db, p, q) => peakHours(db, p, 'reading', optionalPeriod(q))),
  stat('/reading/favorite-days', OptionalPeriodQuery, (db, p, q) => favoriteDays(db, p, 'reading', optionalPeriod(q))),
  stat('/reading/genres', undefined, (db, p) => genreStats(db, p, 'any')),
  stat('/reading/completion-timeline', YearQuery, (db, p, q) => completionTimeline(db, p, q.year as number)),
  stat('/reading/book-completion-heatmap', undefined, (db, p) => completionHeatmap(db, p)),
  stat('/reading/page-turner-scores', undefined, (db, p) => pageTurnerScores(db, p)),
  stat('/reading/completion-race', YearQuery, (db, p, q) => completionRace(db, p, q.year as number)),
  stat('/reading/book-distributions', undefined, (db, p) => bookDistributions(db, p)),
  stat('/reading/dates', undefined, (db, p) => readingHeatmap(db, p)),
  stat('/reading/session-scatter', YearQuery, (db, p, q) => sessionScatter(db, p, 'any', localPeriod(q.year as number))),
  stat('/reading/streak', undefined, (db, p) => readingStreak(db, p)),
  stat('/reading/book-timeline', YearQuery, (db, p, q) => bookTimeline(db, p, q.year as number)),
  stat('/listening/heatmap/monthly', MonthQuery, (db, p, q) => listeningHeatmap(db, p, q.year as number, q.month as number)),
  stat('/listening/weekly-trend', Type.Object({ weeks: Type.Integer({ minimum: 0, maximum: 5200, default: 26 }) }), (db, p, q) => listeningTrend(db, p, q.weeks ?? 26)),
  stat('/listening/completion', undefined, async (db, p) => listeningCompletion(await audiobookProgress(db, p))),
  stat('/listening/monthly-pace', Type.Object({ months: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 12 }) }), (db, p, q) => listeningPace(db, p, q.months ?? 12)),
  stat('/listening/finish-funnel', undefined, async (db, p) => finishFunnel(await audiobookProgress(db, p))),
  stat('/listening/peak-hours', OptionalPeriodQuery, (db, p, q) => peakHours(db, p, 'listening', optionalPeriod(q))),
  stat('/listening/favorite-days', OptionalPeriodQuery, (db, p, q) => favoriteDays(db, p, 'listening', optionalPeriod(q))),
  stat('/listening/genres', undefined, (db, p) => genreStats(db, p, 'listening')),
  stat('/listening/authors', undefined, (db, p) => listeningAuthors(db, p)),
  stat('/listening/session-scatter', undefined, (db, p) => sessionScatter(db, p, 'listening')),
  stat('/listening/longest-books', undefined, async (db, p) => longestAudiobooks(await audiobookProgress(db, p))),
];
