// The move journal in the catalog: who runs a batch, and where each of its files stands.
import type { Selectable } from 'kysely';
import { readFileSync } from 'node:fs';
import { hostname, uptime } from 'node:os';
import type { MoveJournalTable } from '../store/db-types.ts';
import type { Db } from '../store/store.ts';
import { nowIso } from '../time.ts';

export type JournalRow = Selectable<MoveJournalTable>;

/**
 * planned: recorded, the file may be anywhere between its old place and a temporary copy;
 * copied: a verified copy sits at temp_path (cross-device moves only);
 * committed: the file is at to_path (for a copy the source still exists);
 * done: the catalog points at to_path (sources of copies may still need removing);
 * rolling_back / rolled_back: the move is being / was undone.
 */
export type JournalState = 'planned' | 'copied' | 'committed' | 'done' | 'rolling_back' | 'rolled_back';
export type EntryKind = 'file' | 'folder' | 'sidecar';

export interface Owner {
  host: string;
  boot: string;
  pid: number;
}

let bootId: string | undefined;

/** Identifies this boot of this machine, so a pid recorded before a reboot is never mistaken for a live process. */
function currentBoot(): string {
  if (bootId === undefined) {
    try {
      bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      // Boot time to the minute: stable for the life of the machine's uptime on platforms without a boot id.
      bootId = `t${Math.round((Date.now() / 1000 - uptime()) / 60)}`;
    }
  }
  return bootId;
}

export function currentOwner(): Owner {
  return { host: hostname(), boot: currentBoot(), pid: process.pid };
}

/** Batches this process is running right now; recovery never touches them. */
export const activeBatches = new Set<string>();

export type OwnerStatus = 'running' | 'dead';

export function ownerStatus(ownerJson: string, batchId: string): OwnerStatus {
  let owner: Partial<Owner>;
  try {
    owner = JSON.parse(ownerJson) as Partial<Owner>;
  } catch {
    return 'dead';
  }
  const me = currentOwner();
  // A catalog is only ever used from one machine (SQLite's WAL needs shared memory), so a batch recorded under another
  // host name comes from an earlier incarnation of this one (a re-created container): its process is gone.
  if (owner.host !== me.host || owner.boot !== me.boot) return 'dead';
  if (owner.pid === me.pid) return activeBatches.has(batchId) ? 'running' : 'dead';
  if (typeof owner.pid !== 'number') return 'dead';
  try {
    process.kill(owner.pid, 0);
    return 'running';
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM' ? 'running' : 'dead';
  }
}

export async function setState(db: Db, ids: number[], state: JournalState, extra: Partial<Pick<JournalRow, 'method' | 'temp_dev' | 'temp_ino' | 'error' | 'closed_at'>> = {}): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('move_journal').set({ state, updated_at: nowIso(), ...extra }).where('id', 'in', ids).execute();
}

export async function closeRows(db: Db, ids: number[], error?: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('move_journal')
    .set({ closed_at: nowIso(), updated_at: nowIso(), ...(error !== undefined ? { error } : {}) })
    .where('id', 'in', ids)
    .execute();
}

export async function openRows(db: Db): Promise<JournalRow[]> {
  return db.selectFrom('move_journal').selectAll().where('closed_at', 'is', null).orderBy('batch_id').orderBy('seq').execute();
}

/** Forgets closed journal rows older than `days`. */
export async function pruneJournal(db: Db, days = 30): Promise<void> {
  const cutoff = new Date(Date.now() - days * 86_400_000).toISOString();
  await db.deleteFrom('move_journal').where('closed_at', 'is not', null).where('closed_at', '<', cutoff).execute();
}
