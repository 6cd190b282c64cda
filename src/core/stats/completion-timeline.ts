// The completion timeline: per local month of a year, the books whose status was settled then, by status.
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { localPeriod } from './calendar.ts';
import { roundTo2 } from './rounding.ts';
import { callerProgress } from './session-scope.ts';
import { statusRank } from './status-order.ts';
import { localMonthSql, offsetSpans } from './zone-offsets.ts';
import { dialectOf } from '../store/dialect.ts';

/** CompletionTimelineResponse */
export interface CompletionMonth {
  year: number;
  month: number;
  totalBooks: number;
  statusBreakdown: Record<string, number>;
  finishedBooks: number;
  completionRate: number;
}

/** When a book's status was settled: finished, else status changed, else last read. */
export const SETTLED_AT = sql<string | null>`coalesce(user_book_progress.date_finished, user_book_progress.read_status_modified_time, user_book_progress.last_read_time)`;


export interface MonthStatusCount {
  /** `yyyy-MM` */
  month: string;
  status: string;
  books: number;
}

/** Months newest first; statuses in ReadStatus order; completion rate = READ share in percent, two decimals. */
export function completionMonths(rows: readonly MonthStatusCount[]): CompletionMonth[] {
  const months = new Map<string, MonthStatusCount[]>();
  for (const row of rows) months.set(row.month, [...(months.get(row.month) ?? []), row]);
  return [...months.entries()]
    .sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0))
    .map(([key, counts]) => {
      const statusBreakdown = Object.fromEntries([...counts].sort((a, b) => statusRank(a.status) - statusRank(b.status)).map((c) => [c.status, c.books]));
      const totalBooks = counts.reduce((sum, c) => sum + c.books, 0);
      const finishedBooks = statusBreakdown.READ ?? 0;
      return {
        year: Number(key.slice(0, 4)),
        month: Number(key.slice(5, 7)),
        totalBooks,
        statusBreakdown,
        finishedBooks,
        completionRate: totalBooks > 0 ? roundTo2((finishedBooks * 100) / totalBooks) : 0,
      };
    });
}

/** Books with a status other than UNREAD/UNSET, settled in the local year. */
export async function completionTimeline(db: Db, principal: Principal, year: number): Promise<CompletionMonth[]> {
  const period = localPeriod(year);
  const spans = offsetSpans(Date.parse(period.start), Date.parse(period.end));
  const rows = await callerProgress(db, principal)
    .where('user_book_progress.read_status', 'is not', null)
    .where('user_book_progress.read_status', 'not in', ['UNSET', 'UNREAD'])
    .where(SETTLED_AT, '>=', period.start)
    .where(SETTLED_AT, '<', period.end)
    .select((eb) => [localMonthSql(dialectOf(db), SETTLED_AT, spans).as('month'), 'user_book_progress.read_status', eb.fn.countAll<number>().as('books')])
    .groupBy([sql`month`, 'user_book_progress.read_status'])
    .execute();
  return completionMonths(rows.map((r) => ({ month: r.month, status: r.read_status as string, books: Number(r.books) })));
}
