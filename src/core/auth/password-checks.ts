// Password checks with memory: the answer for a credential is shared by every request that asks while it is being
// worked out (64 reader connections opening at once cost one bcrypt, not 64), kept for a while when right (readers
// send their password with every request) and for a short while when wrong (a client retrying the same wrong
// password is not guessing). Credentials are remembered as a SHA-256 digest salted with a per-process key, together with
// the stored hash, never in the clear; a changed password changes the hash, so the old answer no longer applies.
import { AUTH_FAILURE_WINDOW_MS } from './login-rate-limit.ts';
import { hash as digest, randomBytes } from 'node:crypto';
import { verifyPassword } from './password-hashing.ts';

export interface CheckOutcome {
  matches: boolean;
  /** True when this call did the bcrypt work; false when the answer was remembered or shared with a running check. */
  fresh: boolean;
}

export interface PasswordChecksOptions {
  acceptTtlMs?: number;
  rejectTtlMs?: number;
  /** Remembered answers of each kind; the oldest is dropped when full. */
  max?: number;
  now?: () => number;
  verify?: (password: string, hash: string) => Promise<boolean>;
}

class ExpiringSet {
  readonly #entries = new Map<string, number>();
  readonly #max: number;
  readonly #now: () => number;
  constructor(max: number, now: () => number) {
    this.#max = max;
    this.#now = now;
  }

  has(key: string): boolean {
    const expires = this.#entries.get(key);
    if (expires === undefined) return false;
    if (expires > this.#now()) return true;
    this.#entries.delete(key);
    return false;
  }

  add(key: string, ttlMs: number): void {
    this.#entries.delete(key);
    if (this.#entries.size >= this.#max) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, this.#now() + ttlMs);
  }
}

export class PasswordChecks {
  readonly #key = randomBytes(32).toString('base64');
  readonly #accepted: ExpiringSet;
  readonly #rejected: ExpiringSet;
  readonly #running = new Map<string, Promise<boolean>>();
  readonly #acceptTtlMs: number;
  readonly #rejectTtlMs: number;
  readonly #verify: (password: string, hash: string) => Promise<boolean>;

  constructor(options: PasswordChecksOptions = {}) {
    const now = options.now ?? Date.now;
    const max = options.max ?? 1000;
    this.#accepted = new ExpiringSet(max, now);
    this.#rejected = new ExpiringSet(max, now);
    this.#acceptTtlMs = options.acceptTtlMs ?? 10 * 60 * 1000;
    // A device retrying a stale password counts once per failure window, not once a minute.
    this.#rejectTtlMs = options.rejectTtlMs ?? AUTH_FAILURE_WINDOW_MS;
    this.#verify = options.verify ?? verifyPassword;
  }

  // The name is part of it: names that do not exist share one stand-in hash, and must not share its answers (an
  // instant answer would tell them apart from names that do). Salted with the process's random key, so what is kept
  // here says nothing of the passwords; one SHA-256 of the joined text (an HMAC object per request cost ~0.03 ms, on
  // every request of a reader app).
  #fingerprint(name: string, password: string, hash: string): string {
    return digest('sha256', `${this.#key}\0${name}\0${hash}\0${password}`, 'base64');
  }

  /**
   * Whether `password`, presented for account `name`, matches the bcrypt `hash`. Throws PasswordBusyError when the
   * pool refuses new work.
   */
  async check(name: string, password: string, hash: string): Promise<CheckOutcome> {
    const key = this.#fingerprint(name, password, hash);
    if (this.#accepted.has(key)) return { matches: true, fresh: false };
    if (this.#rejected.has(key)) return { matches: false, fresh: false };
    const running = this.#running.get(key);
    if (running) return { matches: await running, fresh: false };
    const check = this.#verify(password, hash);
    this.#running.set(key, check);
    try {
      const matches = await check;
      if (matches) this.#accepted.add(key, this.#acceptTtlMs);
      else this.#rejected.add(key, this.#rejectTtlMs);
      return { matches, fresh: true };
    } finally {
      this.#running.delete(key);
    }
  }
}

/** The process's checks: every sign-in path (login, HTTP Basic, KOReader) shares them. */
export const passwordChecks = new PasswordChecks();
