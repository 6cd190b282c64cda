// Listening per author: books, sessions and time.
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { sessionsPerBook } from './session-scope.ts';

/** ListeningAuthorResponse */
export interface AuthorListening {
  author: string;
  bookCount: number;
  totalSessions: number;
  totalDurationSeconds: number;
}

/** Every author of an audiobook with listening sessions, most listened first, then by name. */
export async function listeningAuthors(db: Db, principal: Principal): Promise<AuthorListening[]> {
  const perBook = await sessionsPerBook(db, principal, 'listening');
  const rows = await db
    .selectFrom(perBook)
    .innerJoin('book_metadata_author_mapping as am', 'am.book_id', 's.book_id')
    .innerJoin('author as a', 'a.id', 'am.author_id')
    .select((eb) => ['a.name', eb.fn.countAll<number>().as('books'), eb.fn.sum<number>('s.sessions').as('sessions'), sql<number>`coalesce(sum(s.duration), 0)`.as('duration')])
    .groupBy('a.name')
    .orderBy(sql`duration`, 'desc')
    .orderBy('a.name')
    .execute();
  return rows.map((r) => ({ author: r.name, bookCount: Number(r.books), totalSessions: Number(r.sessions), totalDurationSeconds: Number(r.duration) }));
}
