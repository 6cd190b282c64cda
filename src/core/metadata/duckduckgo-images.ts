// DuckDuckGo's image search, which Grimmory's cover search uses: the results page (`/?q=…&iar=images`) hands out a
// per-query token (`vqd`), and `/i.js?o=json&q=…&vqd=…` answers the images as JSON with their sizes.
import type { HttpClient, OutgoingResponse } from '../net/http-client.ts';
import { OutgoingRequestError } from '../net/http-client.ts';
import { ProviderError, providerChanged, type RateLimiter } from './provider.ts';
import { blockedOrChanged } from './providers/page-parsing.ts';
import { asInt, asString, isObject } from './values.ts';

const NAME = 'DuckDuckGo';
export const DUCKDUCKGO_URL = 'https://duckduckgo.com';
const BROWSER_AGENT = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

export interface ImageHit {
  url: string;
  width: number;
  height: number;
}

export interface ImageSearchClient {
  http: HttpClient;
  /** Without a trailing slash. */
  baseUrl: string;
  limiter: RateLimiter;
  timeoutMs: number;
}

/** The `vqd` token of a results page (`vqd="4-1234…"`, `vqd='…'` or `vqd=4-…&`). */
export function vqdToken(html: string): string | undefined {
  return /vqd=["']?(\d+-[\d-]+)/.exec(html)?.[1];
}

export function parseImageResults(body: unknown): ImageHit[] {
  if (!isObject(body) || !Array.isArray(body.results)) throw providerChanged(NAME, 'the image answer has no "results"');
  const hits: ImageHit[] = [];
  for (const result of body.results) {
    if (!isObject(result)) continue;
    const url = asString(result.image);
    const width = asInt(result.width) ?? 0;
    const height = asInt(result.height) ?? 0;
    if (url && /^https?:\/\//.test(url)) hits.push({ url, width, height });
  }
  return hits;
}

/** `Set-Cookie` headers (joined by the client) → a `Cookie` header. */
function cookiesOf(response: OutgoingResponse): string | undefined {
  const raw = response.headers['set-cookie'];
  if (!raw) return undefined;
  const pairs = raw
    .split(/,(?=\s*[^;,=\s]+=)/)
    .map((c) => c.split(';')[0]?.trim())
    .filter((c): c is string => c !== undefined && c.includes('='));
  return pairs.length > 0 ? pairs.join('; ') : undefined;
}

async function get(client: ImageSearchClient, url: string, headers: Record<string, string>): Promise<OutgoingResponse> {
  await client.limiter.acquire();
  let response: OutgoingResponse;
  try {
    response = await client.http.request({ url, headers: { 'user-agent': BROWSER_AGENT, 'accept-language': 'en-US,en;q=0.9', ...headers }, timeoutMs: client.timeoutMs, anyStatus: true });
  } catch (error) {
    if (error instanceof OutgoingRequestError && error.code === 'TIMEOUT') throw new ProviderError(NAME, 'TIMEOUT', `did not answer within ${client.timeoutMs} ms`);
    throw new ProviderError(NAME, 'UNAVAILABLE', `cannot be reached: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (response.status === 403 || response.status === 418) throw new ProviderError(NAME, 'BLOCKED', `refused access (HTTP ${response.status}); it may be blocking automated requests from this server`);
  if (response.status === 429) throw new ProviderError(NAME, 'RATE_LIMITED', 'asked to slow down (HTTP 429)');
  if (response.status < 200 || response.status >= 300) throw new ProviderError(NAME, 'UNAVAILABLE', `answered HTTP ${response.status}`);
  return response;
}

/**
 * Images for a query, as DuckDuckGo ranks them. `filters` is its `iaf` value (`size:Large,layout:Tall`); `query` may
 * carry operators such as `site:amazon.com`.
 */
export async function searchImages(client: ImageSearchClient, query: string, filters: string): Promise<ImageHit[]> {
  const params = new URLSearchParams({ q: query, iar: 'images', iax: 'images', ia: 'images', iaf: filters });
  const pageUrl = `${client.baseUrl}/?${params.toString()}`;
  const page = await get(client, pageUrl, { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' });
  const html = page.text();
  const token = vqdToken(html);
  if (!token) throw blockedOrChanged(NAME, html, 'the results page has no search token');
  const cookie = cookiesOf(page);
  const jsonParams = new URLSearchParams({ o: 'json', q: query, iar: 'images', iaf: filters, vqd: token, l: 'us-en', p: '1' });
  const answer = await get(client, `${client.baseUrl}/i.js?${jsonParams.toString()}`, {
    accept: 'application/json, text/javascript, */*; q=0.01',
    referer: pageUrl,
    'x-requested-with': 'XMLHttpRequest',
    'x-vqd-4': token,
    ...(cookie ? { cookie } : {}),
  });
  let body: unknown;
  try {
    body = JSON.parse(answer.text()) as unknown;
  } catch {
    throw blockedOrChanged(NAME, answer.text(), 'the image answer is not JSON');
  }
  return parseImageResults(body);
}
