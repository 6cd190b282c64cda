// The steps shared by applying a move and recovering from a crashed one: placing a file without overwriting,
// finishing (catalog, source clean-up) and undoing, each safe to repeat after a crash at any point.
import { dirname, join, sep } from 'node:path';
import type { Registration } from '../store/liveness.ts';
import type { Db, Store } from '../store/store.ts';
import { errorCode, type MoveFs } from './fs.ts';
import { closeRows, setState, type JournalRow } from './journal.ts';
import { emitEvent } from '../events/live-events.ts';
import { removedBooks } from '../events/removed-books.ts';

/**
 * Thrown by a step hook to stop a move dead, as a crash (or a kill) would: nothing is undone in-process and the
 * journal is left for `recoverMoves` to resume or roll back.
 */
export class MoveInterrupted extends Error {
  override name = 'MoveInterrupted';
}

/** A target that is already taken; the move of that book is undone and reported as failed. */
export class MoveCollision extends Error {
  override name = 'MoveCollision';
  readonly path: string;
  constructor(path: string) {
    super(`target already exists: ${path}`);
    this.path = path;
  }
}

/** Called before every step that changes the disk or the journal. Throwing fails the book (MoveInterrupted: "crashes"). */
export type StepHook = (step: string, detail: { bookId: number; path?: string }) => void | Promise<void>;

/** What moving and recovering need of the store: the catalog, and whether other owners of moves still run. */
export type MoveStore = Pick<Store, 'db' | 'liveness'>;

/**
 * The step hook of work this process owns under `registration`: once the registration is lost (PostgreSQL: the
 * connection holding this process's liveness lock dropped), other processes may take it for dead and recover its
 * work, so it stops at the next step as a crash would.
 */
export function fencedStep(registration: Registration, step: StepHook): StepHook {
  return (name, detail) => {
    if (!registration.held()) throw new MoveInterrupted('this process lost its registration with the catalog database; the move is left to recovery');
    return step(name, detail);
  };
}

export interface Engine {
  db: Db;
  fs: MoveFs;
  step: StepHook;
  log: (message: string) => void;
}

/** Files left in a folder that do not keep it from counting as empty. */
const IGNORABLE = new Set(['.DS_Store', 'Thumbs.db']);

/** Link errors that mean "this filesystem has no hard links" rather than "this cannot work". */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK']);

let chain: Promise<unknown> = Promise.resolve();

/** Runs move and recovery work of this process one at a time. */
export function withMoveLock<T>(work: () => Promise<T>): Promise<T> {
  const run = chain.then(work, work);
  chain = run.catch(() => undefined);
  return run;
}

export function isInside(root: string, path: string): boolean {
  const r = root.endsWith(sep) ? root : root + sep;
  return path.startsWith(r);
}

/**
 * Moves `from` to `to` on the same filesystem without ever replacing what is at `to`: a hard link (which fails when
 * `to` exists) then removal of the source; a folder, or a file on a filesystem without hard links, is renamed after
 * checking the target is free. Returns 'exdev' when the two are on different devices (nothing was changed).
 */
export async function placeNoReplace(e: Engine, bookId: number, from: string, to: string, isFolder: boolean, what: 'source' | 'copy' = 'source'): Promise<'placed' | 'exdev'> {
  const label = (step: string): string => (what === 'copy' ? `${step}-copy` : step);
  const there = await e.fs.lstat(to);
  if (there) {
    const self = await e.fs.lstat(from);
    // A case-only rename on a case-insensitive filesystem finds the file itself at the target.
    if (!(self && self.dev === there.dev && self.ino === there.ino && there.nlink === 1)) throw new MoveCollision(to);
    await e.step(label('rename'), { bookId, path: to });
    await e.fs.rename(from, to);
    return 'placed';
  }
  const rename = async (): Promise<'placed' | 'exdev'> => {
    await e.step(label('rename'), { bookId, path: to });
    try {
      await e.fs.rename(from, to);
    } catch (error) {
      if (errorCode(error) === 'EXDEV') return 'exdev';
      throw error;
    }
    return 'placed';
  };
  if (isFolder) return rename();
  await e.step(label('link'), { bookId, path: to });
  try {
    await e.fs.link(from, to);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'EEXIST') throw new MoveCollision(to);
    if (code === 'EXDEV') return 'exdev';
    if (code !== undefined && NO_HARD_LINKS.has(code)) return rename();
    throw error;
  }
  await e.step(what === 'copy' ? 'unlink-temp' : 'unlink-source', { bookId, path: from });
  await e.fs.unlink(from);
  return 'placed';
}

async function remove(e: Engine, path: string, isFolder: boolean): Promise<void> {
  if (isFolder) await e.fs.rmTree(path);
  else await e.fs.unlink(path);
}

/** Removes `dir` and its parents while they are empty, stopping at `stopAt` (never removed) and at any library root. */
export async function removeEmptyDirs(e: Engine, dir: string, stopAt: string, protectedRoots: ReadonlySet<string>): Promise<void> {
  let current = dir;
  while (isInside(stopAt, current) && !protectedRoots.has(current)) {
    let names: string[];
    try {
      names = await e.fs.readdir(current);
    } catch {
      return;
    }
    if (names.some((n) => !IGNORABLE.has(n))) return;
    try {
      for (const n of names) await e.fs.unlink(join(current, n));
      await e.fs.rmdir(current);
    } catch {
      return;
    }
    current = dirname(current);
  }
}

export async function libraryRoots(db: Db): Promise<Set<string>> {
  return new Set((await db.selectFrom('library_path').select('path').execute()).map((r) => r.path));
}

/** Points the catalog at the rows' targets and marks them done, in one transaction. */
export async function commitCatalog(e: Engine, rows: JournalRow[]): Promise<void> {
  const first = rows[0];
  if (!first) return;
  await e.step('catalog', { bookId: first.book_id });
  await e.db.transaction().execute(async (trx) => {
    // A book moved into another library leaves the sight of that library's users and enters the other's.
    const before = await removedBooks(trx, [first.book_id]);
    const changedLibrary = before.some((b) => b.libraryId !== first.to_library_id);
    for (const row of rows) {
      if (row.book_file_id === null) continue;
      await trx
        .updateTable('book_file')
        .set({ library_path_id: row.to_library_path_id, file_sub_path: row.to_sub_path, file_name: row.to_file_name })
        .where('id', '=', row.book_file_id)
        .execute();
    }
    await trx.updateTable('book').set({ library_id: first.to_library_id, library_path_id: first.to_book_library_path_id }).where('id', '=', first.book_id).execute();
    await trx.updateTable('move_journal').set({ state: 'done', updated_at: new Date().toISOString() }).where('id', 'in', rows.map((r) => r.id)).execute();
    if (changedLibrary) await emitEvent(trx, { kind: 'books-removed', books: before });
    await emitEvent(trx, { kind: changedLibrary ? 'books-added' : 'books-changed', bookIds: [first.book_id] });
  });
  for (const row of rows) row.state = 'done';
}

const sameAs = (info: { dev: string; ino: string } | undefined, dev: string | null, ino: string | null): boolean =>
  info !== undefined && dev !== null && ino !== null && info.dev === dev && info.ino === ino;

/**
 * After the catalog points at the new places: removes the sources of cross-device copies, then folders the move
 * emptied, then closes the rows. Every part checks the disk first, so it can run again after a crash.
 */
export async function finishRows(e: Engine, rows: JournalRow[]): Promise<void> {
  const first = rows[0];
  if (!first) return;
  const bookId = first.book_id;
  const protectedRoots = await libraryRoots(e.db);
  const moved = rows.filter((r) => r.from_path !== r.to_path);
  for (const row of moved) {
    const isFolder = row.kind === 'folder';
    const temp = await e.fs.lstat(row.temp_path);
    if (temp) {
      await e.step('remove-temp', { bookId, path: row.temp_path });
      await remove(e, row.temp_path, temp.isDirectory);
    }
    if (row.method !== 'copy') continue;
    const [src, dst] = [await e.fs.lstat(row.from_path), await e.fs.lstat(row.to_path)];
    if (src && sameAs(src, row.src_dev, row.src_ino) && sameAs(dst, row.temp_dev, row.temp_ino)) {
      await e.step('remove-source', { bookId, path: row.from_path });
      await remove(e, row.from_path, isFolder);
    }
  }
  for (const dir of new Set(moved.map((r) => dirname(r.from_path)))) {
    await e.step('remove-empty-dirs', { bookId, path: dir });
    await removeEmptyDirs(e, dir, first.from_root, protectedRoots);
  }
  await e.step('journal-closed', { bookId });
  await closeRows(e.db, rows.map((r) => r.id));
}

/** Puts one file back where it was, judging by what is on disk. Returns false when it is nowhere to be found. */
async function rollbackRow(e: Engine, row: JournalRow): Promise<boolean> {
  const bookId = row.book_id;
  const isFolder = row.kind === 'folder';
  const src = await e.fs.lstat(row.from_path);
  const dst = await e.fs.lstat(row.to_path);
  const temp = await e.fs.lstat(row.temp_path);
  const isSource = (info: typeof src): boolean => sameAs(info, row.src_dev, row.src_ino);
  const isCopy = (info: typeof src): boolean => sameAs(info, row.temp_dev, row.temp_ino);
  if (src) {
    if (dst && isCopy(dst)) {
      await e.step('rollback-remove-copy', { bookId, path: row.to_path });
      await remove(e, row.to_path, isFolder);
    } else if (dst && !isFolder && isSource(dst) && isSource(src) && dst.nlink > 1) {
      // Linked but the source not yet removed: drop the new name.
      await e.step('rollback-unlink-target', { bookId, path: row.to_path });
      await e.fs.unlink(row.to_path);
    }
    if (temp) {
      await e.step('rollback-remove-temp', { bookId, path: row.temp_path });
      await remove(e, row.temp_path, temp.isDirectory);
    }
    return true;
  }
  if (dst && isSource(dst)) {
    await e.step('rollback-rename', { bookId, path: row.from_path });
    await e.fs.mkdirp(dirname(row.from_path));
    await e.fs.rename(row.to_path, row.from_path);
    if (temp) await remove(e, row.temp_path, temp.isDirectory);
    return true;
  }
  return false;
}

/**
 * Undoes a book's move: every file goes back to its old place and folders created for it are removed when empty.
 * The rows are marked rolling_back first, so a crash half-way through is rolled back (never resumed) next time.
 * Rows whose file cannot be put back stay open with an error; the others are closed as rolled_back.
 */
export async function rollbackRows(e: Engine, rows: JournalRow[], reason: string): Promise<string[]> {
  const first = rows[0];
  if (!first) return [];
  const bookId = first.book_id;
  await e.step('journal-rolling-back', { bookId });
  await setState(e.db, rows.map((r) => r.id), 'rolling_back', { error: reason.slice(0, 2000) });
  const problems: string[] = [];
  const restored: number[] = [];
  const protectedRoots = await libraryRoots(e.db);
  for (const row of [...rows].reverse()) {
    if (row.from_path === row.to_path) {
      restored.push(row.id);
      continue;
    }
    try {
      if (await rollbackRow(e, row)) restored.push(row.id);
      else {
        problems.push(`${row.from_path}: found neither at its old place nor at ${row.to_path}`);
        await setState(e.db, [row.id], 'rolled_back', { error: 'file not found during rollback', closed_at: new Date().toISOString() });
      }
    } catch (error) {
      if (error instanceof MoveInterrupted) throw error;
      problems.push(`${row.from_path}: could not be put back: ${(error as Error).message}`);
    }
  }
  for (const dir of new Set(rows.filter((r) => r.from_path !== r.to_path).map((r) => dirname(r.to_path)))) {
    await removeEmptyDirs(e, dir, first.to_root, protectedRoots);
  }
  await e.step('journal-rolled-back', { bookId });
  await setState(e.db, restored, 'rolled_back', { closed_at: new Date().toISOString() });
  return problems;
}

/** Whether a book's rows may be resumed: every file already sits at its target. */
export function canResume(rows: JournalRow[]): boolean {
  return rows.every((r) => r.state === 'committed' || r.state === 'done');
}

export { closeRows };
