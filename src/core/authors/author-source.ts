// The contract of an author metadata source (Grimmory's AuthorMetadataSource: only AUDNEXUS so far) and the context
// it works with: its base URL (overridable under its name in `metadataProviderBaseUrls`), the process-wide rate
// limiter, the shared outgoing client, and failures turned into ProviderErrors a user can act on.
import { ProviderError, providerChanged, type RateLimiter } from '../metadata/provider.ts';
import type { ProviderRuntime } from '../metadata/provider-context.ts';
import { sharedRateLimiter } from '../metadata/rate-limiter.ts';
import { OutgoingRequestError } from '../net/http-client.ts';

/** AuthorMetadataSource values, exactly as on the wire. */
export const AUTHOR_METADATA_SOURCES = ['AUDNEXUS'] as const;
export type AuthorMetadataSource = (typeof AUTHOR_METADATA_SOURCES)[number];

export const isAuthorMetadataSource = (v: unknown): v is AuthorMetadataSource => typeof v === 'string' && (AUTHOR_METADATA_SOURCES as readonly string[]).includes(v);

/** Grimmory's AuthorSearchResult. */
export interface AuthorSearchResult {
  source: AuthorMetadataSource;
  asin: string;
  name?: string;
  description?: string;
  imageUrl?: string;
}

export interface AuthorSourceContext {
  /** Without a trailing slash. */
  readonly baseUrl: string;
  /** The parsed JSON answer; undefined when the source says there is no such thing (HTTP 400/404). */
  getJson(path: string, query: Record<string, string>): Promise<unknown>;
}

export interface AuthorSource {
  readonly id: AuthorMetadataSource;
  readonly displayName: string;
  /** The key of its base URL override in `metadataProviderBaseUrls`. */
  readonly baseUrlKey: string;
  readonly defaultBaseUrl: string;
  readonly minIntervalMs: number;
  readonly timeoutMs: number;
  /** Candidates for a name, best first, each with its details. */
  search(name: string, region: string, ctx: AuthorSourceContext): Promise<AuthorSearchResult[]>;
  /** One author by ASIN; null when the source has none. */
  byAsin(asin: string, region: string, ctx: AuthorSourceContext): Promise<AuthorSearchResult | null>;
  /** The best candidate for a name with its details; null when nothing matches. */
  quickSearch(name: string, region: string, ctx: AuthorSourceContext): Promise<AuthorSearchResult | null>;
}

export type AuthorSourceRuntime = Pick<ProviderRuntime, 'http' | 'baseUrls' | 'minIntervalMs' | 'timeoutMs'> & {
  /** A limiter instead of the process-wide one (tests). */
  limiter?: RateLimiter;
};

function transportError(name: string, error: unknown, timeoutMs: number): ProviderError {
  if (error instanceof OutgoingRequestError) {
    if (error.code === 'TIMEOUT') return new ProviderError(name, 'TIMEOUT', `did not answer within ${timeoutMs} ms`);
    if (error.code === 'BAD_CONTENT_TYPE') return new ProviderError(name, 'BLOCKED', `${error.message}; it may be blocking requests or have changed its API`);
    if (error.code === 'TOO_LARGE') return providerChanged(name, 'the answer is larger than any it normally sends');
  }
  return new ProviderError(name, 'UNAVAILABLE', `cannot be reached: ${error instanceof Error ? error.message : String(error)}`);
}

function statusError(name: string, status: number, retryAfter: string | undefined): ProviderError {
  if (status === 403) return new ProviderError(name, 'BLOCKED', 'refused access (HTTP 403); it may be blocking automated requests from this server');
  if (status === 429) return new ProviderError(name, 'RATE_LIMITED', `asked to slow down (HTTP 429)${retryAfter ? `; retry after ${retryAfter} s` : ''}`);
  return new ProviderError(name, 'UNAVAILABLE', `answered HTTP ${status}`);
}

export function createAuthorSourceContext(source: AuthorSource, runtime: AuthorSourceRuntime): AuthorSourceContext {
  const baseUrl = (runtime.baseUrls?.[source.baseUrlKey] ?? source.defaultBaseUrl).replace(/\/+$/, '');
  const minIntervalMs = runtime.minIntervalMs ?? source.minIntervalMs;
  const limiter = runtime.limiter ?? sharedRateLimiter(`author:${source.id}:${minIntervalMs}`, minIntervalMs);
  const timeoutMs = runtime.timeoutMs ?? source.timeoutMs;
  const name = source.displayName;

  async function getJson(path: string, query: Record<string, string>): Promise<unknown> {
    const url = new URL(baseUrl + path);
    for (const [key, value] of Object.entries(query)) url.searchParams.append(key, value);
    await limiter.acquire();
    let response;
    try {
      response = await runtime.http.request({ url: url.href, headers: { accept: 'application/json' }, accept: ['application/json'], timeoutMs, maxBytes: 2 * 1024 * 1024, anyStatus: true });
    } catch (error) {
      throw transportError(name, error, timeoutMs);
    }
    if (response.status === 400 || response.status === 404) return undefined;
    if (response.status < 200 || response.status >= 300) throw statusError(name, response.status, response.headers['retry-after']);
    try {
      return JSON.parse(response.text()) as unknown;
    } catch {
      throw providerChanged(name, 'the answer is not valid JSON');
    }
  }

  return { baseUrl, getJson };
}
