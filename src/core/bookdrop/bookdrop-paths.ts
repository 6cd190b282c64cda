// Where bookdrop things live on disk, and which names in the bookdrop folder are books waiting to be imported.
import { randomUUID } from 'node:crypto';
import { readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { formatOf } from '../formats/index.ts';
import type { Liveness } from '../store/liveness.ts';
import { markStatus, WORK_MARK } from '../work-files.ts';

/**
 * Names Bindery gives files it is still writing (an upload on its way, a copy being verified). They start with a dot,
 * so neither the bookdrop watcher nor a library scan ever takes them for books.
 */
export const PARTIAL_PREFIX = '.bindery-';

/**
 * A partial file's name: the mark of the process writing it (see work-files.ts) is in the name, so files a killed
 * process left can be told apart, by any process sharing the folder.
 */
export function partialName(kind: 'copy' | 'upload', mark: string): string {
  return `${PARTIAL_PREFIX}${kind === 'upload' ? 'upload-' : ''}${mark}-${randomUUID()}.part`;
}

const PARTIAL_NAME = new RegExp(`^\\.bindery-(?:upload-)?(?:(${WORK_MARK})-)?[0-9a-f-]{36}\\.part$`);

/** A partial file the current process may still be writing is left alone for this long after its last change. */
export const PARTIAL_GRACE_MS = 60 * 60 * 1000;

/**
 * Whether a file is a partial file no running process will finish: its writer (named in it) is gone, or it is this
 * process's own (or names no process) and has not changed for PARTIAL_GRACE_MS.
 */
export async function isAbandonedPartial(liveness: Liveness, fileName: string, mtimeMs: number, now = Date.now()): Promise<boolean> {
  const match = PARTIAL_NAME.exec(fileName);
  if (!match) return false;
  const status = match[1] === undefined ? 'own' : await markStatus(liveness, match[1]);
  return status === 'gone' || (status === 'own' && now - mtimeMs > PARTIAL_GRACE_MS);
}

/** Removes abandoned partial files anywhere under `dir` (hidden folders included); returns how many. */
export async function removeAbandonedPartials(liveness: Liveness, dir: string): Promise<number> {
  let removed = 0;
  const visit = async (folder: string): Promise<void> => {
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const full = join(folder, entry.name);
      if (entry.isDirectory()) await visit(full);
      else if (entry.isFile() && entry.name.startsWith(PARTIAL_PREFIX)) {
        const info = await stat(full).catch(() => undefined);
        if (info && (await isAbandonedPartial(liveness, entry.name, info.mtimeMs)) && (await rm(full).then(() => true, () => false))) removed++;
      }
    }
  };
  await visit(dir);
  return removed;
}

/** Covers extracted from bookdrop files, by bookdrop id (`/api/v1/media/bookdrop/{id}/cover`). */
export function bookdropCoversDir(dataDir: string): string {
  return join(dataDir, 'bookdrop-covers');
}

export function bookdropCoverPath(dataDir: string, id: number): string {
  return join(bookdropCoversDir(dataDir), `${id}.jpg`);
}

export async function saveBookdropCover(dataDir: string, id: number, jpeg: Buffer): Promise<void> {
  const path = bookdropCoverPath(dataDir, id);
  const tmp = `${path}.${randomUUID()}.tmp`;
  await writeFile(tmp, jpeg);
  await rename(tmp, path);
}

export async function removeBookdropCover(dataDir: string, id: number): Promise<void> {
  await rm(bookdropCoverPath(dataDir, id), { force: true });
}

/** A book file by its name: a known book extension, not hidden (which also leaves out Bindery's own partial files). */
export function isBookdropCandidate(fileName: string): boolean {
  return !fileName.startsWith('.') && formatOf(fileName) !== undefined;
}

export function isInsideDir(dir: string, path: string): boolean {
  const root = dir.endsWith(sep) ? dir : dir + sep;
  return path.startsWith(root);
}
