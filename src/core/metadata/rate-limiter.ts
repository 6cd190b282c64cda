// Spacing between requests to one provider, shared by every caller in the process (the daemon's tasks, its routes).
import type { RateLimiter } from './provider.ts';

export function createRateLimiter(minIntervalMs: number, now: () => number = Date.now): RateLimiter {
  let nextSlot = 0;
  return {
    acquire(): Promise<void> {
      const t = now();
      const slot = Math.max(t, nextSlot);
      nextSlot = slot + minIntervalMs;
      const wait = slot - t;
      return wait <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, wait));
    },
  };
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
