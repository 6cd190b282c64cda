// Which scheduled backups to keep: the newest of each of the last N days that have one, and the newest of each of the
// last M weeks (Monday to Sunday, UTC) that have one. Everything else of the schedule's is deleted; backups made by
// hand (`bindery backup`) are never touched.
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { scheduledBackupTime } from './backup-format.ts';

export interface Retention {
  keepDaily: number;
  keepWeekly: number;
}

const DAY_MS = 86_400_000;

function dayKey(at: Date): number {
  return Math.floor(at.getTime() / DAY_MS);
}

/** Weeks counted from Monday 1970-01-05. */
function weekKey(at: Date): number {
  return Math.floor((dayKey(at) - 4) / 7);
}

function newestPerPeriod(backups: { name: string; at: Date }[], key: (at: Date) => number, count: number): string[] {
  const kept: string[] = [];
  let lastKey: number | undefined;
  for (const backup of backups) {
    if (kept.length >= count) break;
    const k = key(backup.at);
    if (k === lastKey) continue;
    lastKey = k;
    kept.push(backup.name);
  }
  return kept;
}

/** The file names to delete among `names` (other files are ignored). */
export function expiredBackups(names: string[], retention: Retention): string[] {
  const backups = names
    .map((name) => ({ name, at: scheduledBackupTime(name) }))
    .filter((b): b is { name: string; at: Date } => b.at !== undefined)
    .sort((a, b) => b.at.getTime() - a.at.getTime());
  const keep = new Set([...newestPerPeriod(backups, dayKey, retention.keepDaily), ...newestPerPeriod(backups, weekKey, retention.keepWeekly)]);
  // The newest one always stays, whatever the settings say.
  if (backups[0]) keep.add(backups[0].name);
  return backups.filter((b) => !keep.has(b.name)).map((b) => b.name);
}

export async function applyRetention(dir: string, retention: Retention): Promise<string[]> {
  const expired = expiredBackups(await readdir(dir), retention);
  for (const name of expired) await rm(join(dir, name), { force: true });
  return expired;
}
