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
  /**
   * Per channel and address, the names known not blocked (NO_NAME: the address alone), valid while the windows' epoch
   * is #clearEpoch: no failure can be counted without moving it, and time only closes windows. A reader app asks with
   * every request; looking its windows up again cost ~4 % of what a kept page allocated.
   */
  readonly #clear = new Map<SignInChannel, Map<string, Set<string | typeof NO_NAME>>>();
  #clearEpoch = -1;
  #clearCount = 0;

  constructor(bookkeeping: Bookkeeping, now: () => number = Date.now) {
    this.#windows = new FailureWindows(bookkeeping, { windowMs: AUTH_FAILURE_WINDOW_MS, now });
  }

  async isBlocked(ip: string, channel: SignInChannel, name?: string): Promise<boolean> {
    const known = this.knownBlocked(ip, channel, name);
    if (known !== undefined) return known;
    const epoch = this.#clearEpoch;
    const keys = keysOf(ip, channel, name);
    const blocked = usedUp(keys, await this.#windows.read(keys));
    if (!blocked) this.#noteClear(epoch, ip, channel, name);
    return blocked;
  }

  /** What isBlocked would answer, from this process's memory alone; undefined when that needs a query. */
  knownBlocked(ip: string, channel: SignInChannel, name?: string): boolean | undefined {
    const epoch = this.#windows.epoch();
    if (epoch !== this.#clearEpoch) {
      this.#clear.clear();
      this.#clearCount = 0;
      this.#clearEpoch = epoch;
    }
    if (this.#clear.get(channel)?.get(ip)?.has(name ?? NO_NAME)) return false;
    const keys = keysOf(ip, channel, name);
    const windows = this.#windows.known(keys);
    if (!windows) return undefined;
    const blocked = usedUp(keys, windows);
    if (!blocked) this.#noteClear(epoch, ip, channel, name);
    return blocked;
  }

  /** Remembers that the address and name are not blocked, when no window changed since `epoch`, as of which they were not. */
  #noteClear(epoch: number, ip: string, channel: SignInChannel, name: string | undefined): void {
    if (epoch !== this.#clearEpoch || epoch !== this.#windows.epoch()) return;
    if (this.#clearCount >= MAX_CLEAR_REMEMBERED) {
      this.#clear.clear();
      this.#clearCount = 0;
    }
    let addresses = this.#clear.get(channel);
    if (!addresses) this.#clear.set(channel, (addresses = new Map()));
    let names = addresses.get(ip);
    if (!names) addresses.set(ip, (names = new Set()));
    names.add(name ?? NO_NAME);
    this.#clearCount++;
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

const NO_NAME = Symbol('no name');
/** Addresses and names remembered as not blocked at most; the memory is emptied when full. */
const MAX_CLEAR_REMEMBERED = 10_000;

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
