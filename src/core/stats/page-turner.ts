// Page-turner ("grip") scores of finished books: did sessions get longer, the pauses between them shorter, and the
// last quarter of sessions longer than the rest?
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import { dialectOf } from '../store/dialect.ts';
import type { Db } from '../store/store.ts';
import { roundTo2 } from './rounding.ts';
import { callerProgress } from './session-scope.ts';
import { epochMsSql } from './zone-offsets.ts';

/** PageTurnerScoreResponse */
export interface PageTurnerScore {
  bookId: number;
  bookTitle: string;
  categories: string[];
  pageCount: number | null;
  personalRating: number | null;
  gripScore: number;
  totalSessions: number;
  avgSessionDurationSeconds: number;
  sessionAcceleration: number;
  gapReduction: number;
  finishBurst: boolean;
}

/** One session, instants in epoch milliseconds. */
export interface TimedSession {
  start: number;
  end: number;
  durationSeconds: number;
}

/** Least-squares slope of the values against their index 0…n−1 (0 under two values), summed in index order. */
export function slope(values: readonly number[]): number {
  const n = values.length;
  if (n < 2) return 0;
  let sumX = 0;
  let sumY = 0;
  let sumXY = 0;
  let sumX2 = 0;
  for (const [i, y] of values.entries()) {
    sumX += i;
    sumY += y;
    sumXY += i * y;
    sumX2 += i * i;
  }
  const denominator = n * sumX2 - sumX * sumX;
  return denominator === 0 ? 0 : (n * sumXY - sumX * sumY) / denominator;
}

const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));
const mean = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

export type Grip = Pick<PageTurnerScore, 'gripScore' | 'totalSessions' | 'avgSessionDurationSeconds' | 'sessionAcceleration' | 'gapReduction' | 'finishBurst'>;

/**
 * Grimmory's score of a book's sessions (two or more, in start order): the slope of their durations (acceleration)
 * and of the whole hours between one's end and the next one's start (shrinking gaps), each mapped from −50…50 onto
 * 0…1 and weighted 35; 30 more when the last quarter of sessions is longer on average than the rest.
 */
export function gripOf(sessions: readonly TimedSession[]): Grip {
  const durations = sessions.map((s) => s.durationSeconds);
  const gaps = sessions.slice(1).map((s, i) => Math.trunc((s.start - (sessions[i] as TimedSession).end) / 3_600_000));
  const acceleration = slope(durations);
  const gapTrend = gaps.length >= 2 ? slope(gaps) : 0;
  const lastQuarter = Math.floor(durations.length * 0.75);
  const finishBurst = mean(durations.slice(lastQuarter)) > mean(durations.slice(0, lastQuarter));
  const score = clamp01((acceleration + 50) / 100) * 35 + clamp01((-gapTrend + 50) / 100) * 35 + (finishBurst ? 30 : 0);
  return {
    gripScore: Math.round(Math.min(100, Math.max(0, score))),
    totalSessions: sessions.length,
    avgSessionDurationSeconds: roundTo2(mean(durations)),
    sessionAcceleration: roundTo2(acceleration),
    gapReduction: roundTo2(gapTrend),
    finishBurst,
  };
}

/** Books the caller has READ (with a finish, status or read time) and read in at least two sessions, best grip first. */
export async function pageTurnerScores(db: Db, principal: Principal): Promise<PageTurnerScore[]> {
  const finished = callerProgress(db, principal)
    .select('user_book_progress.book_id')
    .where('user_book_progress.read_status', '=', 'READ')
    .where(sql<string | null>`coalesce(user_book_progress.date_finished, user_book_progress.read_status_modified_time, user_book_progress.last_read_time)`, 'is not', null);
  // Driven by the finished books (a few hundred), each one's sessions read in start order from the user-book index.
  const rows = await db
    .selectFrom('reading_sessions')
    .where('reading_sessions.user_id', '=', principal.userId)
    .where('reading_sessions.book_id', 'in', finished)
    .select(['reading_sessions.book_id', epochMsSql(dialectOf(db), sql.ref('reading_sessions.start_time')).as('start'), epochMsSql(dialectOf(db), sql.ref('reading_sessions.end_time')).as('end'), 'reading_sessions.duration_seconds'])
    .orderBy('reading_sessions.book_id')
    .orderBy('reading_sessions.start_time')
    .execute();
  const byBook = new Map<number, TimedSession[]>();
  for (const r of rows) {
    const list = byBook.get(r.book_id) ?? [];
    if (list.length === 0) byBook.set(r.book_id, list);
    list.push({ start: r.start, end: r.end, durationSeconds: r.duration_seconds });
  }
  const books = [...byBook].filter(([, sessions]) => sessions.length >= 2);
  const details = await bookDetails(db, principal.userId, books.map(([id]) => id));
  const scores = books.map(([bookId, sessions]) => {
    const book = details.get(bookId);
    return { bookId, bookTitle: book?.title ?? 'Unknown Book', categories: book?.categories ?? [], pageCount: book?.pageCount ?? null, personalRating: book?.rating ?? null, ...gripOf(sessions) };
  });
  // Stable: equal scores keep book order.
  return scores.sort((a, b) => b.gripScore - a.gripScore);
}

interface BookDetail {
  title: string | null;
  pageCount: number | null;
  rating: number | null;
  categories: string[];
}

/** Title, page count, the caller's rating and the sorted category names of each book. */
async function bookDetails(db: Db, userId: number, bookIds: readonly number[]): Promise<Map<number, BookDetail>> {
  const out = new Map<number, BookDetail>();
  for (let i = 0; i < bookIds.length; i += 500) {
    const ids = bookIds.slice(i, i + 500);
    const books = await db
      .selectFrom('book')
      .leftJoin('book_metadata as m', 'm.book_id', 'book.id')
      .leftJoin('user_book_progress as p', (join) => join.onRef('p.book_id', '=', 'book.id').on('p.user_id', '=', userId))
      .select(['book.id', 'm.title', 'm.page_count', 'p.personal_rating'])
      .where('book.id', 'in', ids)
      .execute();
    for (const b of books) out.set(b.id, { title: b.title, pageCount: b.page_count, rating: b.personal_rating, categories: [] });
    const categories = await db
      .selectFrom('book_metadata_category_mapping as cm')
      .innerJoin('category as c', 'c.id', 'cm.category_id')
      .select(['cm.book_id', 'c.name'])
      .where('cm.book_id', 'in', ids)
      .execute();
    for (const c of categories) out.get(c.book_id)?.categories.push(c.name);
  }
  for (const detail of out.values()) detail.categories.sort();
  return out;
}
