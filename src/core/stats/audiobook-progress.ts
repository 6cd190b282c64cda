// How far each audiobook has been listened to: completion, the finish funnel and the longest audiobooks.
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { roundTo1 } from './rounding.ts';
import { callerSessions } from './session-scope.ts';

export interface AudiobookProgress {
  bookId: number;
  title: string;
  /** The furthest session end, in percent (0 when no session reported one). */
  maxProgress: number;
  /** The audiobook file's length. */
  totalDurationSeconds: number;
  listenedDurationSeconds: number;
}

/**
 * Thresholds in percent, as sessions report progress. (Grimmory compares that percent with 0.25/0.5/0.75/0.98 as if it
 * were a fraction, so a book 1 % in counts as finished there; Bindery compares percents with percents.)
 */
const FINISHED = 98;

/** Every audiobook the caller has listening sessions of. */
export async function audiobookProgress(db: Db, principal: Principal): Promise<AudiobookProgress[]> {
  const sessions = await callerSessions(db, principal, { kind: 'listening' });
  const rows = await sessions
    .leftJoin('book_metadata as m', 'm.book_id', 'reading_sessions.book_id')
    .select((eb) => [
      'reading_sessions.book_id',
      // One metadata row per book: max() only names it for the grouping.
      sql<string>`coalesce(max(m.title), 'Unknown')`.as('title'),
      eb.fn.max('reading_sessions.end_progress').as('progress'),
      sql<number>`coalesce((select max(f.duration_seconds) from book_file f where f.book_id = reading_sessions.book_id and f.book_type = 'AUDIOBOOK'), 0)`.as('length'),
      sql<number>`coalesce(sum(reading_sessions.duration_seconds), 0)`.as('listened'),
    ])
    .groupBy('reading_sessions.book_id')
    .orderBy('reading_sessions.book_id')
    .execute();
  return rows.map((r) => ({
    bookId: r.book_id,
    title: r.title,
    maxProgress: Number(r.progress ?? 0),
    totalDurationSeconds: Number(r.length),
    listenedDurationSeconds: Number(r.listened),
  }));
}

const entry = (b: AudiobookProgress) => ({
  bookId: b.bookId,
  title: b.title,
  progressPercent: roundTo1(b.maxProgress),
  totalDurationSeconds: b.totalDurationSeconds,
  listenedDurationSeconds: b.listenedDurationSeconds,
});

/** ListeningCompletionResponse */
export interface ListeningCompletion {
  totalAudiobooks: number;
  completed: number;
  inProgressCount: number;
  inProgress: ReturnType<typeof entry>[];
}

/** Started but unfinished books, most listened first, the first ten of them listed. */
export function listeningCompletion(books: readonly AudiobookProgress[]): ListeningCompletion {
  const started = books.filter((b) => b.maxProgress > 0 && b.maxProgress < FINISHED);
  const inProgress = [...started].sort((a, b) => b.listenedDurationSeconds - a.listenedDurationSeconds).map(entry);
  return { totalAudiobooks: books.length, completed: books.filter((b) => b.maxProgress >= FINISHED).length, inProgressCount: inProgress.length, inProgress: inProgress.slice(0, 10) };
}

/** ListeningFinishFunnelResponse */
export interface FinishFunnel {
  totalStarted: number;
  reached25: number;
  reached50: number;
  reached75: number;
  completed: number;
}

export function finishFunnel(books: readonly AudiobookProgress[]): FinishFunnel {
  const started = books.filter((b) => b.maxProgress > 0);
  const reached = (percent: number): number => started.filter((b) => b.maxProgress >= percent).length;
  return { totalStarted: started.length, reached25: reached(25), reached50: reached(50), reached75: reached(75), completed: reached(FINISHED) };
}

/** LongestAudiobookResponse: the ten longest audiobooks listened to. */
export function longestAudiobooks(books: readonly AudiobookProgress[]): ReturnType<typeof entry>[] {
  return [...books].sort((a, b) => b.totalDurationSeconds - a.totalDurationSeconds).slice(0, 10).map(entry);
}
