// Monthly listening pace: audiobooks finished per local month, with the time listened that month.
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { localPeriod } from './calendar.ts';
import { callerProgress, sessionScope } from './session-scope.ts';

/** MonthlyPaceResponse */
export interface PaceMonth {
  year: number;
  month: number;
  booksCompleted: number;
  totalListeningSeconds: number;
}

/** When a finished book was finished: its finish date, else its status change. */
const FINISHED_AT = sql<string | null>`coalesce(user_book_progress.date_finished, user_book_progress.read_status_modified_time)`;

/** Finish instants counted per local month, newest month first, the first `months` of them. */
export function latestMonths(finishes: readonly number[], months: number): { year: number; month: number; books: number }[] {
  const counts = new Map<number, number>();
  for (const ms of finishes) {
    const d = new Date(ms);
    const key = d.getFullYear() * 12 + d.getMonth();
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts]
    .sort(([a], [b]) => b - a)
    .slice(0, months)
    .map(([key, books]) => ({ year: Math.floor(key / 12), month: (key % 12) + 1, books }));
}

/**
 * The latest `months` months in which the caller finished (READ) a book they have listening sessions of, newest first;
 * months without such a finish are absent, whatever was listened to in them.
 */
export async function listeningPace(db: Db, principal: Principal, months: number): Promise<PaceMonth[]> {
  const finished = await callerProgress(db, principal)
    .where('user_book_progress.read_status', '=', 'READ')
    .where(FINISHED_AT, 'is not', null)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('reading_sessions as s')
          .select(sql.lit(1).as('one'))
          .whereRef('s.user_id', '=', 'user_book_progress.user_id')
          .whereRef('s.book_id', '=', 'user_book_progress.book_id')
          .where('s.book_type', '=', 'AUDIOBOOK'),
      ),
    )
    .select(FINISHED_AT.as('at'))
    .execute();
  const latest = latestMonths(
    finished.map((f) => Date.parse(f.at as string)).filter((ms) => !Number.isNaN(ms)),
    months,
  );
  const scope = await sessionScope(db, principal);
  const out: PaceMonth[] = [];
  for (const m of latest) {
    const listened = await scope
      .sessions({ kind: 'listening', period: localPeriod(m.year, m.month) })
      .select((eb) => eb.fn.sum<number>('reading_sessions.duration_seconds').as('seconds')).executeTakeFirst();
    out.push({ year: m.year, month: m.month, booksCompleted: m.books, totalListeningSeconds: Number(listened?.seconds ?? 0) });
  }
  return out;
}
