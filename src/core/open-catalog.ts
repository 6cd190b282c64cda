// Opening the catalog for a command or the daemon: the store itself, then whatever a killed process left half done
// on disk put right before anything else reads the catalog. Every command passes here, so none of them (a scan, an
// import) can mistake a half-moved file for a new one.
import type { RecoveryReport } from './moves/recover.ts';
import { openStore, type Store } from './store/store.ts';

export interface OpenedCatalog {
  store: Store;
  /** What recovery of interrupted file moves did (undefined: there was nothing to recover). */
  recoveredMoves: RecoveryReport | undefined;
}

export interface OpenCatalogOptions {
  /** One line per book whose interrupted move was completed or rolled back. */
  log?: (message: string) => void;
  /** PostgreSQL: connections this process holds at most (the `databasePoolSize` setting). */
  poolSize?: number;
  /** False for `serve`: there recovery is a singleton job, run by the one process holding its lease. */
  recoverMoves?: boolean;
}

export async function openCatalog(path: string, options: OpenCatalogOptions = {}): Promise<OpenedCatalog> {
  const store = await openStore(path, options.poolSize === undefined ? {} : { poolSize: options.poolSize });
  if (options.recoverMoves === false) return { store, recoveredMoves: undefined };
  try {
    // The usual case, no open journal row, costs one indexed query and loads nothing more.
    const { hasOpenRows } = await import('./moves/journal.ts');
    if (!(await hasOpenRows(store.db))) return { store, recoveredMoves: undefined };
    const { recoverMoves } = await import('./moves/recover.ts');
    return { store, recoveredMoves: await recoverMoves(store, options.log ? { log: options.log } : {}) };
  } catch (error) {
    await store.close();
    throw error;
  }
}
