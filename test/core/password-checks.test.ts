import { describe, expect, it } from 'vitest';
import { PasswordChecks } from '../../src/core/auth/password-checks.ts';
import { PasswordBusyError } from '../../src/core/auth/password-busy.ts';
import { hashPassword, PASSWORD_QUEUE_LIMIT, PASSWORD_THREADS, passwordPoolState, verifyPassword } from '../../src/core/auth/password-hashing.ts';

function countingVerify(): { verify: (password: string, hash: string) => Promise<boolean>; calls: () => number; release: () => void } {
  let calls = 0;
  let release = (): void => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  return {
    verify: async (password, hash) => {
      calls += 1;
      await gate;
      return hash === `hash-of-${password}`;
    },
    calls: () => calls,
    release: () => release(),
  };
}

describe('password checks', () => {
  it('share one verification among concurrent checks of the same credential', async () => {
    const counter = countingVerify();
    const checks = new PasswordChecks({ verify: counter.verify });
    const pending = Array.from({ length: 64 }, () => checks.check('kobo', 'secret', 'hash-of-secret'));
    counter.release();
    const outcomes = await Promise.all(pending);
    expect(counter.calls()).toBe(1);
    expect(outcomes.every((o) => o.matches)).toBe(true);
    expect(outcomes.filter((o) => o.fresh)).toHaveLength(1);
  });

  it('remember a right answer for a while and a wrong one briefly, per name, password and stored hash', async () => {
    let now = 0;
    const counter = countingVerify();
    counter.release();
    const checks = new PasswordChecks({ verify: counter.verify, acceptTtlMs: 1000, rejectTtlMs: 100, now: () => now });
    expect(await checks.check('kobo', 'secret', 'hash-of-secret')).toEqual({ matches: true, fresh: true });
    expect(await checks.check('kobo', 'secret', 'hash-of-secret')).toEqual({ matches: true, fresh: false });
    expect(await checks.check('kobo', 'Secret', 'hash-of-secret')).toEqual({ matches: false, fresh: true });
    expect(await checks.check('kobo', 'Secret', 'hash-of-secret')).toEqual({ matches: false, fresh: false });
    // Another name with the same (stand-in) hash is checked on its own: no instant answer tells names apart.
    expect(await checks.check('kobo2', 'Secret', 'hash-of-secret')).toEqual({ matches: false, fresh: true });
    // A changed password (another stored hash) is checked again.
    expect(await checks.check('kobo', 'secret', 'hash-of-other')).toEqual({ matches: false, fresh: true });
    now = 100;
    expect((await checks.check('kobo', 'Secret', 'hash-of-secret')).fresh).toBe(true);
    now = 1000;
    expect(await checks.check('kobo', 'secret', 'hash-of-secret')).toEqual({ matches: true, fresh: true });
    expect(counter.calls()).toBe(6);
  });
});

describe('the password pool', () => {
  it('hashes and verifies with bcrypt on worker threads, leaving the event loop free', async () => {
    const hash = await hashPassword('correct horse');
    expect(hash).toMatch(/^\$2[aby]\$10\$/);
    // While four checks run, timers on this thread keep firing on time.
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 5);
    const started = performance.now();
    const results = await Promise.all([verifyPassword('correct horse', hash), verifyPassword('wrong', hash), verifyPassword('correct horse', hash), verifyPassword('x', 'not-a-hash')]);
    const elapsed = performance.now() - started;
    clearInterval(timer);
    expect(results).toEqual([true, false, true, false]);
    expect(passwordPoolState().threads).toBeGreaterThan(0);
    // bcryptjs on this thread would have blocked it for the whole run: no tick at all.
    expect(ticks).toBeGreaterThan(Math.floor(elapsed / 5 / 4));
  });
});

describe('the password pool under a flood', () => {
  it('refuses work beyond its bounded queue with PasswordBusyError instead of queueing without end', async () => {
    const hash = await hashPassword('flood');
    const outcomes = await Promise.allSettled(Array.from({ length: PASSWORD_QUEUE_LIMIT + 40 }, () => verifyPassword('nope', hash)));
    const refused = outcomes.filter((o) => o.status === 'rejected');
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(PasswordBusyError);
    expect(outcomes.filter((o) => o.status === 'fulfilled').length).toBeLessThanOrEqual(PASSWORD_QUEUE_LIMIT + PASSWORD_THREADS);
    // Once the queue drains, checks run again.
    expect(await verifyPassword('flood', hash)).toBe(true);
  }, 30_000);
});
