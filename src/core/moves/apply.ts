// Carrying out a move plan, book by book, with a journal entry ahead of every change so a crash can be recovered.
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { bookMoveKey, lockKeyForTransaction } from '../store/key-locks.ts';
import { nowIso } from '../time.ts';
import type { Registration } from '../store/liveness.ts';
import { commitCatalog, fencedStep, finishRows, MoveCollision, MoveInterrupted, placeNoReplace, rollbackRows, withMoveLock, type Engine, type MoveStore, type StepHook } from './engine.ts';
import { nodeMoveFs, type MoveFs, type PathInfo } from './fs.ts';
import { activeBatches, ownerStatus, setState, type JournalRow } from './journal.ts';
import { planMoves, TEMP_PREFIX, type MovePlan, type MoveRequest, type PlannedBook, type PlannedFile, type PlanOptions } from './plan.ts';
import { recoverUnlocked, type RecoveryReport } from './recover.ts';

export interface ApplyOptions {
  fs?: MoveFs;
  /** Called before every change to the disk or the journal (fault injection in tests, cancellation). */
  step?: StepHook;
  log?: (message: string) => void;
}

export type BookOutcome = 'moved' | 'unchanged' | 'skipped' | 'failed';

export interface MovedFile {
  kind: PlannedFile['kind'];
  bookFileId: number | null;
  from: string;
  to: string;
}

export interface BookMoveResult {
  bookId: number;
  title: string | null;
  status: BookOutcome;
  /** Why the book was skipped or failed. */
  reason?: string;
  /** Files that changed place (sidecars included). */
  files: MovedFile[];
  leftBehind: { path: string; reason: string }[];
}

export interface MoveResult {
  batchId: string;
  books: BookMoveResult[];
}

function engineOf(store: MoveStore, registration: Registration, options: ApplyOptions): Engine {
  return { db: store.db, fs: options.fs ?? nodeMoveFs, step: fencedStep(registration, options.step ?? (() => undefined)), log: options.log ?? (() => undefined) };
}

export function movedFiles(book: PlannedBook): MovedFile[] {
  return [...book.files, ...book.sidecars].filter((f) => f.from !== f.to).map((f) => ({ kind: f.kind, bookFileId: f.bookFileId, from: f.from, to: f.to }));
}

const sameIdentity = (a: PathInfo, dev: string | null, ino: string | null): boolean => a.dev === dev && a.ino === ino;

class BookMover {
  private readonly e: Engine;
  private readonly liveness: MoveStore['liveness'];
  private readonly batchId: string;
  private readonly owner: string;
  private seq = 0;

  constructor(e: Engine, liveness: MoveStore['liveness'], registration: Registration, batchId: string) {
    this.e = e;
    this.liveness = liveness;
    this.batchId = batchId;
    this.owner = JSON.stringify(registration.owner);
  }

  private result(book: PlannedBook, status: BookOutcome, reason?: string, files: MovedFile[] = []): BookMoveResult {
    return { bookId: book.bookId, title: book.title, status, ...(reason !== undefined ? { reason } : {}), files, leftBehind: book.leftBehind };
  }

  async move(book: PlannedBook): Promise<BookMoveResult> {
    if (book.status !== 'move') return this.result(book, book.status === 'unchanged' ? 'unchanged' : 'skipped', book.reason);
    const { e } = this;
    const sidecars: PlannedFile[] = [];
    const identities = new Map<PlannedFile, PathInfo>();
    // Sources are checked again: the disk may have changed since the plan was made.
    for (const f of book.files) {
      if (f.from === f.to) continue;
      const info = await e.fs.lstat(f.from);
      if (!info) return this.result(book, 'failed', `source not found: ${f.from}`);
      identities.set(f, info);
    }
    for (const f of book.sidecars) {
      const info = await e.fs.lstat(f.from);
      if (!info) continue;
      identities.set(f, info);
      sidecars.push(f);
    }
    const entries = [...book.files, ...sidecars];
    let rows: JournalRow[];
    try {
      if (entries.length === 0) {
        // A physical book (no files) changes library in the catalog only.
        await e.step('catalog', { bookId: book.bookId });
        await e.db.updateTable('book').set({ library_id: book.toLibraryId, library_path_id: book.toLibraryPathId }).where('id', '=', book.bookId).execute();
        return this.result(book, 'moved');
      }
      await e.step('journal-planned', { bookId: book.bookId });
      rows = await this.journal(book, entries, identities);
    } catch (error) {
      if (error instanceof MoveInterrupted) throw error;
      return this.result(book, 'failed', (error as Error).message);
    }
    try {
      for (const row of rows) {
        if (row.from_path !== row.to_path) await this.transfer(row);
      }
      await commitCatalog(e, rows);
    } catch (error) {
      if (error instanceof MoveInterrupted) throw error;
      const reason = (error as Error).message;
      e.log(`move of book ${book.bookId} failed, undoing it: ${reason}`);
      let problems: string[];
      try {
        problems = await rollbackRows(e, rows, reason);
      } catch (rollbackError) {
        if (rollbackError instanceof MoveInterrupted) throw rollbackError;
        problems = [`undo incomplete, it will be retried on the next start: ${(rollbackError as Error).message}`];
      }
      return this.result(book, 'failed', problems.length > 0 ? `${reason}; ${problems.join('; ')}` : reason);
    }
    try {
      await finishRows(e, rows);
    } catch (error) {
      if (error instanceof MoveInterrupted) throw error;
      // The move itself is complete; clean-up is retried by the next recovery.
      e.log(`book ${book.bookId} moved, clean-up left for later: ${(error as Error).message}`);
    }
    return this.result(book, 'moved', undefined, movedFiles({ ...book, sidecars }));
  }

  private async journal(book: PlannedBook, entries: PlannedFile[], identities: Map<PlannedFile, PathInfo>): Promise<JournalRow[]> {
    const now = nowIso();
    const values = entries.map((f) => {
      const seq = this.seq++;
      const info = identities.get(f);
      return {
        batch_id: this.batchId,
        owner: this.owner,
        seq,
        book_id: book.bookId,
        book_file_id: f.bookFileId,
        kind: f.kind,
        from_path: f.from,
        to_path: f.to,
        temp_path: join(dirname(f.to), `${TEMP_PREFIX}${this.batchId.slice(0, 8)}-${seq}`),
        from_root: f.fromRoot,
        to_root: f.toRoot,
        to_library_id: book.toLibraryId,
        to_book_library_path_id: book.toLibraryPathId,
        to_library_path_id: f.toLibraryPathId,
        to_sub_path: f.toSubPath,
        to_file_name: f.toFileName,
        src_dev: info?.dev ?? null,
        src_ino: info?.ino ?? null,
        size_bytes: info?.size ?? null,
        // Files that stay where they are only need the catalog update.
        state: f.from === f.to ? 'committed' : 'planned',
        created_at: now,
        updated_at: now,
      };
    });
    return this.e.db.transaction().execute(async (trx) => {
      // Another process (a replica, `bindery move`) may be moving the same book: one of them journals it, and the
      // other fails that book rather than both moving its files.
      await lockKeyForTransaction(trx, bookMoveKey(book.bookId));
      const open = await trx.selectFrom('move_journal').select(['batch_id', 'owner']).where('book_id', '=', book.bookId).where('closed_at', 'is', null).where('batch_id', '!=', this.batchId).execute();
      for (const row of open) if ((await ownerStatus(this.liveness, row.owner, row.batch_id)) === 'running') throw new Error('the book is being moved by another process');
      const rows: JournalRow[] = [];
      for (const v of values) rows.push(await trx.insertInto('move_journal').values(v).returningAll().executeTakeFirstOrThrow());
      return rows;
    });
  }

  /** Moves one file or folder to its target; on another device through a verified copy next to the target. */
  private async transfer(row: JournalRow): Promise<void> {
    const { e } = this;
    const bookId = row.book_id;
    const isFolder = row.kind === 'folder';
    await e.step('mkdir', { bookId, path: dirname(row.to_path) });
    await e.fs.mkdirp(dirname(row.to_path));
    let method: 'rename' | 'copy' = 'rename';
    if ((await placeNoReplace(e, bookId, row.from_path, row.to_path, isFolder)) === 'exdev') {
      method = 'copy';
      if (await e.fs.lstat(row.to_path)) throw new MoveCollision(row.to_path);
      await e.step('copy', { bookId, path: row.temp_path });
      if (isFolder) await e.fs.copyTree(row.from_path, row.temp_path);
      else await e.fs.copyFile(row.from_path, row.temp_path);
      const [source, copy] = [await e.fs.fingerprint(row.from_path), await e.fs.fingerprint(row.temp_path)];
      if (source.size !== copy.size || source.hash !== copy.hash) throw new Error(`the copy of ${row.from_path} does not match the original`);
      const temp = await e.fs.lstat(row.temp_path);
      if (!temp) throw new Error(`the copy of ${row.from_path} disappeared`);
      await e.fs.fsyncDir(dirname(row.temp_path));
      await e.step('journal-copied', { bookId });
      await setState(e.db, [row.id], 'copied', { method, temp_dev: temp.dev, temp_ino: temp.ino });
      Object.assign(row, { state: 'copied', method, temp_dev: temp.dev, temp_ino: temp.ino });
      if ((await placeNoReplace(e, bookId, row.temp_path, row.to_path, isFolder, 'copy')) === 'exdev') throw new Error(`cannot place the copy at ${row.to_path}`);
    } else {
      const placed = await e.fs.lstat(row.to_path);
      if (!placed || !sameIdentity(placed, row.src_dev, row.src_ino)) throw new Error(`${row.to_path} is not the moved file`);
    }
    await e.fs.fsyncDir(dirname(row.to_path));
    await e.fs.fsyncDir(dirname(row.from_path));
    await e.step('journal-committed', { bookId });
    await setState(e.db, [row.id], 'committed', { method });
    Object.assign(row, { state: 'committed', method });
  }
}

async function applyUnlocked(store: MoveStore, plan: MovePlan, options: ApplyOptions): Promise<MoveResult> {
  // Registered before anything is journalled: from then on every process sharing the catalog sees this one running.
  const registration = await store.liveness.register();
  const e = engineOf(store, registration, options);
  const batchId = randomUUID();
  activeBatches.add(batchId);
  try {
    const mover = new BookMover(e, store.liveness, registration, batchId);
    const books: BookMoveResult[] = [];
    for (const book of plan.books) books.push(await mover.move(book));
    return { batchId, books };
  } finally {
    // In-memory only: a real crash forgets it just the same.
    activeBatches.delete(batchId);
  }
}

/** Carries out a plan. Books fail independently (and are put back); a MoveInterrupted from the step hook stops everything. */
export function applyMoves(store: MoveStore, plan: MovePlan, options: ApplyOptions = {}): Promise<MoveResult> {
  return withMoveLock(() => applyUnlocked(store, plan, options));
}

export interface MoveBooksResult extends MoveResult {
  recovered: RecoveryReport;
  plan: MovePlan;
}

/** Recover, plan and apply in one go, holding this process's move lock throughout (what the HTTP route uses). */
export function moveBooks(store: MoveStore, requests: MoveRequest[], options: ApplyOptions & PlanOptions = {}): Promise<MoveBooksResult> {
  return withMoveLock(async () => {
    const recovered = await recoverUnlocked(store, options);
    const plan = await planMoves(store, requests, options);
    const result = await applyUnlocked(store, plan, options);
    return { ...result, recovered, plan };
  });
}
