// The failed-attempt policy of every sign-in path: at most so many failures per key inside a fixed window that opens
// with the first failure and is not extended by later ones; a success clears its name's key. The counts are kept in
// the catalog (failure-windows.ts), so every replica serving it enforces the same limits. The clock is injected.
import type { Bookkeeping } from '../store/store.ts';
import { FailureWindows, type FailureWindow, type WindowKey } from './failure-windows.ts';

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
 * account name within a channel (Grimmory's 5 per 15 minutes), in the catalog, by every process together. Either count
 * used up refuses the attempt before any password work. A success clears the count of its name (not of its address).
 */
export class SignInPolicy {
  readonly #windows: FailureWindows;

  constructor(bookkeeping: Bookkeeping, now: () => number = Date.now) {
    this.#windows = new FailureWindows(bookkeeping, { windowMs: AUTH_FAILURE_WINDOW_MS, now });
  }

  async isBlocked(ip: string, channel: SignInChannel, name?: string): Promise<boolean> {
    const keys = keysOf(ip, channel, name);
    return usedUp(keys, await this.#windows.read(keys));
  }

  /** What isBlocked would answer, from this process's memory alone; undefined when that needs a query. */
  knownBlocked(ip: string, channel: SignInChannel, name?: string): boolean | undefined {
    const keys = keysOf(ip, channel, name);
    const windows = this.#windows.known(keys);
    return windows && usedUp(keys, windows);
  }

  async recordFailure(ip: string, channel: SignInChannel, name?: string): Promise<void> {
    await this.#windows.record(keysOf(ip, channel, name));
  }

  /**
   * A success clears its name's count only: the address's window runs out on its own, or one working credential would
   * let its holder guess other names without end (19 guesses, one good sign-in, again).
   */
  async recordSuccess(_ip: string, channel: SignInChannel, name?: string): Promise<void> {
    if (name !== undefined) await this.#windows.clear(nameWindow(channel, name));
  }
}

type Scope = 'address' | 'name';
/** Failures one key may have per window, by scope. */
const LIMITS: Record<Scope, number> = { address: MAX_ADDRESS_FAILURES, name: MAX_AUTH_FAILURES };

// Apart, so a flood of made-up names cannot push an address's window out of the bounded table.
const addressWindow = (ip: string): WindowKey<Scope> => ({ scope: 'address', key: ip });
const nameWindow = (channel: SignInChannel, name: string): WindowKey<Scope> => ({ scope: 'name', key: nameKey(channel, name) });

function keysOf(ip: string, channel: SignInChannel, name: string | undefined): WindowKey<Scope>[] {
  return name === undefined ? [addressWindow(ip)] : [addressWindow(ip), nameWindow(channel, name)];
}

const usedUp = (keys: readonly WindowKey<Scope>[], windows: readonly (FailureWindow | null)[]): boolean =>
  windows.some((window, i) => window !== null && window.failures >= LIMITS[(keys[i] as WindowKey<Scope>).scope]);

/** Names without case or surrounding blanks, as sign-in finds accounts. */
export const nameKey = (channel: SignInChannel, name: string): string => `${channel}:${name.trim().toLowerCase()}`;
