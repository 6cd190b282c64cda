// Runs parse tasks on a worker pool (or inline for tiny jobs), keeping a bounded number in flight.
import { Piscina } from 'piscina';
import type { ParseResult, ParseTask } from './parse-task.ts';

export interface TaskRunner {
  run(task: ParseTask): Promise<ParseResult>;
  close(): Promise<void>;
}

/** Below this many tasks, starting worker threads costs more than it saves. */
const INLINE_BELOW = 8;

export function createTaskRunner(workers: number, expectedTasks: number): TaskRunner {
  if (workers <= 0 || expectedTasks < INLINE_BELOW) {
    // Loaded only here: with a worker pool, the main thread never needs the extractors or sharp.
    const inline = import('./parse-task.ts');
    return { run: async (task) => (await inline).parseTask(task), close: async () => {} };
  }
  const pool = new Piscina({
    filename: new URL('./worker.ts', import.meta.url).href,
    minThreads: 1,
    maxThreads: workers,
    idleTimeout: 1000,
    // Bounded: the scanner never has more than a few tasks per worker outstanding.
    // Much of a task is I/O and libvips work off the worker's thread, so each worker keeps several tasks going.
    concurrentTasksPerWorker: 4,
    maxQueue: workers * 16,
    // Parsing needs little JavaScript heap; a small young generation keeps each worker's resident memory down.
    resourceLimits: { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 256 },
  });
  return {
    run: (task) => pool.run(task) as Promise<ParseResult>,
    close: () => pool.destroy(),
  };
}

/** Maps items through `work` with at most `limit` running at once, delivering results in completion order. */
export async function forEachLimited<T, R>(items: Iterable<T>, limit: number, work: (item: T) => Promise<R>, onResult: (item: T, result: R) => Promise<void> | void): Promise<void> {
  const running = new Set<Promise<void>>();
  for (const item of items) {
    const p: Promise<void> = work(item).then((r) => onResult(item, r)).finally(() => running.delete(p));
    running.add(p);
    if (running.size >= limit) await Promise.race(running);
  }
  await Promise.all(running);
}
