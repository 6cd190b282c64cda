import { describe, expect, it } from 'vitest';
import { AUTH_FAILURE_WINDOW_MS, FailureLimit, MAX_ADDRESS_FAILURES, nameKey, SignInPolicy } from '../../src/core/auth/login-rate-limit.ts';

function fakeClock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

describe('failed-attempt limit', () => {
  it('blocks after five failures and opens again 15 minutes after the first one, not the last', () => {
    const clock = fakeClock();
    const login = new FailureLimit({ maxFailures: 5, windowMs: AUTH_FAILURE_WINDOW_MS, maxKeys: 100, now: clock.now });
    for (let i = 0; i < 4; i++) {
      login.recordFailure('ip:1.2.3.4');
      clock.advance(60_000);
    }
    expect(login.isBlocked('ip:1.2.3.4')).toBe(false);
    login.recordFailure('ip:1.2.3.4');
    expect(login.isBlocked('ip:1.2.3.4')).toBe(true);

    // Four minutes passed since the first failure; later failures do not push the end of the window.
    clock.advance(AUTH_FAILURE_WINDOW_MS - 4 * 60_000 - 1);
    login.recordFailure('ip:1.2.3.4');
    expect(login.isBlocked('ip:1.2.3.4')).toBe(true);
    clock.advance(1);
    expect(login.isBlocked('ip:1.2.3.4')).toBe(false);

    // A new window starts with the next failure and needs five again.
    login.recordFailure('ip:1.2.3.4');
    expect(login.isBlocked('ip:1.2.3.4')).toBe(false);
  });

  it('forgets the failures of a key on success and keeps keys apart', () => {
    const clock = fakeClock();
    const limit = new FailureLimit({ maxFailures: 5, windowMs: 1000, maxKeys: 100, now: clock.now });
    for (let i = 0; i < 5; i++) limit.recordFailure('a');
    limit.recordFailure('b');
    expect(limit.isBlocked('a')).toBe(true);
    expect(limit.isBlocked('b')).toBe(false);
    limit.reset('a');
    expect(limit.isBlocked('a')).toBe(false);
    for (let i = 0; i < 4; i++) limit.recordFailure('a');
    expect(limit.isBlocked('a')).toBe(false);
  });

  it('holds a bounded number of keys, dropping the oldest window first', () => {
    const clock = fakeClock();
    const limit = new FailureLimit({ maxFailures: 2, windowMs: 60_000, maxKeys: 3, now: clock.now });
    for (const key of ['k1', 'k2', 'k3']) {
      limit.recordFailure(key);
      limit.recordFailure(key);
      clock.advance(10);
    }
    limit.recordFailure('k4');
    expect(limit.size).toBe(3);
    expect(limit.isBlocked('k1')).toBe(false);
    expect(limit.isBlocked('k2')).toBe(true);
    expect(limit.isBlocked('k3')).toBe(true);
  });

  it('treats usernames without case or surrounding blanks', () => {
    expect(nameKey('login', '  Alice ')).toBe(nameKey('login', 'alice'));
  });
});

describe('the sign-in policy', () => {
  it('counts an address across every name and channel: twenty failures anywhere block it everywhere', () => {
    const clock = fakeClock();
    const policy = new SignInPolicy(clock.now);
    const channels = ['basic', 'koreader', 'refresh', 'login'] as const;
    for (let i = 0; i < MAX_ADDRESS_FAILURES - 1; i++) policy.recordFailure('10.0.0.1', channels[i % 4] as (typeof channels)[number], i % 4 === 2 ? undefined : `random-${i}`);
    expect(policy.isBlocked('10.0.0.1', 'login', 'alice')).toBe(false);
    policy.recordFailure('10.0.0.1', 'login', 'random-last');
    for (const channel of channels) expect(policy.isBlocked('10.0.0.1', channel, 'alice')).toBe(true);
    expect(policy.isBlocked('10.0.0.2', 'basic', 'random-1')).toBe(false);
    clock.advance(AUTH_FAILURE_WINDOW_MS);
    expect(policy.isBlocked('10.0.0.1', 'login', 'alice')).toBe(false);
  });

  it('counts a name per channel from any address, and a success clears the address and the name', () => {
    const policy = new SignInPolicy(fakeClock().now);
    for (let i = 0; i < 5; i++) policy.recordFailure(`10.0.1.${i}`, 'basic', 'Kobo');
    expect(policy.isBlocked('10.0.2.1', 'basic', 'kobo ')).toBe(true);
    expect(policy.isBlocked('10.0.2.1', 'login', 'kobo')).toBe(false);
    policy.recordSuccess('10.0.1.0', 'basic', 'kobo');
    expect(policy.isBlocked('10.0.2.1', 'basic', 'kobo')).toBe(false);
  });

  it('does not let a success clear the address: one working credential cannot reopen guessing', () => {
    const policy = new SignInPolicy(fakeClock().now);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < MAX_ADDRESS_FAILURES / 2; i++) policy.recordFailure('10.0.0.7', 'basic', `guess-${round}-${i}`);
      policy.recordSuccess('10.0.0.7', 'basic', 'kobo');
    }
    expect(policy.isBlocked('10.0.0.7', 'basic', 'anyone')).toBe(true);
  });

  it('keeps a blocked address when made-up names fill the table of names', () => {
    const policy = new SignInPolicy(fakeClock().now);
    for (let i = 0; i < MAX_ADDRESS_FAILURES; i++) policy.recordFailure('10.0.0.9', 'basic', `n${i}`);
    // 20,000 names from 4,000 addresses, five each: more names than the name table holds.
    for (let i = 0; i < 20_000; i++) policy.recordFailure(`10.1.${(i / 5) >> 8}.${(i / 5) & 255}`, 'basic', `flood-${i}`);
    expect(policy.isBlocked('10.0.0.9', 'basic', 'anyone')).toBe(true);
  });
});
