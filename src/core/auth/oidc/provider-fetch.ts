// openid-client and jose do their own HTTP; this hands them a fetch that goes through Bindery's outgoing client, so
// requests to the provider keep its time and size caps and its address rule. The provider's hosts are exempt from
// that rule, as an SMTP host is: the administrator typed the issuer URL, and a provider on the LAN is the common case.
import { createHttpClient, type HttpClient, type OutgoingRequest } from '../../net/http-client.ts';

export type ProviderFetch = (url: string, options: { method?: string; headers?: Record<string, string> | Headers; body?: unknown; signal?: AbortSignal | null }) => Promise<Response>;

const TIMEOUT_MS = 10_000;
const MAX_BYTES = 1024 * 1024;
const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'PATCH']);
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** The host names of the given URLs (unparseable ones skipped). */
export function hostsOf(urls: readonly (string | undefined)[]): string[] {
  const hosts = new Set<string>();
  for (const url of urls) {
    if (!url) continue;
    try {
      hosts.add(new URL(url).hostname);
    } catch {
      // not a URL: nothing to allow
    }
  }
  return [...hosts];
}

function bodyOf(body: unknown): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError('unsupported request body for the OIDC provider');
}

function headersOf(headers: Record<string, string> | Headers | undefined, body: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers instanceof Headers) headers.forEach((value, name) => (out[name.toLowerCase()] = value));
  else for (const [name, value] of Object.entries(headers ?? {})) out[name.toLowerCase()] = value;
  if (body instanceof URLSearchParams && !out['content-type']) out['content-type'] = 'application/x-www-form-urlencoded;charset=UTF-8';
  return out;
}

/** A fetch for the provider whose hosts are `providerHosts` (plus the configured allow list). */
export function providerFetch(allowPrivateHosts: readonly string[], providerHosts: readonly string[]): ProviderFetch {
  const client: HttpClient = createHttpClient({ allowPrivateHosts: [...allowPrivateHosts, ...providerHosts] });
  return async (url, options) => {
    const method = (options.method ?? 'GET').toUpperCase();
    if (!METHODS.has(method)) throw new TypeError(`unsupported method ${method}`);
    const request: OutgoingRequest = {
      url,
      method: method as OutgoingRequest['method'],
      headers: headersOf(options.headers, options.body),
      timeoutMs: TIMEOUT_MS,
      maxBytes: MAX_BYTES,
      // The provider's back-channel endpoints answer directly; a redirect there is an error.
      maxRedirects: 0,
      anyStatus: true,
    };
    const body = bodyOf(options.body);
    if (body !== undefined) request.body = body;
    const answer = await client.request(request);
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) headers.set(name, value);
    return new Response(NULL_BODY_STATUSES.has(answer.status) ? null : new Uint8Array(answer.body), { status: answer.status, headers });
  };
}
