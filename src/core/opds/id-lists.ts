// Ordered lists of book ids (every visible book of a feed, in the feed's order), each kept until the catalog changes:
// a reader paging through a feed gets each page as a slice of one list instead of one sort of the whole feed per page.
import { SharedLoads, sameGeneration, type Generation, type GenerationSource } from '../store/snapshot.ts';

/** Ids as 32-bit integers (4 bytes each) when they all fit, else as doubles. */
export type IdList = Int32Array | Float64Array;

/** Turns parsed ids into the compact form. */
export function idList(ids: readonly number[]): IdList {
  for (const id of ids) if (!(id >= -2147483648 && id <= 2147483647)) return Float64Array.from(ids);
  return Int32Array.from(ids);
}

interface Kept {
  generation: Generation;
  expires: number;
  ids: IdList;
}

/**
 * Lists kept by key, within a budget of ids in all (the least recently used dropped first; the newest list is always
 * kept). A list that may depend on the time of day (a magic shelf of books added in the last week) is also given a
 * maximum age.
 */
export class IdListMemo {
  private readonly lists = new Map<string, Kept>();
  private held = 0;
  private readonly loads = new SharedLoads<string, IdList>();
  private readonly budget: number;

  constructor(budget: number) {
    this.budget = budget;
  }

  private drop(key: string): void {
    const kept = this.lists.get(key);
    if (!kept) return;
    this.lists.delete(key);
    this.held -= kept.ids.length;
  }

  /**
   * The list for `key` as of the catalog now, loaded by `load` when none is kept (or the one kept is older than
   * `maxAgeMs`). The generation is read before loading, so a change made meanwhile shows as a change next time; what
   * is read while a write is open in this process is not kept.
   */
  async get(source: GenerationSource, key: string, load: () => Promise<IdList>, maxAgeMs = Infinity): Promise<IdList> {
    const generation = source.generation();
    const now = Date.now();
    const kept = this.lists.get(key);
    if (kept) {
      this.drop(key);
      if (kept.expires > now && sameGeneration(kept.generation, generation)) {
        this.lists.set(key, kept);
        this.held += kept.ids.length;
        return kept.ids;
      }
    }
    // Requests asking for the list while it loads share that load.
    const ids = await this.loads.share(key, generation, load);
    if (source.writeInFlight() || this.lists.get(key)?.ids === ids) return ids;
    this.drop(key);
    for (const [oldest] of this.lists) {
      if (this.held + ids.length <= this.budget) break;
      this.drop(oldest);
    }
    this.lists.set(key, { generation, expires: now + maxAgeMs, ids });
    this.held += ids.length;
    return ids;
  }

  /** Lists and ids held (tests, figures). */
  get size(): { lists: number; ids: number } {
    return { lists: this.lists.size, ids: this.held };
  }
}
