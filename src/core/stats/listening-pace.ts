// Monthly listening pace: audiobooks finished per local month, with the time listened that month.
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { callerProgress, callerSessions, sessionOffsets } from './session-scope.ts';
import { localMonthSql, offsetSpans } from './zone-offsets.ts';

/** MonthlyPaceResponse */
export interface PaceMonth {
  year: number;
  month: number;
  booksCompleted: number;
  totalListeningSeconds: number;
}

/** When a finished book was finished: its finish date, else its status change. */
const FINISHED_AT = sql<string | null>`coalesce(user_book_progress.date_finished, user_book_progress.read_status_modified_time)`;

/**
 * The latest `months` months in which the caller finished (READ) a book they have listening sessions of, newest first;
 * months without such a finish are absent, whatever was listened to in them.
 */
export async function listeningPace(db: Db, principal: Principal, months: number): Promise<PaceMonth[]> {
  const finished = callerProgress(db, principal)
    .where('user_book_progress.read_status', '=', 'READ')
    .where(FINISHED_AT, 'is not', null)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('reading_sessions as s')
          .select(sql.lit(1).as('one'))
          .whereRef('s.book_id', '=', 'user_book_progress.book_id')
          .whereRef('s.user_id', '=', 'user_book_progress.user_id')
          .where('s.book_type', '=', 'AUDIOBOOK'),
      ),
    );
  const range = await finished.select((eb) => [eb.fn.min(FINISHED_AT).as('first'), eb.fn.max(FINISHED_AT).as('last')]).executeTakeFirst();
  if (!range?.first || !range.last) return [];
  const finishSpans = offsetSpans(Date.parse(range.first), Date.parse(range.last));
  const completions = await finished
    .select((eb) => [localMonthSql(FINISHED_AT, finishSpans).as('month'), eb.fn.countAll<number>().as('books')])
    .groupBy(sql`month`)
    .orderBy(sql`month`, 'desc')
    .limit(months)
    .execute();
  const sessionSpans = await sessionOffsets(db, principal.userId);
  const listened = await callerSessions(db, principal, { kind: 'listening' })
    .select((eb) => [localMonthSql(sql.ref('reading_sessions.start_time'), sessionSpans).as('month'), eb.fn.sum<number>('reading_sessions.duration_seconds').as('seconds')])
    .groupBy(sql`month`)
    .execute();
  const seconds = new Map(listened.map((l) => [l.month, Number(l.seconds ?? 0)]));
  return completions.map((c) => ({ year: Number(c.month.slice(0, 4)), month: Number(c.month.slice(5, 7)), booksCompleted: Number(c.books), totalListeningSeconds: seconds.get(c.month) ?? 0 }));
}
