// How a running `bindery serve` marks the data directory it uses: a small JSON file (`bindery-serve.pid`) naming the
// process, its host and boot. Commands that must not run beside the daemon (restore) check it; a file left by a
// daemon that died (kill -9, power loss) names a process that no longer runs and is ignored.
import { readFileSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { currentOwner, ownerAlive, type Owner } from './process-owner.ts';

export interface DaemonPresence extends Owner {
  startedAt: string;
  port: number | null;
}

export function presenceFile(dataDir: string): string {
  return join(dataDir, 'bindery-serve.pid');
}

/** Marks the data directory as used by this process; the returned function removes the mark (if still ours). */
export function markDaemonPresence(dataDir: string, port: number | null): () => void {
  const path = presenceFile(dataDir);
  const presence: DaemonPresence = { ...currentOwner(), startedAt: new Date().toISOString(), port };
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(presence)}\n`);
  renameSync(tmp, path);
  return () => {
    if (runningDaemon(dataDir)?.pid === process.pid) rmSync(path, { force: true });
  };
}

/** The daemon using the data directory now, if any. */
export function runningDaemon(dataDir: string): DaemonPresence | undefined {
  let presence: Partial<DaemonPresence>;
  try {
    presence = JSON.parse(readFileSync(presenceFile(dataDir), 'utf8')) as Partial<DaemonPresence>;
  } catch {
    return undefined;
  }
  return ownerAlive(presence) ? (presence as DaemonPresence) : undefined;
}
