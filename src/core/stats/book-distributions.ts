// How the caller's books spread over personal ratings, read statuses and progress.
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { callerProgress } from './session-scope.ts';
import { statusRank } from './status-order.ts';
import { dialectOf, type SqlDialect } from '../store/dialect.ts';

/** BookDistributionsResponse */
export interface BookDistributions {
  ratingDistribution: { rating: number; count: number }[];
  progressDistribution: ProgressBucket[];
  statusDistribution: { status: string; count: number }[];
}

export interface ProgressBucket {
  range: string;
  min: number;
  max: number;
  count: number;
}

const BUCKETS: readonly Omit<ProgressBucket, 'count'>[] = [
  { range: 'Not Started', min: 0, max: 0 },
  { range: 'Just Started', min: 1, max: 25 },
  { range: 'Getting Into It', min: 26, max: 50 },
  { range: 'Halfway Through', min: 51, max: 75 },
  { range: 'Almost Done', min: 76, max: 99 },
  { range: 'Completed', min: 100, max: 100 },
];

/** The bucket of a whole percent: 0, 1–25, 26–50, 51–75, 76–99, 100 and over. */
export function bucketOf(percent: number): number {
  if (percent <= 0) return 0;
  if (percent <= 25) return 1;
  if (percent <= 50) return 2;
  if (percent <= 75) return 3;
  if (percent < 100) return 4;
  return 5;
}

/** All six buckets, in order, from counts per whole percent. */
export function progressBuckets(counts: readonly { percent: number; books: number }[]): ProgressBucket[] {
  const totals = BUCKETS.map(() => 0);
  for (const c of counts) totals[bucketOf(c.percent)]! += c.books;
  return BUCKETS.map((b, i) => ({ ...b, count: totals[i] as number }));
}

/**
 * The furthest any reader got, in percent: the web readers and Kobo store 0–100, KOReader a 0–1 fraction. (Grimmory
 * multiplies all of them by 100, which puts every book past 1 % into Completed; Bindery compares like with like.)
 */
const furthestPercent = (dialect: SqlDialect) =>
  sql<number>`${sql.raw(
    dialect.round(
      ['koreader_progress_percent * 100', 'kobo_progress_percent', 'epub_progress_percent', 'pdf_progress_percent', 'cbx_progress_percent']
        .map((column) => `coalesce(user_book_progress.${column}, 0)`)
        .reduce((a, b) => dialect.greatest(a, b)),
      0,
    ),
  )}`;


export async function bookDistributions(db: Db, principal: Principal): Promise<BookDistributions> {
  const ratings = await callerProgress(db, principal)
    .where('user_book_progress.personal_rating', 'is not', null)
    .select((eb) => ['user_book_progress.personal_rating', eb.fn.countAll<number>().as('books')])
    .groupBy('user_book_progress.personal_rating')
    .orderBy('user_book_progress.personal_rating')
    .execute();
  const statuses = await callerProgress(db, principal)
    .where('user_book_progress.read_status', 'is not', null)
    .where('user_book_progress.read_status', '<>', 'UNSET')
    .select((eb) => ['user_book_progress.read_status', eb.fn.countAll<number>().as('books')])
    .groupBy('user_book_progress.read_status')
    .execute();
  const percents = await callerProgress(db, principal)
    .select((eb) => [furthestPercent(dialectOf(db)).as('percent'), eb.fn.countAll<number>().as('books')])
    .groupBy(sql`percent`)
    .execute();
  return {
    ratingDistribution: ratings.map((r) => ({ rating: r.personal_rating as number, count: Number(r.books) })),
    progressDistribution: progressBuckets(percents.map((p) => ({ percent: Number(p.percent), books: Number(p.books) }))),
    statusDistribution: statuses
      .map((s) => ({ status: s.read_status as string, count: Number(s.books) }))
      .sort((a, b) => statusRank(a.status) - statusRank(b.status)),
  };
}
