// Replacing a book file without ever leaving a half-written one: the new file is built beside the original, synced,
// checked, and renamed over it in one step. Until that rename the original is not touched; after a failure it is
// exactly as it was and the temporary file is gone.
import { randomBytes } from 'node:crypto';
import { chmod, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Stats } from 'node:fs';
import { syncDirectory } from '../../file-writes.ts';
import { WriteBackError, type WriteBackHooks } from './types.ts';

/** A hidden name in the same folder (same file system, so the rename is atomic); scans skip dot files. */
export function tempPathFor(original: string): string {
  return join(dirname(original), `.${basename(original)}.bindery-${randomBytes(6).toString('hex')}.tmp`);
}

function sameFile(a: Stats, b: Stats): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino;
}

export interface ReplaceSteps {
  /** Writes the complete new file at `tempPath` (created exclusively, synced before returning). */
  produce(tempPath: string): Promise<void>;
  /** Throws when the new file is not right. */
  verify(tempPath: string): Promise<void>;
  hooks?: WriteBackHooks;
}

export async function replaceFileAtomically(original: string, before: Stats, steps: ReplaceSteps): Promise<void> {
  const tempPath = tempPathFor(original);
  try {
    await steps.produce(tempPath);
    await chmod(tempPath, before.mode & 0o7777);
    await steps.hooks?.afterTempWritten?.(tempPath);
    await steps.verify(tempPath);
    await steps.hooks?.beforeRename?.(tempPath);
    const now = await stat(original);
    if (!sameFile(before, now)) throw new WriteBackError('CONFLICT', 'the file changed on disk while its metadata was being written; nothing was replaced');
    await rename(tempPath, original);
  } catch (error) {
    await unlink(tempPath).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dirname(original));
}
