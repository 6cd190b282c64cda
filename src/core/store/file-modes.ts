// The data directory and the catalog hold the signing secret, password hashes and mail credentials: they are made
// private whatever the process umask, and an existing directory or catalog left looser than that is tightened on open.
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';

/** Owner: everything; group: read and enter (backups, a reverse proxy's group); others: nothing. */
export const DATA_DIR_MODE = 0o750;
/** Owner only. SQLite gives its -wal and -shm files the database file's mode. */
export const CATALOG_FILE_MODE = 0o600;
/** The files SQLite keeps next to a catalog. */
export const CATALOG_COMPANIONS = ['-wal', '-shm', '-journal'] as const;

const NOT_CHANGEABLE = new Set(['EPERM', 'EROFS', 'EACCES']);

function modeOf(path: string): number | undefined {
  try {
    return statSync(path).mode & 0o777;
  } catch {
    return undefined;
  }
}

/** Takes away every permission bit `allowed` does not have; true when the mode changed. */
function tighten(path: string, allowed: number): boolean {
  const mode = modeOf(path);
  if (mode === undefined || (mode & ~allowed) === 0) return false;
  try {
    chmodSync(path, mode & allowed);
  } catch (error) {
    // Not ours to change (another owner, a read-only mount): the open goes on and fails later only if it must.
    if (NOT_CHANGEABLE.has((error as NodeJS.ErrnoException).code ?? '')) return false;
    throw error;
  }
  return true;
}

/** A folder everyone may create files in, each keeping their own (the sticky bit): /tmp and the like. */
function isSharedFolder(dir: string): boolean {
  try {
    const { mode } = statSync(dir);
    return (mode & 0o1000) !== 0 && (mode & 0o002) !== 0;
  } catch {
    return false;
  }
}

/**
 * Creates the data directory (and its parents) and makes sure it is no looser than DATA_DIR_MODE. A catalog kept
 * straight in a shared folder such as /tmp leaves that folder as it is: tightening it would lock every other user
 * and service out of it.
 */
export function prepareDataDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
  if (isSharedFolder(dir)) return;
  tighten(dir, DATA_DIR_MODE);
}

/** Creates the catalog file owner-only before SQLite opens it (SQLite would use 0644 less the umask). */
export function prepareCatalogFile(path: string): void {
  if (modeOf(path) === undefined) {
    try {
      closeSync(openSync(path, 'wx', CATALOG_FILE_MODE));
      // The umask could only have removed bits; put back exactly owner read-write.
      chmodSync(path, CATALOG_FILE_MODE);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  tightenCatalogFiles(path);
}

/** The catalog and the SQLite files next to it, made no looser than CATALOG_FILE_MODE. */
export function tightenCatalogFiles(path: string): void {
  for (const suffix of ['', ...CATALOG_COMPANIONS]) tighten(`${path}${suffix}`, CATALOG_FILE_MODE);
}
