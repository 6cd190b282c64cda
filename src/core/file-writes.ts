// Files written by rename: one writer at a time per path (a content replacement and a metadata write-back racing on
// one book must not interleave their renames), and the folder synced once the rename has happened.
import { open } from 'node:fs/promises';

const inFlight = new Map<string, Promise<unknown>>();

/** Runs `work` once every earlier write to `path` has settled, whatever its outcome. */
export async function oneWriteAtATime<T>(path: string, work: () => Promise<T>): Promise<T> {
  const previous = inFlight.get(path) ?? Promise.resolve();
  const run = previous.catch(() => undefined).then(work);
  const settled = run.catch(() => undefined);
  inFlight.set(path, settled);
  try {
    return await run;
  } finally {
    if (inFlight.get(path) === settled) inFlight.delete(path);
  }
}

/** Flushes a folder's entries (a rename into it); file systems that cannot sync a folder are let be. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => undefined);
  try {
    await handle?.sync();
  } catch {
    // Not every file system syncs a directory; the rename itself has happened.
  } finally {
    await handle?.close();
  }
}
