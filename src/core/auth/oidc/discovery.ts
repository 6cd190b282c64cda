// The provider's metadata (its discovery document) and the openid-client configuration built on it, cached per
// provider setting for an hour as Grimmory does. The document is fetched here rather than by openid-client so that an
// issuer typed with or without a trailing slash still matches the one the provider announces.
import * as client from 'openid-client';
import { OutgoingRequestError } from '../../net/http-client.ts';
import { providerUnreachable } from './oidc-error.ts';
import type { OidcProvider } from './oidc-settings.ts';
import { hostsOf, providerFetch, type ProviderFetch } from './provider-fetch.ts';

const CACHE_TTL_MS = 60 * 60 * 1000;

export interface ProviderClient {
  config: client.Configuration;
  /** The fetch every request to this provider goes through (JWKS, userinfo, token endpoint). */
  fetch: ProviderFetch;
  metadata: Readonly<client.ServerMetadata>;
}

interface Cached {
  at: number;
  client: Promise<ProviderClient>;
}

const cache = new Map<string, Cached>();

const withoutTrailingSlashes = (url: string): string => url.replace(/\/+$/, '');

/** Same issuer, ignoring trailing slashes (Grimmory's comparison). */
export function sameIssuer(a: string, b: string): boolean {
  return withoutTrailingSlashes(a) === withoutTrailingSlashes(b);
}

function reason(error: unknown): string {
  if (error instanceof OutgoingRequestError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

export async function fetchMetadata(fetch: ProviderFetch, issuerUri: string): Promise<client.ServerMetadata> {
  const url = `${withoutTrailingSlashes(issuerUri)}/.well-known/openid-configuration`;
  let response: Response;
  try {
    response = await fetch(url, { method: 'GET', headers: { accept: 'application/json' } });
  } catch (error) {
    throw providerUnreachable(reason(error));
  }
  if (response.status !== 200) throw providerUnreachable(`${url} answered ${response.status}`);
  let document: unknown;
  try {
    document = await response.json();
  } catch {
    throw providerUnreachable(`${url} did not answer with JSON`);
  }
  const metadata = document as Partial<client.ServerMetadata> | null;
  if (!metadata || typeof metadata !== 'object' || typeof metadata.issuer !== 'string') throw providerUnreachable('discovery document has no issuer');
  if (!sameIssuer(metadata.issuer, issuerUri)) throw providerUnreachable(`discovery document names issuer ${metadata.issuer}, not ${issuerUri}`);
  if (typeof metadata.token_endpoint !== 'string') throw providerUnreachable('Token endpoint not found in discovery document');
  if (typeof metadata.jwks_uri !== 'string') throw providerUnreachable('jwks_uri not found in discovery document');
  return metadata as client.ServerMetadata;
}

async function buildClient(provider: OidcProvider, allowPrivateHosts: readonly string[]): Promise<ProviderClient> {
  const metadata = await fetchMetadata(providerFetch(allowPrivateHosts, hostsOf([provider.issuerUri])), provider.issuerUri);
  const endpoints = [metadata.issuer, metadata.token_endpoint, metadata.jwks_uri, metadata.userinfo_endpoint, metadata.end_session_endpoint];
  const fetch = providerFetch(allowPrivateHosts, hostsOf([provider.issuerUri, ...endpoints]));
  // Grimmory sends the client secret in the token request body (client_secret_post); providers are set up for that.
  const auth = provider.clientSecret ? client.ClientSecretPost(provider.clientSecret) : client.None();
  const config = new client.Configuration(metadata, provider.clientId, provider.clientSecret ?? undefined, auth);
  config[client.customFetch] = fetch as client.CustomFetch;
  // The ID token's signature is checked against the provider's keys even though it comes straight from the token
  // endpoint: the provider may sit behind plain HTTP on a LAN.
  client.enableNonRepudiationChecks(config);
  if (endpoints.some((url) => url?.startsWith('http:'))) client.allowInsecureRequests(config);
  return { config, fetch, metadata };
}

/** The client for the configured provider: discovered once an hour; a failed discovery is not remembered. */
export function providerClient(provider: OidcProvider, allowPrivateHosts: readonly string[]): Promise<ProviderClient> {
  const key = JSON.stringify([provider.issuerUri, provider.clientId, provider.clientSecret, allowPrivateHosts]);
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < CACHE_TTL_MS) return hit.client;
  for (const [other, entry] of cache) if (Date.now() - entry.at >= CACHE_TTL_MS) cache.delete(other);
  const built = buildClient(provider, allowPrivateHosts);
  cache.set(key, { at: Date.now(), client: built });
  built.catch(() => {
    if (cache.get(key)?.client === built) cache.delete(key);
  });
  return built;
}

/** Forgets every discovered provider (tests; a provider that rotated its endpoints). */
export function forgetProviders(): void {
  cache.clear();
}
