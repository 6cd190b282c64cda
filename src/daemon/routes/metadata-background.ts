// Follow-up work of metadata and cover changes: the match score, writing metadata into files, and long jobs that run
// after the response (tracked in ctx.background so shutdown waits for them).
import { afterMetadataChange, type AfterChange } from '../../core/metadata/after-change.ts';
import { updateMatchScore } from '../../core/metadata/match-scores.ts';
import type { DaemonContext } from '../context.ts';

export function inBackground(ctx: DaemonContext, what: string, work: () => Promise<unknown>): void {
  const job = work().catch((error: unknown) => ctx.log.error({ err: error }, `${what} failed`));
  ctx.background.add(job);
  const forget = (): boolean => ctx.background.delete(job);
  job.then(forget, forget);
}

/** The score, the file and the sidecar after one book's metadata changed; failures are logged, never thrown. */
export async function afterChange(ctx: DaemonContext, bookId: number): Promise<AfterChange> {
  const result = await afterMetadataChange(ctx.store, ctx.paths.covers, bookId);
  logAfterChange(ctx, bookId, result);
  return result;
}

export function logAfterChange(ctx: Pick<DaemonContext, 'log'>, bookId: number, result: AfterChange): void {
  const { writeBack, sidecarError } = result;
  if (writeBack.status === 'failed') ctx.log.warn({ bookId, code: writeBack.code, reason: writeBack.reason }, 'metadata not written into the book file');
  else if (writeBack.status === 'written') ctx.log.info({ bookId }, 'metadata written into the book file');
  if (sidecarError) ctx.log.warn({ bookId, code: sidecarError.code, reason: sidecarError.message }, 'sidecar not rewritten');
}

/** After a change to many books: scores now; files and sidecars in the background. */
export async function afterBulkChange(ctx: DaemonContext, bookIds: readonly number[]): Promise<void> {
  for (const id of bookIds) await updateMatchScore(ctx.store.db, id);
  if (bookIds.length === 0) return;
  inBackground(ctx, 'writing metadata into book files and sidecars', async () => {
    for (const id of bookIds) await afterChange(ctx, id);
  });
}
