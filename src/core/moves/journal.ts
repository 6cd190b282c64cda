// The move journal in the catalog: who runs a batch, and where each of its files stands.
import type { Selectable } from 'kysely';
import type { Owner } from '../process-owner.ts';
import type { MoveJournalTable } from '../store/db-types.ts';
import type { Liveness } from '../store/liveness.ts';
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

export { currentOwner, type Owner } from '../process-owner.ts';

/** Batches this process is running right now; recovery never touches them. */
export const activeBatches = new Set<string>();

export type OwnerStatus = 'running' | 'dead';

/**
 * Whether the work recorded under `key` (a batch id) by `ownerJson` is still under way: this process knows its own work;
 * another process's work runs while that process does, on whichever machine.
 */
export async function ownerStatus(liveness: Liveness, ownerJson: string, key: string): Promise<OwnerStatus> {
  let owner: Partial<Owner>;
  try {
    owner = JSON.parse(ownerJson) as Partial<Owner>;
  } catch {
    return 'dead';
  }
  if (liveness.isThisProcess(owner)) return activeBatches.has(key) ? 'running' : 'dead';
  return (await liveness.alive(owner)) ? 'running' : 'dead';
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

/** Whether any move is unfinished (one indexed look; what recovery costs when there is nothing to recover). */
export async function hasOpenRows(db: Db): Promise<boolean> {
  return (await db.selectFrom('move_journal').select('id').where('closed_at', 'is', null).limit(1).executeTakeFirst()) !== undefined;
}

export async function openRows(db: Db): Promise<JournalRow[]> {
  return db.selectFrom('move_journal').selectAll().where('closed_at', 'is', null).orderBy('batch_id').orderBy('seq').execute();
}

/** Forgets closed journal rows older than `days`. */
export async function pruneJournal(db: Db, days = 30): Promise<void> {
  const cutoff = new Date(Date.now() - days * 86_400_000).toISOString();
  await db.deleteFrom('move_journal').where('closed_at', 'is not', null).where('closed_at', '<', cutoff).execute();
}
