// Failed-attempt counters for login and token refresh: at most `maxFailures` per key inside a fixed window that opens
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

/** Grimmory's limits: 5 failures per 15 minutes, for login (per IP and per username) and refresh (per IP). */
export interface AuthLimits {
  login: FailureLimit;
  refresh: FailureLimit;
}

export const MAX_AUTH_FAILURES = 5;
export const AUTH_FAILURE_WINDOW_MS = 15 * 60 * 1000;

export function createAuthLimits(now: () => number = Date.now): AuthLimits {
  const options = { maxFailures: MAX_AUTH_FAILURES, windowMs: AUTH_FAILURE_WINDOW_MS, maxKeys: 1000, now };
  return { login: new FailureLimit(options), refresh: new FailureLimit(options) };
}

export const loginIpKey = (ip: string): string => `ip:${ip}`;
export const loginUserKey = (username: string): string => `user:${username.trim().toLowerCase()}`;
