import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FailureWindows, type WindowKey } from '../../src/core/auth/failure-windows.ts';
import { AUTH_FAILURE_WINDOW_MS, MAX_ADDRESS_FAILURES, MAX_AUTH_FAILURES, nameKey, SignInPolicy } from '../../src/core/auth/login-rate-limit.ts';
import { sameGeneration } from '../../src/core/store/snapshot.ts';
import { openStore, type Bookkeeping, type Store } from '../../src/core/store/store.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

function fakeClock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

let temp: TempDir;
/** Two processes' views of one catalog: each its own connection (pool), its own memory of what it read. */
let first: Store;
let second: Store;

beforeEach(async () => {
  temp = makeTempDir('bindery-sign-in-');
  first = await openStore(temp.file('bindery.sqlite'));
  second = await openStore(temp.file('bindery.sqlite'));
  // On PostgreSQL a store hears of other processes' changes once its notification channel is open.
  for (const store of [first, second]) await expect.poll(() => sameGeneration(store.generation(), store.generation())).toBe(true);
});

afterEach(async () => {
  await first.close();
  await second.close();
  temp.remove();
});

async function rows(store: Store): Promise<number> {
  const row = await store.db.selectFrom('sign_in_failure').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('failure windows in the catalog', () => {
  const key: WindowKey = { scope: 'address', key: '1.2.3.4' };

  it('opens a window at the first failure and does not extend it; a closed window counts as none and reopens at 1', async () => {
    const clock = fakeClock();
    const windows = new FailureWindows(first.bookkeeping, { windowMs: AUTH_FAILURE_WINDOW_MS, now: clock.now });
    for (let i = 0; i < 4; i++) {
      await windows.record([key]);
      clock.advance(60_000);
    }
    expect(await windows.read([key])).toEqual([{ failures: 4, expiresAt: 1_000_000 + AUTH_FAILURE_WINDOW_MS }]);
    // Four minutes passed since the first failure; later failures do not push the end of the window.
    clock.advance(AUTH_FAILURE_WINDOW_MS - 4 * 60_000 - 1);
    expect(await windows.record([key])).toEqual([{ failures: 5, expiresAt: 1_000_000 + AUTH_FAILURE_WINDOW_MS }]);
    clock.advance(1);
    expect(await windows.read([key])).toEqual([null]);
    expect(await windows.record([key])).toEqual([{ failures: 1, expiresAt: clock.now() + AUTH_FAILURE_WINDOW_MS }]);
  });

  it('counts every failure when processes record the same key at the same time', async () => {
    const clock = fakeClock();
    const a = new FailureWindows(first.bookkeeping, { windowMs: 60_000, now: clock.now });
    const b = new FailureWindows(second.bookkeeping, { windowMs: 60_000, now: clock.now });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).record([key])));
    expect(answers.map(([w]) => w?.failures).sort((x, y) => (x ?? 0) - (y ?? 0))).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await a.read([key])).toEqual([{ failures: 20, expiresAt: clock.now() + 60_000 }]);
  });

  it('answers from memory until some process changes a row, and only then', async () => {
    const clock = fakeClock();
    const a = new FailureWindows(first.bookkeeping, { windowMs: 60_000, now: clock.now });
    const b = new FailureWindows(second.bookkeeping, { windowMs: 60_000, now: clock.now });
    expect(a.known([key])).toBeUndefined();
    expect(await a.read([key])).toEqual([null]);
    expect(a.known([key])).toEqual([null]);
    await b.record([key]);
    // The other process's write reaches this one (at once on SQLite; by notification on PostgreSQL).
    await expect.poll(() => a.known([key])).toBeUndefined();
    expect(await a.read([key])).toEqual([{ failures: 1, expiresAt: clock.now() + 60_000 }]);
    await b.clear(key);
    await expect.poll(() => a.known([key])).toBeUndefined();
    expect(await a.read([key])).toEqual([null]);
  });

  it('looks keys up once for requests that ask together, and answers them in the order they asked', async () => {
    let queries = 0;
    const counted: Bookkeeping = {
      generation: () => first.bookkeeping.generation(),
      tryRun: (sql, params) => first.bookkeeping.tryRun(sql, params),
      db: first.bookkeeping.db,
      exec: {
        get: (sql, params) => first.bookkeeping.exec.get(sql, params),
        run: (sql, params) => first.bookkeeping.exec.run(sql, params),
        all: (sql, params) => {
          queries++;
          return first.bookkeeping.exec.all(sql, params);
        },
      },
    };
    const windows = new FailureWindows(counted, { windowMs: 60_000, now: fakeClock().now });
    const answered: number[] = [];
    await Promise.all(Array.from({ length: 10 }, (_, i) => windows.read([key]).then(() => answered.push(i))));
    expect(queries).toBe(1);
    expect(answered).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('keeps the table bounded: closed windows are pruned, and past the bound the oldest windows of a scope go first', async () => {
    const clock = fakeClock();
    const windows = new FailureWindows(first.bookkeeping, { windowMs: 60_000, now: clock.now, maxRowsPerScope: 3 });
    await windows.record([{ scope: 'address', key: 'old' }]);
    clock.advance(60_000);
    // An address's open window older than every name's stays: a flood of names trims only names.
    const keptAt = clock.now();
    await windows.record([{ scope: 'address', key: 'kept' }]);
    for (const name of ['k1', 'k2', 'k3', 'k4']) {
      await windows.record([{ scope: 'name', key: name }]);
      clock.advance(10);
    }
    await windows.prune(['name']);
    expect(await windows.read([{ scope: 'address', key: 'old' }])).toEqual([null]);
    expect((await windows.read(['k1', 'k2', 'k3', 'k4'].map((k) => ({ scope: 'name', key: k })))).map((w) => w?.failures ?? 0)).toEqual([0, 1, 1, 1]);
    expect(await windows.read([{ scope: 'address', key: 'kept' }])).toEqual([{ failures: 1, expiresAt: keptAt + 60_000 }]);
    expect(await rows(first)).toBe(4);
  });

  it('prunes as it records: the first failure a process records, and every so many after', async () => {
    const clock = fakeClock();
    const early = new FailureWindows(first.bookkeeping, { windowMs: 60_000, now: clock.now });
    for (let i = 0; i < 5; i++) await early.record([{ scope: 'name', key: `early-${i}` }]);
    clock.advance(60_000);
    await new FailureWindows(second.bookkeeping, { windowMs: 60_000, now: clock.now }).record([key]);
    expect(await rows(first)).toBe(1);
  });
});

describe('the sign-in policy', () => {
  it('counts an address across every name and channel: twenty failures anywhere block it everywhere', async () => {
    const clock = fakeClock();
    const policy = new SignInPolicy(first.bookkeeping, clock.now);
    const channels = ['basic', 'koreader', 'refresh', 'login'] as const;
    for (let i = 0; i < MAX_ADDRESS_FAILURES - 1; i++) await policy.recordFailure('10.0.0.1', channels[i % 4] as (typeof channels)[number], i % 4 === 2 ? undefined : `random-${i}`);
    expect(await policy.isBlocked('10.0.0.1', 'login', 'alice')).toBe(false);
    await policy.recordFailure('10.0.0.1', 'login', 'random-last');
    for (const channel of channels) expect(await policy.isBlocked('10.0.0.1', channel, 'alice')).toBe(true);
    expect(await policy.isBlocked('10.0.0.2', 'basic', 'random-1')).toBe(false);
    clock.advance(AUTH_FAILURE_WINDOW_MS);
    expect(await policy.isBlocked('10.0.0.1', 'login', 'alice')).toBe(false);
  });

  it('counts a name per channel from any address, and a success clears the name', async () => {
    const policy = new SignInPolicy(first.bookkeeping, fakeClock().now);
    for (let i = 0; i < MAX_AUTH_FAILURES; i++) await policy.recordFailure(`10.0.1.${i}`, 'basic', 'Kobo');
    expect(await policy.isBlocked('10.0.2.1', 'basic', 'kobo ')).toBe(true);
    expect(await policy.isBlocked('10.0.2.1', 'login', 'kobo')).toBe(false);
    await policy.recordSuccess('10.0.1.0', 'basic', 'kobo');
    expect(await policy.isBlocked('10.0.2.1', 'basic', 'kobo')).toBe(false);
  });

  it('does not let a success clear the address: one working credential cannot reopen guessing', async () => {
    const policy = new SignInPolicy(first.bookkeeping, fakeClock().now);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < MAX_ADDRESS_FAILURES / 2; i++) await policy.recordFailure('10.0.0.7', 'basic', `guess-${round}-${i}`);
      await policy.recordSuccess('10.0.0.7', 'basic', 'kobo');
    }
    expect(await policy.isBlocked('10.0.0.7', 'basic', 'anyone')).toBe(true);
  });

  it('shares the counts between processes: failures split across two block at the limit, a success on one clears for the other', async () => {
    const clock = fakeClock();
    const one = new SignInPolicy(first.bookkeeping, clock.now);
    const other = new SignInPolicy(second.bookkeeping, clock.now);
    // Both have looked (and remember that there is nothing) before the failures start.
    expect(await one.isBlocked('10.0.3.1', 'basic', 'kobo')).toBe(false);
    expect(await other.isBlocked('10.0.3.1', 'basic', 'kobo')).toBe(false);
    for (let i = 0; i < MAX_AUTH_FAILURES; i++) await (i % 2 === 0 ? one : other).recordFailure(`10.0.3.${i}`, 'basic', 'kobo');
    await expect.poll(() => one.isBlocked('10.0.4.1', 'basic', 'kobo')).toBe(true);
    await expect.poll(() => other.isBlocked('10.0.4.1', 'basic', 'kobo')).toBe(true);
    // A success (as an administrator's reset would be) on one process: the other lets the name in again.
    await one.recordSuccess('10.0.3.0', 'basic', 'kobo');
    await expect.poll(() => other.isBlocked('10.0.4.1', 'basic', 'kobo')).toBe(false);

    // Addresses too: ten failures on each process use up the address's twenty.
    for (let i = 0; i < MAX_ADDRESS_FAILURES; i++) await (i % 2 === 0 ? one : other).recordFailure('10.0.5.5', 'login', `name-${i}`);
    await expect.poll(() => other.isBlocked('10.0.5.5', 'koreader', 'someone')).toBe(true);
    await expect.poll(() => one.isBlocked('10.0.5.5', 'basic', 'someone')).toBe(true);
    clock.advance(AUTH_FAILURE_WINDOW_MS);
    expect(await one.isBlocked('10.0.5.5', 'basic', 'someone')).toBe(false);
    expect(await other.isBlocked('10.0.5.5', 'basic', 'someone')).toBe(false);
  });

  it('knows from memory what it looked up, and nothing it did not', async () => {
    const clock = fakeClock();
    const policy = new SignInPolicy(first.bookkeeping, clock.now);
    expect(policy.knownBlocked('10.0.6.1', 'basic', 'kobo')).toBeUndefined();
    expect(await policy.isBlocked('10.0.6.1', 'basic', 'kobo')).toBe(false);
    expect(policy.knownBlocked('10.0.6.1', 'basic', 'kobo')).toBe(false);
    for (let i = 0; i < MAX_AUTH_FAILURES; i++) await policy.recordFailure('10.0.6.1', 'basic', 'kobo');
    expect(policy.knownBlocked('10.0.6.1', 'basic', 'kobo')).toBeUndefined();
    expect(await policy.isBlocked('10.0.6.1', 'basic', 'kobo')).toBe(true);
    expect(policy.knownBlocked('10.0.6.1', 'basic', 'kobo')).toBe(true);
    // The window closes by the clock alone, without a query.
    clock.advance(AUTH_FAILURE_WINDOW_MS);
    expect(policy.knownBlocked('10.0.6.1', 'basic', 'kobo')).toBe(false);
  });

  it('remembers an address and name found not blocked only until a window changes, in this process or another', async () => {
    const clock = fakeClock();
    const one = new SignInPolicy(first.bookkeeping, clock.now);
    const other = new SignInPolicy(second.bookkeeping, clock.now);
    for (let i = 0; i < MAX_AUTH_FAILURES - 1; i++) await one.recordFailure(`10.0.8.${i}`, 'basic', 'kobo');
    // One failure short of the limit: asked again and again (a reader's every request), answered from memory.
    expect(await one.isBlocked('10.0.8.9', 'basic', 'kobo')).toBe(false);
    for (let i = 0; i < 3; i++) expect(one.knownBlocked('10.0.8.9', 'basic', 'kobo')).toBe(false);
    // The last failure allowed, counted by the other process: the memory goes with it.
    await other.recordFailure('10.0.8.8', 'basic', 'kobo');
    await expect.poll(() => one.isBlocked('10.0.8.9', 'basic', 'kobo')).toBe(true);
    // Never the remembered "not blocked" again (on PostgreSQL a later notification may also empty the memory).
    expect(one.knownBlocked('10.0.8.9', 'basic', 'kobo')).not.toBe(false);
    expect(await one.isBlocked('10.0.8.9', 'basic', 'kobo')).toBe(true);
    // The same name on another channel, and the address alone, were never blocked.
    expect(await one.isBlocked('10.0.8.9', 'login', 'kobo')).toBe(false);
    expect(await one.isBlocked('10.0.8.9', 'basic')).toBe(false);
    // An address short of its limit, remembered, then used up by this process's own failures.
    for (let i = 0; i < MAX_ADDRESS_FAILURES - 1; i++) await one.recordFailure('10.0.9.1', 'login', `name-${i}`);
    expect(await one.isBlocked('10.0.9.1', 'koreader', 'someone')).toBe(false);
    expect(one.knownBlocked('10.0.9.1', 'koreader', 'someone')).toBe(false);
    await one.recordFailure('10.0.9.1', 'login', 'one-more');
    expect(await one.isBlocked('10.0.9.1', 'koreader', 'someone')).toBe(true);
    clock.advance(AUTH_FAILURE_WINDOW_MS);
    expect(await one.isBlocked('10.0.9.1', 'koreader', 'someone')).toBe(false);
  });

  it('does not count as a change of the catalog: failed sign-ins leave every cache in place', async () => {
    const policy = new SignInPolicy(first.bookkeeping, fakeClock().now);
    await policy.isBlocked('10.0.7.1', 'login', 'alice');
    const before = [first.generation(), second.generation()];
    for (let i = 0; i < 3; i++) await policy.recordFailure('10.0.7.1', 'login', 'alice');
    await policy.recordSuccess('10.0.7.1', 'login', 'alice');
    expect(first.generation()).toEqual(before[0]);
    // The other process: on PostgreSQL it is not told; on SQLite any commit to the file is a change for the others.
    if (first.engine === 'postgres') {
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(second.generation()).toEqual(before[1]);
    }
  });

  it('treats usernames without case or surrounding blanks', () => {
    expect(nameKey('login', '  Alice ')).toBe(nameKey('login', 'alice'));
  });
});
