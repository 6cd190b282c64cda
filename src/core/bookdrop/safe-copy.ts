// Putting a file into a library without ever putting anything at risk: copy to a hidden partial name in the target
// folder, flush it, check it byte for byte against what was read, then give it a free name (a hard link, which
// cannot replace anything). The original is never touched here; the caller removes it once the catalog has the copy.
import { constants } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { errorCode, nodeMoveFs, type MoveFs } from '../moves/fs.ts';
import { withCounter } from '../moves/plan.ts';
import { RegistrationLost } from '../store/liveness.ts';

/** The filesystem steps of an import, each one a seam where tests inject failures. */
export interface ImportFs extends Pick<MoveFs, 'lstat' | 'link' | 'rename' | 'unlink' | 'mkdirp' | 'fsyncDir' | 'fingerprint'> {
  /** Copies a file to a path that must not exist, keeping its modification time (not yet flushed). */
  copy(from: string, to: string): Promise<void>;
  /** Flushes a file's data to disk. */
  flush(path: string): Promise<void>;
}

export const nodeImportFs: ImportFs = {
  lstat: nodeMoveFs.lstat,
  link: nodeMoveFs.link,
  rename: nodeMoveFs.rename,
  unlink: nodeMoveFs.unlink,
  mkdirp: nodeMoveFs.mkdirp,
  fsyncDir: nodeMoveFs.fsyncDir,
  fingerprint: nodeMoveFs.fingerprint,
  copy: async (from, to) => {
    await fsp.copyFile(from, to, constants.COPYFILE_EXCL);
    const info = await fsp.stat(from);
    await fsp.utimes(to, info.atime, info.mtime);
  },
  flush: async (path) => {
    const handle = await fsp.open(path, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
};

export type ImportStep = 'read' | 'copy' | 'flush' | 'verify' | 'place' | 'record';

const STEP_LABEL: Record<ImportStep, string> = {
  read: 'reading the file failed',
  copy: 'copy failed',
  flush: 'flushing the copy to disk failed',
  verify: 'verification failed',
  place: 'placing the copy failed',
  record: 'recording the book in the catalog failed',
};

/** A step of an import that failed; the original is still where it was. */
export class ImportStepError extends Error {
  override name = 'ImportStepError';
  readonly step: ImportStep;
  constructor(step: ImportStep, reason: string, options?: { cause?: unknown }) {
    super(`${STEP_LABEL[step]}: ${reason}`, options);
    this.step = step;
  }
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs one step, naming it in the error when it fails (an import that lost its claim stops as it is, unnamed). */
export async function step<T>(name: ImportStep, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ImportStepError || error instanceof RegistrationLost) throw error;
    throw new ImportStepError(name, reasonOf(error), { cause: error });
  }
}

export interface Expected {
  size: number;
  /** SHA-256 of the content, hex. */
  hash: string;
}

/**
 * Copies `source` into `dir` under the hidden partial name `partial` (see `partialName`; an import records it first), flushes
 * and verifies it. Returns the partial file's path; on any failure nothing of the copy is left behind.
 */
export async function copyVerified(fs: ImportFs, source: string, dir: string, expected: Expected, partial: string): Promise<string> {
  await step('copy', () => fs.mkdirp(dir));
  try {
    await step('copy', () => fs.copy(source, partial));
    await step('flush', () => fs.flush(partial));
    const copy = await step('verify', () => fs.fingerprint(partial));
    if (copy.size !== expected.size || copy.hash !== expected.hash) {
      throw new ImportStepError('verify', `the copy (${copy.size} bytes) differs from the original (${expected.size} bytes)`);
    }
    return partial;
  } catch (error) {
    await fs.unlink(partial).catch(() => undefined);
    throw error;
  }
}

/** Link errors that mean "this filesystem has no hard links". */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK']);
const MAX_COUNTER = 10_000;

/**
 * Gives the partial file its final name in `dir`: `name`, else `name (2)`, `name (3)`... never replacing a file or
 * folder on disk, nor a name the catalog already uses (`isTaken`). The partial name is gone afterwards.
 * `beforePlacing` learns each name before it is taken (an import records it, so a kill right after is recoverable).
 */
export async function placeUnderFreeName(
  fs: ImportFs,
  partial: string,
  dir: string,
  name: string,
  isTaken: (fileName: string) => Promise<boolean>,
  beforePlacing?: (target: string) => Promise<void>,
): Promise<string> {
  for (let n = 1; n <= MAX_COUNTER; n++) {
    const candidate = withCounter(name, n, false);
    if (await isTaken(candidate)) continue;
    const target = join(dir, candidate);
    await beforePlacing?.(target);
    try {
      await fs.link(partial, target);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'EEXIST') continue;
      if (code === undefined || !NO_HARD_LINKS.has(code)) throw new ImportStepError('place', reasonOf(error), { cause: error });
      // No hard links here: a rename after checking the name is free (a race could still lose to another writer).
      if (await fs.lstat(target)) continue;
      await step('place', () => fs.rename(partial, target));
      await fs.fsyncDir(dir);
      return target;
    }
    await fs.unlink(partial).catch(() => undefined);
    await fs.fsyncDir(dir);
    return target;
  }
  throw new ImportStepError('place', `no free name for ${name} in ${dir}`);
}

/** `a/b/c.epub` → `{ subPath: 'a/b', fileName: 'c.epub' }`; undefined for anything that could leave the folder. */
export function splitRelativePath(rel: string): { subPath: string; fileName: string } | undefined {
  const parts = rel.replace(/^\/+/, '').split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\0') || p.includes('\\'))) return undefined;
  const fileName = parts.pop();
  if (fileName === undefined) return undefined;
  return { subPath: parts.join('/'), fileName };
}
