// Reading sessions the web reader reports (when, how long, from where to where in the book): the raw material of
// reading statistics.
import { CodedError } from '../coded-error.ts';
import type { Db } from '../store/store.ts';

export class ReadingSessionError extends CodedError<'INVALID'> {}

export interface SessionInput {
  bookId: number;
  bookType?: string | null;
  /** ISO-8601 instants. */
  startTime: string;
  endTime: string;
  durationSeconds: number;
  durationFormatted?: string | null;
  startProgress?: number | null;
  endProgress?: number | null;
  progressDelta?: number | null;
  startLocation?: string | null;
  endLocation?: string | null;
}

export interface StoredSession {
  id: number;
  bookId: number;
  bookTitle: string | null;
  bookType: string | null;
  startTime: string;
  endTime: string;
  durationSeconds: number;
  startProgress: number | null;
  endProgress: number | null;
  progressDelta: number | null;
  startLocation: string | null;
  endLocation: string | null;
  createdAt: string;
}

function instant(value: string, field: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new ReadingSessionError('INVALID', `${field} is not a date-time: ${value}`);
  return new Date(ms).toISOString();
}

export async function recordSession(db: Db, userId: number, input: SessionInput): Promise<number> {
  const start = instant(input.startTime, 'startTime');
  const end = instant(input.endTime, 'endTime');
  if (end < start) throw new ReadingSessionError('INVALID', 'endTime is before startTime');
  if (input.durationSeconds < 0) throw new ReadingSessionError('INVALID', 'durationSeconds must not be negative');
  const row = await db
    .insertInto('reading_sessions')
    .values({
      user_id: userId,
      book_id: input.bookId,
      book_type: input.bookType ?? null,
      start_time: start,
      end_time: end,
      duration_seconds: Math.round(input.durationSeconds),
      duration_formatted: input.durationFormatted ?? null,
      start_progress: input.startProgress ?? null,
      end_progress: input.endProgress ?? null,
      progress_delta: input.progressDelta ?? null,
      start_location: input.startLocation ?? null,
      end_location: input.endLocation ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The user's sessions of one book, newest first. */
export async function sessionsOfBook(db: Db, userId: number, bookId: number, page: { offset: number; limit: number }): Promise<{ sessions: StoredSession[]; total: number }> {
  const base = db.selectFrom('reading_sessions').where('reading_sessions.user_id', '=', userId).where('reading_sessions.book_id', '=', bookId);
  const rows = await base
    .leftJoin('book_metadata', 'book_metadata.book_id', 'reading_sessions.book_id')
    .select([
      'reading_sessions.id', 'reading_sessions.book_id', 'book_metadata.title', 'reading_sessions.book_type', 'reading_sessions.start_time', 'reading_sessions.end_time',
      'reading_sessions.duration_seconds', 'reading_sessions.start_progress', 'reading_sessions.end_progress', 'reading_sessions.progress_delta',
      'reading_sessions.start_location', 'reading_sessions.end_location', 'reading_sessions.created_at',
    ])
    .orderBy('reading_sessions.start_time', 'desc')
    .orderBy('reading_sessions.id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const count = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return {
    total: Number(count.n),
    sessions: rows.map((r) => ({
      id: r.id, bookId: r.book_id, bookTitle: r.title, bookType: r.book_type, startTime: r.start_time, endTime: r.end_time, durationSeconds: r.duration_seconds,
      startProgress: r.start_progress, endProgress: r.end_progress, progressDelta: r.progress_delta, startLocation: r.start_location, endLocation: r.end_location, createdAt: r.created_at,
    })),
  };
}
