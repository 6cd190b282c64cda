// After a crash: every unfinished book move of a dead process is resumed when all its files already reached their
// targets, and rolled back otherwise. Run on daemon start and before `bindery move` plans anything.
import type { Registration } from '../store/liveness.ts';
import type { Db } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { canResume, commitCatalog, fencedStep, finishRows, MoveInterrupted, rollbackRows, withMoveLock, type Engine, type MoveStore, type StepHook } from './engine.ts';
import { nodeMoveFs, type MoveFs } from './fs.ts';
import { activeBatches, openRows, ownerStatus, pruneJournal, type JournalRow } from './journal.ts';

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

/**
 * Makes a dead process's batch this process's own before recovering it, so that two processes recovering at once (a
 * replica's recovery and `bindery move` on another machine) never both work on it: false when another got there first.
 */
async function adopt(db: Db, batchId: string, deadOwner: string, me: string): Promise<boolean> {
  const res = await db
    .updateTable('move_journal')
    .set({ owner: me, updated_at: nowIso() })
    .where('batch_id', '=', batchId)
    .where('owner', '=', deadOwner)
    .where('closed_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Rows recovery could not put right go back to their dead owner, for whichever process recovers next. */
async function giveBack(db: Db, batchId: string, deadOwner: string, me: string): Promise<void> {
  await db.updateTable('move_journal').set({ owner: deadOwner }).where('batch_id', '=', batchId).where('owner', '=', me).where('closed_at', 'is', null).execute();
}

async function recoverBatch(e: Engine, batch: JournalRow[], report: RecoveryReport): Promise<void> {
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

export async function recoverUnlocked(store: MoveStore, options: RecoverOptions = {}): Promise<RecoveryReport> {
  const report: RecoveryReport = { resumed: 0, rolledBack: 0, busy: 0, problems: [] };
  const rows = await openRows(store.db);
  let registration: Registration | undefined;
  for (const [batchId, batch] of groupBy(rows, (r) => r.batch_id)) {
    const deadOwner = (batch[0] as JournalRow).owner;
    if ((await ownerStatus(store.liveness, deadOwner, batchId)) === 'running') {
      report.busy++;
      continue;
    }
    registration ??= await store.liveness.register();
    const me = JSON.stringify(registration.owner);
    if (!(await adopt(store.db, batchId, deadOwner, me))) {
      report.busy++;
      continue;
    }
    const e: Engine = { db: store.db, fs: options.fs ?? nodeMoveFs, step: fencedStep(registration, options.step ?? (() => undefined)), log: options.log ?? (() => undefined) };
    activeBatches.add(batchId);
    try {
      // As they are now: another process may have recovered part of the batch since the rows were read.
      const adopted = await store.db.selectFrom('move_journal').selectAll().where('batch_id', '=', batchId).where('closed_at', 'is', null).orderBy('seq').execute();
      await recoverBatch(e, adopted, report);
      await giveBack(store.db, batchId, deadOwner, me);
    } finally {
      activeBatches.delete(batchId);
    }
  }
  await pruneJournal(store.db);
  return report;
}

/**
 * Resumes or rolls back every move left unfinished by a process that is no longer running, so the catalog and the
 * disk agree again. Safe to call at any time and repeatedly; moves of live processes are left alone.
 */
export function recoverMoves(store: MoveStore, options: RecoverOptions = {}): Promise<RecoveryReport> {
  return withMoveLock(() => recoverUnlocked(store, options));
}
