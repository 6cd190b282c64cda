// Failure windows in the catalog (table sign_in_failure), shared by every process serving it: replicas behind a load
// balancer count together, and a key cleared by one is cleared for all. A window opens with its key's first failure
// and closes `windowMs` later, however many failures follow; a closed window counts as none.
// The rows are bookkeeping, not catalog content (Store.bookkeeping): writing them empties no cache. What this process
// read is remembered until any process changes a row (the bookkeeping generation), so a client that signs in again and
// again, with nothing failing anywhere, is answered without a query.
import type { Generation } from '../store/snapshot.ts';
import { sameGeneration } from '../store/snapshot.ts';
import type { Bookkeeping } from '../store/store.ts';

export interface WindowKey<Scope extends string = string> {
  /** Counted apart: a flood of keys in one scope does not crowd out another's when the table is trimmed. */
  scope: Scope;
  key: string;
}

export interface FailureWindow {
  failures: number;
  expiresAt: number;
}

export interface FailureWindowsOptions {
  windowMs: number;
  now: () => number;
  /** Rows kept per scope at most; past it the oldest windows are dropped (as the in-memory counters did). */
  maxRowsPerScope?: number;
}

/** Every this many failures recorded by a process, and at its first, closed windows are deleted. */
const PRUNE_EVERY = 64;
const MAX_ROWS_PER_SCOPE = 100_000;
/** Keys remembered at most; the memory is emptied when full. */
const MAX_REMEMBERED = 10_000;

const RECORD = `insert into sign_in_failure (scope, key, failures, expires_at_ms) values (?, ?, 1, ?)
  on conflict (scope, key) do update set
    failures = case when sign_in_failure.expires_at_ms <= ? then 1 else sign_in_failure.failures + 1 end,
    expires_at_ms = case when sign_in_failure.expires_at_ms <= ? then excluded.expires_at_ms else sign_in_failure.expires_at_ms end
  returning failures, expires_at_ms`;
const PRUNE_CLOSED = 'delete from sign_in_failure where expires_at_ms <= ?';
const TRIM_SCOPE = `delete from sign_in_failure where scope = ? and expires_at_ms <= (
  select expires_at_ms from sign_in_failure where scope = ? order by expires_at_ms desc limit 1 offset ?)`;

interface Row {
  scope: string;
  key: string;
  failures: number;
  expires_at_ms: number;
}

const memoKey = ({ scope, key }: WindowKey): string => `${scope}\0${key}`;

export class FailureWindows {
  readonly #bookkeeping: Bookkeeping;
  readonly #windowMs: number;
  readonly #now: () => number;
  readonly #maxRowsPerScope: number;
  /** Rows as last read (null: none), valid while the bookkeeping generation is #seen. */
  readonly #known = new Map<string, FailureWindow | null>();
  #seen: Generation | undefined;
  /** Moves each time what this process remembered is forgotten (see `epoch`). */
  #epoch = 0;
  /** Reads under way, by generation and keys: requests arriving together share one query, answered in their order. */
  readonly #reading = new Map<string, Promise<(FailureWindow | null)[]>>();
  #recorded = 0;

  constructor(bookkeeping: Bookkeeping, options: FailureWindowsOptions) {
    this.#bookkeeping = bookkeeping;
    this.#windowMs = options.windowMs;
    this.#now = options.now;
    this.#maxRowsPerScope = options.maxRowsPerScope ?? MAX_ROWS_PER_SCOPE;
  }

  /** The generation now; what was remembered under another one is forgotten. */
  #current(): Generation {
    const generation = this.#bookkeeping.generation();
    if (!this.#seen || !sameGeneration(this.#seen, generation)) {
      this.#known.clear();
      this.#seen = generation;
      this.#epoch++;
    }
    return generation;
  }

  /**
   * A number that stays the same while no process changed any window: within it, a key's failures do not grow (only the
   * passing of time may close a window).
   */
  epoch(): number {
    this.#current();
    return this.#epoch;
  }

  #open(row: FailureWindow | null | undefined): FailureWindow | null | undefined {
    if (row && row.expiresAt <= this.#now()) return null;
    return row;
  }

  /** The open windows of the keys from memory alone (null: none); undefined when some key would need a query. */
  known(keys: readonly WindowKey[]): (FailureWindow | null)[] | undefined {
    this.#current();
    const out: (FailureWindow | null)[] = [];
    for (const key of keys) {
      const window = this.#open(this.#known.get(memoKey(key)));
      if (window === undefined) return undefined;
      out.push(window);
    }
    return out;
  }

  /** The open windows of the keys (null: none), in one query when memory does not have them all. */
  async read(keys: readonly WindowKey[]): Promise<(FailureWindow | null)[]> {
    const remembered = this.known(keys);
    if (remembered) return remembered;
    const generation = this.#current();
    const id = `${generation.dataVersion} ${generation.changes}\n${keys.map(memoKey).join('\n')}`;
    let reading = this.#reading.get(id);
    if (!reading) {
      reading = this.#query(keys, generation).finally(() => this.#reading.delete(id));
      this.#reading.set(id, reading);
    }
    return reading;
  }

  async #query(keys: readonly WindowKey[], generation: Generation): Promise<(FailureWindow | null)[]> {
    const where = keys.map(() => '(scope = ? and key = ?)').join(' or ');
    const rows = (await this.#bookkeeping.exec.all(
      `select scope, key, failures, expires_at_ms from sign_in_failure where ${where}`,
      keys.flatMap((k) => [k.scope, k.key]),
    )) as unknown as Row[];
    const found = new Map(rows.map((row) => [memoKey(row), { failures: row.failures, expiresAt: row.expires_at_ms }]));
    // Kept only if nothing changed meanwhile: the rows read may predate a change already counted.
    const keep = this.#seen !== undefined && sameGeneration(this.#seen, generation);
    if (keep && this.#known.size + keys.length > MAX_REMEMBERED) this.#known.clear();
    return keys.map((key) => {
      const window = found.get(memoKey(key)) ?? null;
      if (keep) this.#known.set(memoKey(key), window);
      return this.#open(window) ?? null;
    });
  }

  /** Counts a failure for each key (one statement per key, each atomic): a closed window reopens at 1. */
  async record(keys: readonly WindowKey[]): Promise<FailureWindow[]> {
    const now = this.#now();
    if (this.#recorded++ % PRUNE_EVERY === 0) await this.prune(keys.map((k) => k.scope));
    const out: FailureWindow[] = [];
    for (const { scope, key } of keys) {
      const row = (await this.#bookkeeping.exec.get(RECORD, [scope, key, now + this.#windowMs, now, now])) as unknown as Pick<Row, 'failures' | 'expires_at_ms'>;
      out.push({ failures: row.failures, expiresAt: row.expires_at_ms });
    }
    return out;
  }

  /** Ends the key's window; no statement when this process knows it has none. */
  async clear(key: WindowKey): Promise<void> {
    const window = this.known([key]);
    if (window && window[0] === null) return;
    await this.#bookkeeping.exec.run('delete from sign_in_failure where scope = ? and key = ?', [key.scope, key.key]);
  }

  /** Deletes closed windows, and in the given scopes the oldest windows past the bound. */
  async prune(scopes: readonly string[]): Promise<void> {
    await this.#bookkeeping.exec.run(PRUNE_CLOSED, [this.#now()]);
    for (const scope of new Set(scopes)) await this.#bookkeeping.exec.run(TRIM_SCOPE, [scope, scope, this.#maxRowsPerScope]);
  }
}
