// Follow-up work of metadata and cover changes: the match score, writing metadata into files, and long jobs that run
// after the response (tracked in ctx.background so shutdown waits for them).
import { updateMatchScore } from '../../core/metadata/match-scores.ts';
import { anyFormatEnabled, persistenceSettings, writeBackBook, type BookWriteBack } from '../../core/metadata/write-back/book-file.ts';
import type { DaemonContext } from '../context.ts';

export function inBackground(ctx: DaemonContext, what: string, work: () => Promise<unknown>): void {
  const job = work().catch((error: unknown) => ctx.log.error({ err: error }, `${what} failed`));
  ctx.background.add(job);
  const forget = (): boolean => ctx.background.delete(job);
  job.then(forget, forget);
}

/** Writes one book's metadata into its file when the settings ask for it; failures are logged, never thrown. */
export async function writeBack(ctx: DaemonContext, bookId: number): Promise<BookWriteBack> {
  const result = await writeBackBook(ctx.store.db, bookId);
  if (result.status === 'failed') ctx.log.warn({ bookId, code: result.code, reason: result.reason }, 'metadata not written into the book file');
  else if (result.status === 'written') ctx.log.info({ bookId }, 'metadata written into the book file');
  return result;
}

/** After a change to many books: scores now, file writes in the background when any format has them switched on. */
export async function afterBulkChange(ctx: DaemonContext, bookIds: readonly number[]): Promise<void> {
  for (const id of bookIds) await updateMatchScore(ctx.store.db, id);
  if (bookIds.length === 0 || !anyFormatEnabled(await persistenceSettings(ctx.store.db))) return;
  inBackground(ctx, 'writing metadata into book files', async () => {
    for (const id of bookIds) await writeBack(ctx, id);
  });
}
