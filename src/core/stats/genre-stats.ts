// Sessions per genre (the books' categories): how many books of it were read, in how many sessions, for how long.
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { roundTo2 } from './rounding.ts';
import { sessionsPerBook } from './session-scope.ts';

/** GenreStatisticsResponse */
export interface GenreStats {
  genre: string;
  bookCount: number;
  totalSessions: number;
  totalDurationSeconds: number;
  averageSessionsPerBook: number;
}

/**
 * Every category of a book with sessions of the kind. Reading orders by sessions, listening by time (as Grimmory does),
 * both most first, then by name. Sessions are summed per book before they meet the categories, so each session is read once.
 */
export async function genreStats(db: Db, principal: Principal, kind: 'any' | 'listening'): Promise<GenreStats[]> {
  const perBook = await sessionsPerBook(db, principal, kind);
  const rows = await db
    .selectFrom(perBook)
    .innerJoin('book_metadata_category_mapping as cm', 'cm.book_id', 's.book_id')
    .innerJoin('category as c', 'c.id', 'cm.category_id')
    .select((eb) => ['c.name as genre', eb.fn.countAll<number>().as('books'), eb.fn.sum<number>('s.sessions').as('sessions'), eb.fn.sum<number>('s.duration').as('duration')])
    .groupBy('c.name')
    .orderBy(kind === 'listening' ? sql`duration` : sql`sessions`, 'desc')
    .orderBy('c.name')
    .execute();
  return rows.map((r) => {
    const books = Number(r.books);
    const sessions = Number(r.sessions);
    return { genre: r.genre, bookCount: books, totalSessions: sessions, totalDurationSeconds: Number(r.duration ?? 0), averageSessionsPerBook: books > 0 ? roundTo2(sessions / books) : 0 };
  });
}
