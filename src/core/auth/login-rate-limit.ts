// Failed-attempt counters for every sign-in path: at most `maxFailures` per key inside a fixed window that opens
// with the first failure and is not extended by later ones; a success clears the key. Pure: the clock is injected.

export interface FailureLimitOptions {
  maxFailures: number;
  windowMs: number;
  /** Keys tracked at once; the oldest window is dropped when full, so memory stays bounded. */
  maxKeys: number;
  now: () => number;
}

interface Window {
  failures: number;
  expiresAt: number;
}

export class FailureLimit {
  readonly #options: FailureLimitOptions;
  readonly #windows = new Map<string, Window>();

  constructor(options: FailureLimitOptions) {
    this.#options = options;
  }

  #live(key: string): Window | undefined {
    const window = this.#windows.get(key);
    if (window && window.expiresAt <= this.#options.now()) {
      this.#windows.delete(key);
      return undefined;
    }
    return window;
  }

  /** True once the key has used up its failures in the current window. */
  isBlocked(key: string): boolean {
    const window = this.#live(key);
    return window !== undefined && window.failures >= this.#options.maxFailures;
  }

  recordFailure(key: string): void {
    const window = this.#live(key);
    if (window) {
      window.failures += 1;
      return;
    }
    if (this.#windows.size >= this.#options.maxKeys) this.#evictOldest();
    this.#windows.set(key, { failures: 1, expiresAt: this.#options.now() + this.#options.windowMs });
  }

  reset(key: string): void {
    this.#windows.delete(key);
  }

  /** Number of keys currently held (expired ones may linger until touched or evicted). */
  get size(): number {
    return this.#windows.size;
  }

  #evictOldest(): void {
    const now = this.#options.now();
    for (const [key, window] of this.#windows) if (window.expiresAt <= now) this.#windows.delete(key);
    if (this.#windows.size < this.#options.maxKeys) return;
    // Map iteration follows insertion order, and a key is inserted when its window opens.
    const oldest = this.#windows.keys().next();
    if (!oldest.done) this.#windows.delete(oldest.value);
  }
}

export const MAX_AUTH_FAILURES = 5;
/**
 * Failures one client address may have across every name. Larger than a name's: a household or an office shares one
 * address (a phone with an old OPDS password must not lock everyone out of the web UI), while a flood of made-up
 * names still meets it after a few seconds.
 */
export const MAX_ADDRESS_FAILURES = 20;
export const AUTH_FAILURE_WINDOW_MS = 15 * 60 * 1000;

/** Where a credential was presented. Names are counted per channel: a web login name and an OPDS account name differ. */
export type SignInChannel = 'login' | 'refresh' | 'basic' | 'koreader';

/**
 * The one failed-attempt policy of every sign-in path (web login, token refresh, HTTP Basic for OPDS and Komga,
 * KOReader): failures counted per client address across every name and channel (20 per 15 minutes), and per
 * account name within a channel (Grimmory's 5 per 15 minutes). Either count used up refuses the attempt before any password
 * work. A success clears the count of its name (not of its address).
 */
export class SignInPolicy {
  // Apart, so a flood of made-up names cannot push an address's window out of a shared, bounded table.
  readonly #addresses: FailureLimit;
  readonly #names: FailureLimit;

  constructor(now: () => number = Date.now) {
    const options = { maxFailures: MAX_AUTH_FAILURES, windowMs: AUTH_FAILURE_WINDOW_MS, maxKeys: 10_000, now };
    this.#addresses = new FailureLimit({ ...options, maxFailures: MAX_ADDRESS_FAILURES });
    this.#names = new FailureLimit(options);
  }

  isBlocked(ip: string, channel: SignInChannel, name?: string): boolean {
    return this.#addresses.isBlocked(addressKey(ip)) || (name !== undefined && this.#names.isBlocked(nameKey(channel, name)));
  }

  recordFailure(ip: string, channel: SignInChannel, name?: string): void {
    this.#addresses.recordFailure(addressKey(ip));
    if (name !== undefined) this.#names.recordFailure(nameKey(channel, name));
  }

  /**
   * A success clears its name's count only: the address's window runs out on its own, or one working credential would
   * let its holder guess other names without end (19 guesses, one good sign-in, again).
   */
  recordSuccess(_ip: string, channel: SignInChannel, name?: string): void {
    if (name !== undefined) this.#names.reset(nameKey(channel, name));
  }
}

const addressKey = (ip: string): string => ip;
/** Names without case or surrounding blanks, as sign-in finds accounts. */
export const nameKey = (channel: SignInChannel, name: string): string => `${channel}:${name.trim().toLowerCase()}`;
