// Books finished per local month over the last ten years (this one included).
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { isoOf, localMidnight } from './calendar.ts';
import { callerProgress } from './session-scope.ts';
import { localMonthSql, offsetSpans } from './zone-offsets.ts';
import { dialectOf } from '../store/dialect.ts';

/** BookCompletionHeatmapResponse */
export interface CompletionCount {
  year: number;
  month: number;
  count: number;
}

/** Months with a finish date in the ten local years ending with the current one, oldest first. */
export async function completionHeatmap(db: Db, principal: Principal, now: Date = new Date()): Promise<CompletionCount[]> {
  const year = now.getFullYear();
  const start = localMidnight(year - 9, 1, 1);
  const end = localMidnight(year + 1, 1, 1);
  const spans = offsetSpans(start, end);
  const finished = sql.ref<string | null>('user_book_progress.date_finished');
  const rows = await callerProgress(db, principal)
    .where('user_book_progress.date_finished', '>=', isoOf(start))
    .where('user_book_progress.date_finished', '<', isoOf(end))
    .select((eb) => [localMonthSql(dialectOf(db), finished, spans).as('month'), eb.fn.countAll<number>().as('books')])
    .groupBy(sql`month`)
    .orderBy(sql`month`)
    .execute();
  return rows.map((r) => ({ year: Number(r.month.slice(0, 4)), month: Number(r.month.slice(5, 7)), count: Number(r.books) }));
}
