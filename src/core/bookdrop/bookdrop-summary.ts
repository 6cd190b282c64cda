// The bookdrop badge: how many dropped files wait for review, out of how many are known.
import { sql } from 'kysely';
import type { Db } from '../store/store.ts';
import { nowIso } from '../time.ts';

export interface BookdropSummary {
  pendingCount: number;
  totalCount: number;
  lastUpdatedAt: string;
}

export async function bookdropSummary(db: Db): Promise<BookdropSummary> {
  const row = await db
    .selectFrom('bookdrop_file')
    .select([sql<number>`count(*)`.as('total'), sql<number>`coalesce(sum(case when status = 'PENDING_REVIEW' then 1 else 0 end), 0)`.as('pending')])
    .executeTakeFirstOrThrow();
  return { pendingCount: Number(row.pending), totalCount: Number(row.total), lastUpdatedAt: nowIso() };
}
