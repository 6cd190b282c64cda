// Background work that follows the catalog: run once at start, then again whenever the catalog has changed since the
// last run began (a write of this process, another process or a replica), one run at a time.
import type { Generation, GenerationSource } from '../core/store/snapshot.ts';
import { sameGeneration } from '../core/store/snapshot.ts';

export interface CatalogChangeWatch {
  /** Stops looking and waits for a run under way. */
  stop(): Promise<void>;
}

/**
 * Calls `run` now and, every `everyMs`, when the catalog's generation moved since the last call began; a run still
 * going skips the look. `run` is given a signal, aborted by `stop()`, to leave early; its failure goes to `onError`,
 * and the next change runs it again.
 */
export function watchCatalogChanges(source: Pick<GenerationSource, 'generation'>, everyMs: number, run: (stop: AbortSignal) => Promise<unknown>, onError: (error: unknown) => void): CatalogChangeWatch {
  const stopping = new AbortController();
  let running: Promise<unknown> | undefined;
  let seen: Generation | undefined;
  const look = (): void => {
    const generation = source.generation();
    if (stopping.signal.aborted || running || (seen && sameGeneration(seen, generation))) return;
    seen = generation;
    running = run(stopping.signal)
      .catch(onError)
      .finally(() => (running = undefined));
  };
  look();
  const timer = setInterval(look, everyMs);
  timer.unref();
  return {
    async stop() {
      stopping.abort();
      clearInterval(timer);
      await running;
    },
  };
}
