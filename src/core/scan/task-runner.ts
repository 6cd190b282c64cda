// Runs a scan's walks and parse tasks on a worker pool (or inline), keeping a bounded number in flight.
import type { ParseResult, ParseTask, parseTask } from './parse-task.ts';
import type { WalkResult } from './walk.ts';
import type { WalkTask } from './worker.ts';
import { lazyPool } from '../worker-pool.ts';

export interface TaskRunner {
  /** The whole root, or only the given folders below it. */
  walk(root: string, folders?: string[]): Promise<WalkResult>;
  parse(task: ParseTask): Promise<ParseResult>;
  close(): Promise<void>;
}

/** With `workers` 0 everything runs on the caller's thread; otherwise on a pool started on first use. */
export function createTaskRunner(workers: number): TaskRunner {
  if (workers <= 0) {
    // Loaded only here: with a worker pool, the main thread never needs the extractors or sharp.
    let inline: Promise<{ parseTask: typeof parseTask }> | undefined;
    return {
      walk: async (root, folders) => (await import('./walk.ts')).walkRootSync(root, folders),
      parse: async (task) => (await (inline ??= import('./parse-task.ts'))).parseTask(task),
      close: async () => {},
    };
  }
  const pool = lazyPool({
    filename: new URL('./worker.ts', import.meta.url).href,
    minThreads: 1,
    maxThreads: workers,
    idleTimeout: 1000,
    // Bounded: the scanner never has more than a few tasks per worker outstanding.
    // Much of a task is I/O and libvips work off the worker's thread, so each worker keeps several tasks going.
    concurrentTasksPerWorker: 8,
    maxQueue: workers * 16,
    // Parsing needs little JavaScript heap; a small young generation keeps each worker's resident memory down.
    resourceLimits: { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 256 },
    // Nobody reads the pool's run and wait time histograms.
    recordTiming: false,
  });
  return {
    walk: async (root, folders) => (await pool.started()).run({ walkRoot: root, ...(folders ? { folders } : {}) } satisfies WalkTask) as Promise<WalkResult>,
    parse: async (task) => (await pool.started()).run(task) as Promise<ParseResult>,
    close: () => pool.destroy(),
  };
}

/**
 * Maps items through `work` with at most `limit` running at once, delivering results in completion order. Items
 * are taken from the iterable only as slots free up. On the first error no new item starts; the ones running are
 * waited for, and the error is thrown.
 */
export async function forEachLimited<T, R>(items: Iterable<T>, limit: number, work: (item: T) => Promise<R>, onResult: (item: T, result: R) => Promise<void> | void): Promise<void> {
  const running = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  for (const item of items) {
    if (failure) break;
    const p: Promise<void> = work(item)
      .then((r) => (failure ? undefined : onResult(item, r)))
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => running.delete(p));
    running.add(p);
    if (running.size >= limit) await Promise.race(running);
  }
  await Promise.all(running);
  if (failure) throw failure.error;
}
