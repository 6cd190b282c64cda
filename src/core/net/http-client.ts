// The one way out to the internet (metadata providers, cover URLs, the Kobo store). It refuses private, loopback and
// link-local addresses — checked when the connection is made, so a name that resolves differently the second time
// cannot slip through — and checks again on every redirect; it caps time and size and checks the content type.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import type * as Undici from 'undici';
import type { Agent, Dispatcher } from 'undici';
import { CodedError } from '../coded-error.ts';
import { VERSION } from '../../version.ts';
import { bareHost, isAllowedHost, isPublicAddress } from './address-policy.ts';

export interface OutgoingRequest {
  url: string;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Allowed media types of a 2xx answer: `application/json`, or a family prefix such as `image/`. Omit: any. */
  accept?: readonly string[];
  /** The whole request, body included. */
  timeoutMs?: number;
  maxBytes?: number;
  maxRedirects?: number;
  /** Return non-2xx answers instead of throwing HTTP_STATUS (e.g. for proxying). */
  anyStatus?: boolean;
}

export interface OutgoingResponse {
  status: number;
  /** The address that answered, after redirects. */
  url: string;
  headers: Record<string, string>;
  /** Media type without parameters, lower case; empty when the server sent none. */
  contentType: string;
  body: Buffer;
  text(): string;
  json(): unknown;
}

export interface HttpClient {
  request(req: OutgoingRequest): Promise<OutgoingResponse>;
}

export interface HttpClientOptions {
  /** Hosts (names or addresses) that may be reached even though they are private or loopback: a LAN mirror, tests. */
  allowPrivateHosts?: readonly string[];
  userAgent?: string;
}

export type OutgoingErrorCode = 'INVALID_URL' | 'BLOCKED_ADDRESS' | 'TIMEOUT' | 'TOO_LARGE' | 'BAD_CONTENT_TYPE' | 'HTTP_STATUS' | 'TOO_MANY_REDIRECTS' | 'NETWORK';

export class OutgoingRequestError extends CodedError<OutgoingErrorCode> {
  readonly status: number | undefined;
  constructor(code: OutgoingErrorCode, message: string, status?: number) {
    super(code, message);
    this.status = status;
  }
}

export const DEFAULT_TIMEOUT_MS = 15_000;
export const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
const DEFAULT_MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** `dns.lookup` that answers only with public addresses, and fails when a name has any other. */
function publicOnlyLookup(hostname: string, options: LookupOptions, callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '');
    const blocked = addresses.find((entry) => !isPublicAddress(entry.address));
    if (blocked || addresses.length === 0) {
      return callback(new OutgoingRequestError('BLOCKED_ADDRESS', `${hostname} resolves to ${blocked?.address ?? 'nothing'}, which is not a public address`), '');
    }
    if (options.all) return callback(null, addresses);
    const first = addresses[0] as LookupAddress;
    return callback(null, first.address, first.family);
  });
}

function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutgoingRequestError('INVALID_URL', `not a valid URL: ${raw.slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutgoingRequestError('INVALID_URL', `only http and https URLs can be fetched, not ${url.protocol}`);
  if (url.username || url.password) throw new OutgoingRequestError('INVALID_URL', 'URLs with credentials are not fetched');
  return url;
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}

export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

export function acceptsMediaType(accept: readonly string[] | undefined, type: string): boolean {
  if (!accept) return true;
  return accept.some((wanted) => (wanted.endsWith('/') ? type.startsWith(wanted) : type === wanted.toLowerCase()));
}

/** Drops an answer's body unread; undici reports the abort as a stream error, which nobody is waiting for. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

async function readCapped(body: Dispatcher.ResponseData['body'], maxBytes: number, url: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      discard(body);
      throw new OutgoingRequestError('TOO_LARGE', `${url} answered with more than ${maxBytes} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size);
}

function describeNetworkError(error: unknown, url: string): OutgoingRequestError {
  if (error instanceof OutgoingRequestError) return error;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof OutgoingRequestError) return cause;
  const message = error instanceof Error ? error.message : String(error);
  return new OutgoingRequestError('NETWORK', `${url}: ${message}`);
}

// undici loads on the first outgoing request, not when the daemon starts.
let undici: Promise<typeof Undici> | undefined;
const loadUndici = (): Promise<typeof Undici> => (undici ??= import('undici'));

export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const allowPrivateHosts = options.allowPrivateHosts ?? [];
  const userAgent = options.userAgent ?? `Bindery/${VERSION}`;
  let guarded: Agent | undefined;
  let open: Agent | undefined;

  /** The agent for this URL, after refusing an address literal that is not public. */
  function agentFor(url: URL, { Agent }: typeof Undici): Agent {
    if (isAllowedHost(url.hostname, allowPrivateHosts)) return (open ??= new Agent({ connections: 16 }));
    const host = bareHost(url.hostname);
    if (isIP(host) !== 0 && !isPublicAddress(host)) throw new OutgoingRequestError('BLOCKED_ADDRESS', `${host} is not a public address`);
    return (guarded ??= new Agent({ connections: 16, connect: { lookup: publicOnlyLookup } }));
  }

  async function request(req: OutgoingRequest): Promise<OutgoingResponse> {
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxBytes = req.maxBytes ?? DEFAULT_MAX_BYTES;
    const maxRedirects = req.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    let url = parseUrl(req.url);
    let method: string = req.method ?? 'GET';
    let body = req.body;
    try {
      for (let hop = 0; ; hop++) {
        const lib = await loadUndici();
        const dispatcher = agentFor(url, lib);
        let response: Dispatcher.ResponseData;
        try {
          response = await lib.request(url, {
            dispatcher,
            method: method as Dispatcher.HttpMethod,
            headers: { 'user-agent': userAgent, ...req.headers },
            body,
            signal: abort.signal,
          });
        } catch (error) {
          if (abort.signal.aborted) throw new OutgoingRequestError('TIMEOUT', `${url.origin} did not answer within ${timeoutMs} ms`);
          throw describeNetworkError(error, url.origin);
        }
        const headers = flattenHeaders(response.headers);
        if (REDIRECT_STATUSES.has(response.statusCode) && headers.location) {
          discard(response.body);
          if (hop >= maxRedirects) throw new OutgoingRequestError('TOO_MANY_REDIRECTS', `${req.url} redirected more than ${maxRedirects} times`);
          url = parseUrl(new URL(headers.location, url).href);
          if (response.statusCode === 303 || ((response.statusCode === 301 || response.statusCode === 302) && method === 'POST')) {
            method = 'GET';
            body = undefined;
          }
          continue;
        }
        const declared = Number(headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          discard(response.body);
          throw new OutgoingRequestError('TOO_LARGE', `${url.origin} announced ${declared} bytes, more than the ${maxBytes} allowed`);
        }
        const ok = response.statusCode >= 200 && response.statusCode < 300;
        if (!ok && !req.anyStatus) {
          discard(response.body);
          throw new OutgoingRequestError('HTTP_STATUS', `${url.origin}${url.pathname} answered ${response.statusCode}`, response.statusCode);
        }
        const contentType = mediaType(headers['content-type']);
        if (ok && !acceptsMediaType(req.accept, contentType)) {
          discard(response.body);
          throw new OutgoingRequestError('BAD_CONTENT_TYPE', `${url.origin}${url.pathname} answered ${contentType || 'without a content type'}, expected ${req.accept?.join(' or ')}`, response.statusCode);
        }
        let data: Buffer;
        try {
          data = await readCapped(response.body, maxBytes, url.origin);
        } catch (error) {
          if (abort.signal.aborted) throw new OutgoingRequestError('TIMEOUT', `${url.origin} did not finish answering within ${timeoutMs} ms`);
          throw describeNetworkError(error, url.origin);
        }
        const finalUrl = url.href;
        return {
          status: response.statusCode,
          url: finalUrl,
          headers,
          contentType,
          body: data,
          text: () => data.toString('utf8'),
          json: () => {
            try {
              return JSON.parse(data.toString('utf8')) as unknown;
            } catch {
              throw new OutgoingRequestError('BAD_CONTENT_TYPE', `${finalUrl} did not answer with valid JSON`, response.statusCode);
            }
          },
        };
      }
    } finally {
      clearTimeout(timer);
    }
  }

  return { request };
}
