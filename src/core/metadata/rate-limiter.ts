// Spacing between requests to one provider, shared by every caller in the process (the daemon's tasks, its routes).
import type { RateLimiter } from './provider.ts';

export function createRateLimiter(minIntervalMs: number, now: () => number = Date.now): RateLimiter {
  let nextSlot = 0;
  return {
    acquire(): Promise<void> {
      const t = now();
      const slot = Math.max(t, nextSlot);
      nextSlot = slot + minIntervalMs;
      return after(slot - t);
    },
  };
}

// A timer counts from the event loop's cached clock, which lags the real one by the work done since the loop last
// read it: on a busy process it fires early. Waiting again for what is left keeps the spacing a minimum.
async function after(ms: number): Promise<void> {
  const due = performance.now() + ms;
  for (let left = ms; left > 0; left = due - performance.now()) await new Promise((resolve) => setTimeout(resolve, Math.ceil(left)));
}

const shared = new Map<string, RateLimiter>();

/** The process-wide limiter of a provider (created with the first interval asked for). */
export function sharedRateLimiter(key: string, minIntervalMs: number): RateLimiter {
  let limiter = shared.get(key);
  if (!limiter) {
    limiter = createRateLimiter(minIntervalMs);
    shared.set(key, limiter);
  }
  return limiter;
}
