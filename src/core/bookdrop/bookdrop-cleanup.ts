// Keeping the queue true to the folder: rows whose file has gone, imports cut short by a crash, and discarding.
import { readdir, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { errorCode, nodeMoveFs } from '../moves/fs.ts';
import { activeBatches, ownerStatus } from '../moves/journal.ts';
import { ensureHeld, RegistrationLost, type Registration } from '../store/liveness.ts';
import type { Store } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { FINALIZED, PENDING, rowsByIds, type BookdropRow } from './bookdrop-files.ts';
import { isInsideDir, PARTIAL_PREFIX, removeAbandonedPartials, removeBookdropCover } from './bookdrop-paths.ts';
import type { BookdropEnv } from './intake.ts';
import { emitEvent } from '../events/live-events.ts';

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined)) !== undefined;
}

async function deleteRows(env: Pick<BookdropEnv, 'store' | 'dataDir'>, ids: number[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) await env.store.db.deleteFrom('bookdrop_file').where('id', 'in', ids.slice(i, i + 500)).execute();
  if (ids.length > 0) await emitEvent(env.store.db, { kind: 'bookdrop-changed' });
  for (const id of ids) await removeBookdropCover(env.dataDir, id);
}

/**
 * Drops rows whose file is no longer there. When the folder holds no book at all although rows point into it (a
 * network share that is not mounted), nothing is dropped: the review work done on those rows is kept.
 */
export async function removeVanished(env: BookdropEnv, folderLooksEmpty: boolean): Promise<number> {
  const rows = await env.store.db.selectFrom('bookdrop_file').select(['id', 'file_path', 'status']).execute();
  if (rows.length === 0 || folderLooksEmpty) return 0;
  const gone: number[] = [];
  for (const row of rows) if (!(await exists(row.file_path))) gone.push(row.id);
  await deleteRows(env, gone);
  return gone.length;
}

/** Rows a watcher saw disappear: the file, or everything under a removed folder. */
export async function forgetPath(env: Pick<BookdropEnv, 'store' | 'dataDir'>, path: string, isFolder: boolean): Promise<number> {
  const absolute = resolve(path);
  const all = await env.store.db.selectFrom('bookdrop_file').select(['id', 'file_path']).execute();
  const rows = all.filter((r) => (isFolder ? isInsideDir(absolute, r.file_path) : r.file_path === absolute));
  // A file that is back (renamed over, re-created) keeps its row.
  const gone: number[] = [];
  for (const row of rows) if (!(await exists(row.file_path))) gone.push(row.id);
  await deleteRows(env, gone);
  return gone.length;
}

/**
 * An import claims its row (FINALIZED) in its process's name; a claim whose process is gone is recovered at once. A
 * claim that names no process (made before Bindery recorded one) is looked at after this long.
 */
export const STALE_CLAIM_MS = 60 * 60 * 1000;

/** The key under which a running import is listed in this process's active work (see `ownerStatus`). */
export const importKey = (id: number): string => `bookdrop-import-${id}`;

/** An import's trace, cleared whenever its row goes back to the queue. */
export const NO_IMPORT = { import_owner: null, import_partial_path: null, import_target_path: null, original_left: null } as const;

/** How an import whose original stayed in the bookdrop is reported (the reason follows). */
export const ORIGINAL_LEFT_NOTE = 'the original could not be removed from the bookdrop';

async function claimIsAbandoned(store: Store, row: BookdropRow, cutoff: string): Promise<boolean> {
  if (row.import_owner === null) return (row.updated_at ?? '') < cutoff;
  return (await ownerStatus(store.liveness, row.import_owner, importKey(row.id))) === 'dead';
}

/** Whether the catalog has a book file at exactly this path. */
async function catalogued(store: Store, path: string): Promise<boolean> {
  const rows = await store.db
    .selectFrom('book_file')
    .innerJoin('library_path', 'library_path.id', 'book_file.library_path_id')
    .select(['library_path.path as root', 'book_file.file_sub_path', 'book_file.file_name'])
    .where('book_file.file_name', '=', basename(path))
    .execute();
  return rows.some((r) => join(r.root, r.file_sub_path, r.file_name) === path);
}

async function sameContent(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([nodeMoveFs.fingerprint(a), nodeMoveFs.fingerprint(b)]);
  return x.size === y.size && x.hash === y.hash;
}

/**
 * What a killed import left in the library: its partial copy is removed; a file it had already given its final name
 * but not yet catalogued is removed too when the original is still in the bookdrop (the import is redone from it, under
 * the same name, rather than as "name (2)" next to an uncatalogued twin). 'recorded' when the catalog has that file.
 */
async function undoHalfImport(store: Store, row: BookdropRow): Promise<'recorded' | 'undone'> {
  if (row.import_partial_path !== null && basename(row.import_partial_path).startsWith(PARTIAL_PREFIX)) await rm(row.import_partial_path, { force: true });
  const placed = row.import_target_path;
  if (placed === null || !(await exists(placed))) return 'undone';
  if (await catalogued(store, placed)) return 'recorded';
  // Only ever our own copy: the same bytes as the original, which stays.
  if ((await exists(row.file_path)) && (await sameContent(placed, row.file_path))) await unlink(placed);
  return 'undone';
}

/**
 * Rows an import holds: FINALIZED and not yet done. A FINALIZED row with `original_left` is done (the book is in the
 * library, only its original could not be removed) and is no claim.
 */
function claimedRows(store: Store) {
  return store.db.selectFrom('bookdrop_file').where('status', '=', FINALIZED).where('original_left', 'is', null);
}

/** Whether any import is claimed (running, or cut short): one indexed look, what a periodic recovery costs when idle. */
export async function hasClaimedImports(store: Store): Promise<boolean> {
  return (await claimedRows(store).select('id').limit(1).executeTakeFirst()) !== undefined;
}

/**
 * Makes a dead process's claim this process's own before anything of it is touched, so that two processes recovering
 * at once (two replicas, a replica and the CLI) never both work on it: false when another got there first.
 */
async function takeOver(store: Store, row: BookdropRow, me: string): Promise<boolean> {
  const claim = store.db.updateTable('bookdrop_file').set({ import_owner: me, updated_at: nowIso() }).where('id', '=', row.id).where('status', '=', FINALIZED).where('original_left', 'is', null);
  const res = await (row.import_owner === null ? claim.where('import_owner', 'is', null) : claim.where('import_owner', '=', row.import_owner)).executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Puts right one claim taken over from a dead process (see `recoverAbandonedClaims`). */
async function recoverClaim(env: BookdropEnv, row: BookdropRow, me: string, registration: Registration): Promise<'completed' | 'released' | 'gone'> {
  const { db } = env.store;
  const forget = async (): Promise<void> => {
    await db.deleteFrom('bookdrop_file').where('id', '=', row.id).where('import_owner', '=', me).execute();
    await emitEvent(db, { kind: 'bookdrop-changed' });
    await removeBookdropCover(env.dataDir, row.id);
  };
  ensureHeld(registration, 'recovery of a bookdrop import');
  const half = await undoHalfImport(env.store, row);
  if (!(await exists(row.file_path))) {
    await forget();
    return 'gone';
  }
  if (half === 'recorded' || (await importedCopyExists(env.store, row.file_path))) {
    ensureHeld(registration, 'recovery of a bookdrop import');
    const failure = await unlink(row.file_path).then(() => undefined, (error: unknown) => error as Error);
    if (!(await exists(row.file_path))) {
      await forget();
      return 'completed';
    }
    // The book is in the library: it stays imported, its original reported as left behind, never offered again.
    await db
      .updateTable('bookdrop_file')
      .set({ ...NO_IMPORT, original_left: failure?.message ?? 'the file is still there', updated_at: nowIso() })
      .where('id', '=', row.id)
      .where('import_owner', '=', me)
      .execute();
    env.log?.('warn', `bookdrop: ${row.file_name} is imported, but ${ORIGINAL_LEFT_NOTE}: ${failure?.message ?? 'the file is still there'}`, { path: row.file_path });
    return 'completed';
  }
  await db.updateTable('bookdrop_file').set({ status: PENDING, updated_at: nowIso(), ...NO_IMPORT }).where('id', '=', row.id).where('import_owner', '=', me).execute();
  return 'released';
}

/**
 * Finishes or releases imports cut short by a crash or a kill (claimed rows whose process is gone, on whichever
 * machine it ran): each is first taken over in this process's name, then what the import left in the library is
 * undone, unless the catalog already has the file, in which case only the original's removal was left. Otherwise the
 * file goes back to PENDING_REVIEW, to be imported again under the name it was meant to get.
 */
export async function recoverAbandonedClaims(env: BookdropEnv, now = Date.now()): Promise<{ completed: number; released: number }> {
  const cutoff = new Date(now - STALE_CLAIM_MS).toISOString();
  const claimed = await claimedRows(env.store).selectAll().execute();
  const out = { completed: 0, released: 0 };
  let registration: Registration | undefined;
  try {
    for (const row of claimed) {
      if (!(await claimIsAbandoned(env.store, row, cutoff))) continue;
      registration ??= await env.store.liveness.register();
      const me = JSON.stringify(registration.owner);
      if (!(await takeOver(env.store, row, me))) continue;
      activeBatches.add(importKey(row.id));
      try {
        const result = await recoverClaim(env, row, me, registration);
        if (result !== 'gone') out[result]++;
      } finally {
        activeBatches.delete(importKey(row.id));
      }
    }
  } catch (error) {
    // The claims this process took over are dead to every other process now: they recover them.
    if (!(error instanceof RegistrationLost)) throw error;
    env.log?.('warn', `bookdrop: ${error.message}`);
  }
  if (out.completed + out.released > 0) env.log?.('warn', `bookdrop: ${out.completed} interrupted imports completed, ${out.released} released for review`);
  return out;
}

export interface RecoverySummary {
  completed: number;
  released: number;
  /** Imported files whose original is still in the bookdrop because it cannot be removed. */
  originalsLeft: { path: string; reason: string }[];
}

/**
 * Recovers abandoned claims (`recoverAbandonedClaims`), tries again to remove the originals imports had to leave
 * behind (`retryLeftOriginals`), then removes partial files of dead processes from the bookdrop.
 */
export async function recoverInterruptedImports(env: BookdropEnv, now = Date.now()): Promise<RecoverySummary> {
  const out = await recoverAbandonedClaims(env, now);
  const originalsLeft = await retryLeftOriginals(env);
  const partials = await removeAbandonedPartials(env.store.liveness, resolve(env.bookdropDir));
  if (partials > 0) env.log?.('warn', `bookdrop: removed ${partials} partial file${partials === 1 ? '' : 's'} left by an interrupted upload`);
  return { ...out, originalsLeft };
}

/**
 * Imported files whose original could not be removed (`original_left`): the original is removed now when it still
 * holds a book the library has (the row goes with it); one that is gone takes its row along; one that no longer
 * matches any book of the library (replaced by another file, or the book deleted since) goes back to review. What
 * still cannot be removed is returned and logged. Rescans only: the periodic look for interrupted imports leaves
 * these rows alone, rather than retry a removal that keeps failing every few seconds.
 */
export async function retryLeftOriginals(env: BookdropEnv): Promise<{ path: string; reason: string }[]> {
  const rows = await env.store.db.selectFrom('bookdrop_file').select(['id', 'file_path', 'original_left']).where('status', '=', FINALIZED).where('original_left', 'is not', null).execute();
  const left: { path: string; reason: string }[] = [];
  const done: number[] = [];
  for (const row of rows) {
    const leftRow = env.store.db.updateTable('bookdrop_file').where('id', '=', row.id).where('original_left', 'is not', null);
    if (!(await exists(row.file_path))) {
      done.push(row.id);
      continue;
    }
    if (!(await importedCopyExists(env.store, row.file_path))) {
      await leftRow.set({ status: PENDING, updated_at: nowIso(), ...NO_IMPORT }).execute();
      await emitEvent(env.store.db, { kind: 'bookdrop-changed' });
      continue;
    }
    const failure = await unlink(row.file_path).then(() => undefined, (error: unknown) => error);
    if (failure === undefined || errorCode(failure) === 'ENOENT') {
      done.push(row.id);
      await removeEmptyFolders(resolve(env.bookdropDir), dirname(row.file_path)).catch(() => undefined);
      continue;
    }
    const reason = (failure as Error).message;
    if (reason !== row.original_left) await leftRow.set({ original_left: reason, updated_at: nowIso() }).execute();
    left.push({ path: row.file_path, reason });
  }
  await deleteRows(env, done);
  if (left.length > 0) env.log?.('warn', `bookdrop: ${left.length} imported file${left.length === 1 ? '' : 's'} left in the bookdrop (${ORIGINAL_LEFT_NOTE}): ${left.map((l) => `${l.path}: ${l.reason}`).join('; ')}`);
  return left;
}

/** Whether a catalog file with the same size and content as `path` is on disk. */
async function importedCopyExists(store: Store, path: string): Promise<boolean> {
  const { size, hash } = await nodeMoveFs.fingerprint(path);
  const rows = await store.db
    .selectFrom('book_file')
    .innerJoin('library_path', 'library_path.id', 'book_file.library_path_id')
    .select(['library_path.path as root', 'book_file.file_sub_path', 'book_file.file_name'])
    .where('book_file.content_hash', '=', hash)
    .where('book_file.size_bytes', '=', size)
    .execute();
  for (const r of rows) {
    const info = await stat(join(r.root, r.file_sub_path, r.file_name)).catch(() => undefined);
    if (info?.isFile() && info.size === size) return true;
  }
  return false;
}

export interface DiscardSummary {
  rows: number;
  deletedFiles: number;
  /** Files that could not be deleted (their rows are kept). */
  failures: { path: string; reason: string }[];
}

/**
 * Deletes the selected files from the bookdrop folder (what the user asked for), their rows and covers, then any
 * folder of the bookdrop left empty. A file that cannot be deleted keeps its row.
 */
export async function discardFiles(env: Pick<BookdropEnv, 'store' | 'dataDir' | 'bookdropDir'>, ids: readonly number[]): Promise<DiscardSummary> {
  const rows: BookdropRow[] = await rowsByIds(env.store.db, ids);
  const dir = resolve(env.bookdropDir);
  const summary: DiscardSummary = { rows: 0, deletedFiles: 0, failures: [] };
  const done: number[] = [];
  const folders = new Set<string>();
  for (const row of rows) {
    // Only ever inside the bookdrop folder, whatever a row says.
    if (isInsideDir(dir, row.file_path)) {
      try {
        const info = await stat(row.file_path).catch(() => undefined);
        if (info?.isFile()) {
          await unlink(row.file_path);
          summary.deletedFiles++;
        }
        folders.add(dirname(row.file_path));
      } catch (error) {
        summary.failures.push({ path: row.file_path, reason: (error as Error).message });
        continue;
      }
    }
    done.push(row.id);
  }
  await deleteRows(env, done);
  summary.rows = done.length;
  for (const folder of folders) await removeEmptyFolders(dir, folder);
  return summary;
}

/** Removes `from` and its parents while they are empty, up to but never including `root`. */
export async function removeEmptyFolders(root: string, from: string): Promise<void> {
  let current = from;
  while (isInsideDir(root, current)) {
    const names = await readdir(current).catch(() => undefined);
    if (!names || names.length > 0) return;
    if (!(await rmdir(current).then(() => true, () => false))) return;
    current = dirname(current);
  }
}
