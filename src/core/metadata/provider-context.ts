// Builds the context a provider works with: its settings, its base URL, its rate limiter, and one request pipeline
// that turns every way a provider can fail into a ProviderError a user can act on.
import { OutgoingRequestError, type HttpClient, type OutgoingRequest, type OutgoingResponse } from '../net/http-client.ts';
import { ProviderError, providerChanged, type MetadataProvider, type ProviderContext, type ProviderRequestOptions, type RateLimiter } from './provider.ts';
import { sharedRateLimiter } from './rate-limiter.ts';

export interface ProviderRuntime {
  http: HttpClient;
  /** METADATA_PROVIDER_SETTINGS as read from the application settings. */
  providerSettings: Readonly<Record<string, unknown>>;
  /** Provider id → base URL overrides (config `metadataProviderBaseUrls`), used by tests and mirrors. */
  baseUrls?: Readonly<Record<string, string>>;
  /** Replaces every provider's spacing (tests); the provider's own when absent. */
  minIntervalMs?: number;
  /** Replaces every provider's timeout (tests). */
  timeoutMs?: number;
  /** A limiter per provider instead of the process-wide ones (tests). */
  limiterFor?: (provider: MetadataProvider) => RateLimiter;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function providerSettingsOf(provider: MetadataProvider, runtime: Pick<ProviderRuntime, 'providerSettings'>): Readonly<Record<string, unknown>> {
  const own = runtime.providerSettings[provider.settingsKey];
  return isObject(own) ? own : {};
}

/** Body snippets that mean "you are a robot" rather than an answer. */
const CHALLENGE_MARKERS = [/captcha/i, /are you a robot/i, /unusual traffic/i, /cf-chl-/i, /access denied/i, /request blocked/i];

export function looksLikeChallenge(body: string): boolean {
  const head = body.slice(0, 20_000);
  return CHALLENGE_MARKERS.some((re) => re.test(head));
}

/** The provider's own words from an error body (`{ error: { message } }`, `{ message }`, `{ error }`), if any. */
function bodyMessage(response: OutgoingResponse): string {
  if (!response.contentType.includes('json')) return '';
  try {
    const body = JSON.parse(response.text()) as unknown;
    if (!isObject(body)) return '';
    const nested = isObject(body.error) ? body.error.message : body.error;
    const message = typeof nested === 'string' ? nested : typeof body.message === 'string' ? body.message : '';
    return message ? `: ${message.slice(0, 300)}` : '';
  } catch {
    return '';
  }
}

function statusError(name: string, response: OutgoingResponse): ProviderError {
  return withDetail(statusErrorBare(name, response), bodyMessage(response));
}

function withDetail(error: ProviderError, detail: string): ProviderError {
  return detail ? new ProviderError(error.provider, error.code, error.message.slice(error.provider.length + 2) + detail) : error;
}

function statusErrorBare(name: string, response: OutgoingResponse): ProviderError {
  const { status } = response;
  if (status === 401) return new ProviderError(name, 'NOT_CONFIGURED', `refused the credentials (HTTP 401); check the API key in the metadata provider settings`);
  if (status === 403) return new ProviderError(name, 'BLOCKED', `refused access (HTTP 403); it may be blocking automated requests from this server`);
  if (status === 429 || status === 420) {
    const retry = response.headers['retry-after'];
    return new ProviderError(name, 'RATE_LIMITED', `asked to slow down (HTTP ${status})${retry ? `; retry after ${retry} s` : ''}`);
  }
  if (status === 404 || status === 410) return new ProviderError(name, 'NOT_FOUND', `has no such item (HTTP ${status})`);
  if (status === 503 && looksLikeChallenge(response.text())) return new ProviderError(name, 'BLOCKED', 'answered with a robot check (HTTP 503); it is blocking automated requests from this server');
  return new ProviderError(name, 'UNAVAILABLE', `answered HTTP ${status}`);
}

function transportError(name: string, error: unknown, timeoutMs: number): ProviderError {
  if (error instanceof ProviderError) return error;
  if (error instanceof OutgoingRequestError) {
    switch (error.code) {
      case 'TIMEOUT':
        return new ProviderError(name, 'TIMEOUT', `did not answer within ${timeoutMs} ms`);
      case 'BAD_CONTENT_TYPE':
        return new ProviderError(name, 'BLOCKED', `${error.message}; it may be blocking requests (a login or robot-check page) or have changed its API`);
      case 'TOO_LARGE':
        return providerChanged(name, 'the answer is larger than any it normally sends');
      case 'BLOCKED_ADDRESS':
      case 'INVALID_URL':
        return new ProviderError(name, 'UNAVAILABLE', `cannot be reached: ${error.message}`);
      default:
        return new ProviderError(name, 'UNAVAILABLE', `cannot be reached: ${error.message}`);
    }
  }
  return new ProviderError(name, 'UNAVAILABLE', error instanceof Error ? error.message : String(error));
}

export function createProviderContext(provider: MetadataProvider, runtime: ProviderRuntime): ProviderContext {
  const settings = providerSettingsOf(provider, runtime);
  const override = runtime.baseUrls?.[provider.id];
  const baseUrl = (override ?? provider.defaultBaseUrl(settings)).replace(/\/+$/, '');
  const minIntervalMs = runtime.minIntervalMs ?? provider.minIntervalMs;
  const limiter = runtime.limiterFor?.(provider) ?? sharedRateLimiter(`${provider.id}:${minIntervalMs}`, minIntervalMs);
  const timeoutMs = runtime.timeoutMs ?? provider.timeoutMs;
  const name = provider.displayName;

  function url(pathOrUrl: string, query?: ProviderRequestOptions['query']): string {
    const absolute = /^https?:\/\//i.test(pathOrUrl) ? new URL(pathOrUrl) : new URL(baseUrl + (pathOrUrl.startsWith('/') ? '' : '/') + pathOrUrl);
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) absolute.searchParams.append(key, String(value));
    return absolute.href;
  }

  async function request(req: OutgoingRequest): Promise<OutgoingResponse> {
    await limiter.acquire();
    const effectiveTimeout = req.timeoutMs ?? timeoutMs;
    let response: OutgoingResponse;
    try {
      response = await runtime.http.request({ ...req, timeoutMs: effectiveTimeout, anyStatus: true });
    } catch (error) {
      throw transportError(name, error, effectiveTimeout);
    }
    if (response.status < 200 || response.status >= 300) throw statusError(name, response);
    return response;
  }

  function outgoing(pathOrUrl: string, options: ProviderRequestOptions, accept: readonly string[] | undefined): OutgoingRequest {
    return {
      url: url(pathOrUrl, options.query),
      method: options.method ?? 'GET',
      headers: options.headers ?? {},
      ...(options.body !== undefined ? { body: options.body } : {}),
      ...(accept ? { accept } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    };
  }

  async function getJson(pathOrUrl: string, options: ProviderRequestOptions = {}): Promise<unknown> {
    const headers = { accept: 'application/json', ...options.headers };
    const response = await request(outgoing(pathOrUrl, { ...options, headers }, ['application/json', 'text/json', 'application/graphql-response+json']));
    try {
      return JSON.parse(response.text()) as unknown;
    } catch {
      throw providerChanged(name, 'the answer is not valid JSON');
    }
  }

  async function getText(pathOrUrl: string, options: ProviderRequestOptions = {}): Promise<string> {
    const response = await request(outgoing(pathOrUrl, options, undefined));
    return response.text();
  }

  return { provider: provider.id, settings, baseUrl, http: runtime.http, limiter, timeoutMs, getJson, getText, request, url };
}

/** Refuses a provider that is switched off or lacks a required setting (an API key). */
export function assertUsable(provider: MetadataProvider, runtime: Pick<ProviderRuntime, 'providerSettings'>): void {
  const settings = providerSettingsOf(provider, runtime);
  if (settings.enabled !== true) throw new ProviderError(provider.displayName, 'DISABLED', 'is not enabled in the metadata provider settings');
  for (const key of provider.requiredSettings ?? []) {
    const value = settings[key];
    if (typeof value !== 'string' || value.trim() === '') throw new ProviderError(provider.displayName, 'NOT_CONFIGURED', `needs "${key}" in the metadata provider settings`);
  }
}

export function isUsable(provider: MetadataProvider, runtime: Pick<ProviderRuntime, 'providerSettings'>): boolean {
  try {
    assertUsable(provider, runtime);
    return true;
  } catch {
    return false;
  }
}
