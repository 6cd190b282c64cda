// Writes made through a second connection to the catalog, as another process (the CLI, another replica) makes them.
import { expect, vi } from 'vitest';
import { sameGeneration } from '../../src/core/store/snapshot.ts';
import type { Store } from '../../src/core/store/store.ts';

/**
 * Runs `write` (through another Store) and returns once `watcher` has heard of it: at once on SQLite (the file's data
 * version moves), a moment after the commit on PostgreSQL (its announcement arrives on the LISTEN connection).
 */
export async function writtenElsewhere(watcher: Store, write: () => Promise<unknown>): Promise<void> {
  const before = watcher.generation();
  await write();
  await vi.waitFor(() => expect(sameGeneration(before, watcher.generation())).toBe(false));
}
