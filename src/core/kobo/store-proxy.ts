// Forwarding to Kobo's own store (setting `forwardToKoboStore`): what this server does not answer itself goes there
// with the device's credentials, the token path segment stripped. Only Kobo's own headers come back.
import type { HttpClient } from '../net/http-client.ts';

export interface StoreRequest {
  method: string;
  /** Path and query below /api/kobo/<token> (`/v1/user/profile?x=1`). */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, if any. */
  body?: unknown;
  /** The store's own sync token, sent on /v1/library/sync in place of ours. */
  storeSyncToken?: string | null;
}

export interface StoreResponse {
  status: number;
  /** The store's `x-kobo-*` headers. */
  headers: Record<string, string>;
  /** JSON when the store answered JSON, else the raw bytes (empty for no body). */
  body: unknown;
  json: boolean;
}

const FORWARDED = new Set(['authorization', 'user-agent', 'accept-language']);
/** A device waits on these calls; an unreachable store must not hold it up for long. */
const STORE_TIMEOUT_MS = 15_000;
const STORE_MAX_BYTES = 32 * 1024 * 1024;

/** The store's address for a path: the configured base URL joined with the path and query as the device sent them. */
export function storeUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path.startsWith('/') ? path : `/${path}`}`;
}

/** Throws OutgoingRequestError when the store cannot be reached or answers too much or too slowly. */
export async function forwardToStore(http: HttpClient, base: string, request: StoreRequest): Promise<StoreResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  for (const [name, value] of Object.entries(request.headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || lower === 'x-kobo-synctoken') continue;
    if (FORWARDED.has(lower) || lower.startsWith('x-kobo-')) headers[lower] = Array.isArray(value) ? value.join(', ') : value;
  }
  if (request.storeSyncToken) headers['x-kobo-synctoken'] = request.storeSyncToken;
  const method = request.method.toUpperCase() as 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  const withBody = method !== 'GET' && method !== 'DELETE';
  const response = await http.request({
    url: storeUrl(base, request.path),
    method,
    headers,
    ...(withBody ? { body: JSON.stringify(request.body ?? {}) } : {}),
    timeoutMs: STORE_TIMEOUT_MS,
    maxBytes: STORE_MAX_BYTES,
    maxRedirects: 3,
    anyStatus: true,
  });
  const kobo: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) if (name.startsWith('x-kobo-')) kobo[name] = value;
  if (response.body.length === 0) return { status: response.status, headers: kobo, body: undefined, json: false };
  try {
    return { status: response.status, headers: kobo, body: JSON.parse(response.body.toString('utf8')) as unknown, json: true };
  } catch {
    return { status: response.status, headers: kobo, body: response.body, json: false };
  }
}

/** Kobo's cover CDN, where covers of store books are (307 from the thumbnail route when forwarding). */
export function storeCoverUrl(imageId: string, width: number, height: number, greyscale: boolean): string {
  return `https://cdn.kobo.com/book-images/${encodeURIComponent(imageId)}/${width}/${height}/${greyscale}/image.jpg`;
}
