// Finished metadata fetch jobs and their proposals are kept for review for a while, then forgotten.
import type { Db } from '../store/store.ts';

export const FINISHED_JOB_RETENTION_DAYS = 7;

/** Removes fetch jobs that ended more than `days` ago (their proposals go with them); returns how many. */
export async function forgetFinishedFetchJobs(db: Db, days = FINISHED_JOB_RETENTION_DAYS, now = new Date()): Promise<number> {
  const before = new Date(now.getTime() - days * 24 * 60 * 60 * 1000).toISOString();
  const result = await db.deleteFrom('metadata_fetch_jobs').where('status', '!=', 'IN_PROGRESS').where('completed_at', 'is not', null).where('completed_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
