// After a crash: every unfinished book move of a dead process is resumed when all its files already reached their
// targets, and rolled back otherwise. Run on daemon start and before `bindery move` plans anything.
import type { Store } from '../store/store.ts';
import { canResume, commitCatalog, finishRows, MoveInterrupted, rollbackRows, withMoveLock, type Engine, type StepHook } from './engine.ts';
import { nodeMoveFs, type MoveFs } from './fs.ts';
import { openRows, ownerStatus, pruneJournal, type JournalRow } from './journal.ts';

export interface RecoveryReport {
  /** Books whose move was completed. */
  resumed: number;
  /** Books put back where they were. */
  rolledBack: number;
  /** Batches left alone because the process running them is still alive. */
  busy: number;
  /** Files that could not be put right; their journal rows stay open (or are closed with an error when the file is gone). */
  problems: string[];
}

export interface RecoverOptions {
  fs?: MoveFs;
  step?: StepHook;
  log?: (message: string) => void;
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

export async function recoverUnlocked(store: Pick<Store, 'db'>, options: RecoverOptions = {}): Promise<RecoveryReport> {
  const e: Engine = { db: store.db, fs: options.fs ?? nodeMoveFs, step: options.step ?? (() => undefined), log: options.log ?? (() => undefined) };
  const report: RecoveryReport = { resumed: 0, rolledBack: 0, busy: 0, problems: [] };
  const rows = await openRows(e.db);
  for (const [batchId, batch] of groupBy(rows, (r) => r.batch_id)) {
    const status = ownerStatus((batch[0] as JournalRow).owner, batchId);
    if (status === 'running') {
      report.busy++;
      continue;
    }
    for (const bookRows of groupBy(batch, (r) => String(r.book_id)).values()) {
      const bookId = (bookRows[0] as JournalRow).book_id;
      try {
        if (canResume(bookRows)) {
          if (bookRows.some((r) => r.state !== 'done')) await commitCatalog(e, bookRows);
          await finishRows(e, bookRows);
          report.resumed++;
          e.log(`recovered the interrupted move of book ${bookId}: completed`);
        } else {
          const problems = await rollbackRows(e, bookRows, 'interrupted; rolled back on recovery');
          report.problems.push(...problems);
          report.rolledBack++;
          e.log(`recovered the interrupted move of book ${bookId}: rolled back`);
        }
      } catch (error) {
        if (error instanceof MoveInterrupted) throw error;
        report.problems.push(`book ${bookId}: ${(error as Error).message}`);
      }
    }
  }
  await pruneJournal(e.db);
  return report;
}

/**
 * Resumes or rolls back every move left unfinished by a process that is no longer running, so the catalog and the
 * disk agree again. Safe to call at any time and repeatedly; moves of live processes are left alone.
 */
export function recoverMoves(store: Pick<Store, 'db'>, options: RecoverOptions = {}): Promise<RecoveryReport> {
  return withMoveLock(() => recoverUnlocked(store, options));
}
