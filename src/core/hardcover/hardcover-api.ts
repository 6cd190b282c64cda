// Hardcover's GraphQL endpoint for one user: their API key as the bearer token, every request through the shared
// outgoing client and the key's rate limiter. Failures become HardcoverSyncError; nothing here logs the key.
import { CodedError } from '../coded-error.ts';
import { isObject, type Json } from '../metadata/values.ts';
import type { RateLimiter } from '../metadata/provider.ts';
import type { HttpClient } from '../net/http-client.ts';

export type HardcoverSyncErrorCode = 'REFUSED' | 'UNEXPECTED';

export class HardcoverSyncError extends CodedError<HardcoverSyncErrorCode> {}

export interface HardcoverApi {
  /** Runs one query or mutation and returns its `data`. */
  call(document: string, variables: Record<string, unknown>): Promise<Json>;
}

export interface HardcoverApiOptions {
  http: HttpClient;
  /** The GraphQL URL (`…/v1/graphql`). */
  endpoint: string;
  apiKey: string;
  limiter: RateLimiter;
  timeoutMs?: number;
}

/** The token Hardcover shows on its settings page may already carry the scheme. */
export function bearer(apiKey: string): string {
  return /^bearer\s/i.test(apiKey) ? apiKey : `Bearer ${apiKey}`;
}

/** The `data` of an answer; GraphQL-level errors (`errors[]`) are thrown with their first message. */
export function answerData(body: unknown): Json {
  if (!isObject(body)) throw new HardcoverSyncError('UNEXPECTED', 'the answer is not a JSON object');
  const errors = Array.isArray(body.errors) ? body.errors : [];
  if (errors.length > 0) {
    const first = errors[0];
    const message = isObject(first) && typeof first.message === 'string' ? first.message : JSON.stringify(first);
    throw new HardcoverSyncError('REFUSED', `GraphQL error: ${message}`);
  }
  if (!isObject(body.data)) throw new HardcoverSyncError('UNEXPECTED', 'no "data" in the answer');
  return body.data;
}

export function hardcoverApi(options: HardcoverApiOptions): HardcoverApi {
  return {
    async call(document, variables) {
      await options.limiter.acquire();
      const response = await options.http.request({
        url: options.endpoint,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', authorization: bearer(options.apiKey) },
        body: JSON.stringify({ query: document, variables }),
        accept: ['application/json'],
        timeoutMs: options.timeoutMs ?? 20_000,
        maxBytes: 2 * 1024 * 1024,
      });
      return answerData(response.json());
    },
  };
}

/**
 * At most `burst` requests at once, refilled at `perMinute`: Hardcover allows 60 requests a minute per key, and one
 * progress change costs up to four, which a burst lets through without waiting.
 */
export function createTokenBucket(burst: number, perMinute: number, now: () => number = Date.now): RateLimiter {
  const msPerToken = 60_000 / perMinute;
  let tokens = burst;
  let updated = now();
  let queue: Promise<void> = Promise.resolve();
  const take = async (): Promise<void> => {
    const t = now();
    tokens = Math.min(burst, tokens + (t - updated) / msPerToken);
    updated = t;
    if (tokens >= 1) {
      tokens -= 1;
      return;
    }
    const wait = Math.ceil((1 - tokens) * msPerToken);
    await new Promise((resolve) => setTimeout(resolve, wait));
    tokens = 0;
    updated = now();
  };
  return {
    acquire(): Promise<void> {
      // Callers are served in order: each waits for the one before it.
      const turn = queue.then(take);
      queue = turn.catch(() => undefined);
      return turn;
    },
  };
}
