// Store.readAside on SQLite: one worker thread with its own read-only connection, started on first use and ended after
// a while unused (an idle daemon keeps no thread, heap or page cache for it).
import type { ReadAsideTask } from './read-aside-worker.ts';
import type { SqlRow, SqlValue } from './sql-exec.ts';
import { StoreError } from './store.ts';
import { lazyPool } from '../worker-pool.ts';

/** How long the thread lives without work; a client paging through feeds after a change reuses it. */
export const READ_ASIDE_IDLE_MS = 30_000;

export interface ReadAside {
  read(sql: string, params?: readonly SqlValue[]): Promise<SqlRow[]>;
  /** Threads running now (0 or 1), for tests and benchmarks. */
  threads(): number;
  close(): Promise<void>;
}

const registered = new WeakMap<object, ReadAside>();

/** Remembers which store `aside` serves, for readAsideThreads. */
export function registerReadAside<S extends object>(store: S, aside: ReadAside): S {
  registered.set(store, aside);
  return store;
}

/** Threads the store's readAside runs now (0 on PostgreSQL and for an in-memory catalog), for tests and benchmarks. */
export function readAsideThreads(store: object): number {
  return registered.get(store)?.threads() ?? 0;
}

export function sqliteReadAside(path: string, options: { busyTimeoutMs: number; idleMs?: number }): ReadAside {
  let closed = false;
  const pool = lazyPool({
    filename: new URL('./read-aside-worker.ts', import.meta.url).href,
    workerData: { path, busyTimeoutMs: options.busyTimeoutMs },
    minThreads: 0,
    maxThreads: 1,
    // An idle thread is unreferenced by the pool (a command still exits) and ends after this long without work.
    idleTimeout: options.idleMs ?? READ_ASIDE_IDLE_MS,
    // Its answers are a count, a page of rows or one text of ids: a small heap is plenty.
    resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 128 },
    recordTiming: false,
  });
  return {
    async read(sql, params = []) {
      if (closed) throw new StoreError('the catalog is closed');
      const task: ReadAsideTask = { sql, params };
      try {
        return (await (await pool.started()).run(task)) as SqlRow[];
      } catch (error) {
        throw new StoreError(`reading the catalog aside failed: ${(error as Error).message}`, { cause: error });
      }
    },
    threads: () => pool.current()?.threads.length ?? 0,
    async close() {
      closed = true;
      await pool.destroy();
    },
  };
}
