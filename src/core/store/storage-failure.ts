// Telling a full or read-only disk apart from a bug. SQLite reports these as SQLITE_FULL, SQLITE_READONLY or a bare
// "disk I/O error" (it failed to grow its -wal/-shm files); Node as ENOSPC/EROFS/EDQUOT, sometimes without a path
// (a write on a worker thread arrives as a plain Error with the code only in its message). When the error does not
// say which directory or why, the data directory is looked at: free space, free inodes, whether it can be written.
import { accessSync, constants, statfsSync } from 'node:fs';
import { dirname } from 'node:path';

export type StorageProblem = 'full' | 'read-only' | 'io';

export interface StorageFailure {
  problem: StorageProblem;
  /** The directory that cannot be written. */
  directory: string;
  /** Why, in words ("no space left on device"). */
  cause: string;
}

type Reason = Pick<StorageFailure, 'problem' | 'cause'>;

const NO_SPACE: Reason = { problem: 'full', cause: 'no space left on device' };
const READ_ONLY_FS: Reason = { problem: 'read-only', cause: 'read-only file system' };
const ERRNO: Readonly<Record<string, Reason>> = {
  ENOSPC: NO_SPACE,
  EDQUOT: { problem: 'full', cause: 'disk quota exceeded' },
  EROFS: READ_ONLY_FS,
  EIO: { problem: 'io', cause: 'input/output error' },
};

const ERRNO_IN_MESSAGE = /^(ENOSPC|EDQUOT|EROFS|EIO)\b/;

/** What the directory's file system says about writing there now; undefined when nothing is wrong with it. */
export function probeDirectory(directory: string): Reason | undefined {
  try {
    const fs = statfsSync(directory);
    if (fs.bavail === 0) return NO_SPACE;
    if (fs.files > 0 && fs.ffree === 0) return { problem: 'full', cause: 'no free inodes left on device' };
  } catch {
    // A directory that cannot even be looked at is reported by the access check or not at all.
  }
  try {
    accessSync(directory, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EROFS') return READ_ONLY_FS;
    if (code === 'EACCES' || code === 'EPERM') return { problem: 'read-only', cause: 'permission denied' };
  }
  return undefined;
}

function* chain(error: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  for (let e = error; e !== undefined && e !== null && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    yield e;
  }
}

function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code in ERRNO) return code;
  const message = error instanceof Error ? error.message : undefined;
  return message?.match(ERRNO_IN_MESSAGE)?.[1];
}

/**
 * The storage failure behind an error (looking through its causes), or undefined when it is something else.
 * `dataDir` is where the catalog, covers and caches live: SQLite errors, and file errors without a path, are about it.
 */
export function storageFailureOf(error: unknown, dataDir: string): StorageFailure | undefined {
  for (const e of chain(error)) {
    const errno = errnoOf(e);
    if (errno) {
      const path = (e as { path?: unknown }).path;
      const known = ERRNO[errno] ?? NO_SPACE;
      if (typeof path === 'string') return { ...known, directory: dirname(path) };
      return { ...(probeDirectory(dataDir) ?? known), directory: dataDir };
    }
    const sqlite = (e as { code?: unknown }).code;
    if (typeof sqlite !== 'string' || !sqlite.startsWith('SQLITE_')) continue;
    const probed = probeDirectory(dataDir);
    if (sqlite === 'SQLITE_FULL') return { ...(probed ?? NO_SPACE), directory: dataDir };
    if (sqlite.startsWith('SQLITE_READONLY')) return { ...(probed ?? { problem: 'read-only', cause: 'the catalog is read-only' }), directory: dataDir };
    // "disk I/O error" or "unable to open database file": a disk problem only when the directory shows one.
    if ((sqlite.startsWith('SQLITE_IOERR') || sqlite === 'SQLITE_CANTOPEN') && probed) return { ...probed, directory: dataDir };
  }
  return undefined;
}

export function describeStorageFailure(failure: StorageFailure): string {
  return `cannot write to ${failure.directory}: ${failure.cause}`;
}
