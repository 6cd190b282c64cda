// Trading the authorization code for the provider's tokens and checking the ID token: signature (the provider's
// keys), issuer, audience, authorized party, expiry, nonce (openid-client), and, as Grimmory does, an issue time no
// older than five and a half minutes and the access-token hash when present. Then the userinfo claims.
import { createHash } from 'node:crypto';
import { decodeProtectedHeader } from 'jose';
import * as client from 'openid-client';
import { OutgoingRequestError } from '../../net/http-client.ts';
import { invalidToken, OidcError, providerUnreachable, tokenExchangeFailed } from './oidc-error.ts';
import type { ProviderClient } from './discovery.ts';

const MAX_ID_TOKEN_AGE_SECONDS = 300;
const CLOCK_SKEW_SECONDS = 30;

export interface CodeGrant {
  code: string;
  codeVerifier: string;
  redirectUri: string;
  nonce: string;
}

export interface ProviderTokens {
  idToken: string;
  /** Claims of the verified ID token. */
  claims: Record<string, unknown>;
  accessToken: string | undefined;
  /** Userinfo claims; empty when the provider has no userinfo endpoint or it failed (the ID token suffices). */
  userInfo: Record<string, unknown>;
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e: unknown = error; e !== undefined && e !== null && chain.length < 8; e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
}

/** A failure of openid-client as one of Grimmory's OIDC errors. */
export function describeProviderError(error: unknown): OidcError {
  if (error instanceof OidcError) return error;
  const chain = causes(error);
  const outgoing = chain.find((e): e is OutgoingRequestError => e instanceof OutgoingRequestError);
  if (outgoing) return providerUnreachable(outgoing.message);
  if (error instanceof client.ResponseBodyError) return tokenExchangeFailed(`${error.error} ${error.error_description ?? ''}`.trim());
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof client.ClientError && (error.code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' || error.code === 'OAUTH_RESPONSE_IS_NOT_JSON')) return tokenExchangeFailed(message);
  return invalidToken(message);
}

const HASHES: Record<string, string> = { 256: 'sha256', 384: 'sha384', 512: 'sha512' };

/** OIDC Core's at_hash: the left half of the access token's hash, with the hash the ID token's algorithm uses. */
export function accessTokenHash(accessToken: string, alg: string): string {
  const bits = alg === 'EdDSA' || alg === 'Ed25519' ? '512' : alg.slice(-3);
  const digest = createHash(HASHES[bits] ?? 'sha256').update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

function checkIssuedAt(claims: Record<string, unknown>, now: number): void {
  const iat = claims.iat;
  if (typeof iat !== 'number') throw invalidToken('ID token missing iat claim');
  if (now / 1000 > iat + MAX_ID_TOKEN_AGE_SECONDS + CLOCK_SKEW_SECONDS) throw invalidToken('ID token was issued too long ago');
}

function checkAccessTokenHash(claims: Record<string, unknown>, idToken: string, accessToken: string | undefined): void {
  if (typeof claims.at_hash !== 'string' || !accessToken) return;
  const { alg } = decodeProtectedHeader(idToken);
  if (typeof alg === 'string' && accessTokenHash(accessToken, alg) !== claims.at_hash) throw invalidToken('ID token at_hash mismatch');
}

async function userInfoOf(provider: ProviderClient, accessToken: string | undefined, subject: string): Promise<Record<string, unknown>> {
  if (!accessToken || !provider.metadata.userinfo_endpoint) return {};
  try {
    return { ...(await client.fetchUserInfo(provider.config, accessToken, subject)) };
  } catch {
    // Grimmory carries on with the ID token's claims alone.
    return {};
  }
}

export async function exchangeCode(provider: ProviderClient, grant: CodeGrant, now = Date.now()): Promise<ProviderTokens> {
  // The client validated the state already; `iss` is added because providers that announce it expect it back.
  let callback: URL;
  try {
    callback = new URL(grant.redirectUri);
  } catch {
    throw tokenExchangeFailed('redirect URI is not a URL');
  }
  callback.search = '';
  callback.hash = '';
  callback.searchParams.set('code', grant.code);
  if (provider.metadata.authorization_response_iss_parameter_supported) callback.searchParams.set('iss', provider.metadata.issuer);

  let response: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  try {
    response = await client.authorizationCodeGrant(provider.config, callback, { pkceCodeVerifier: grant.codeVerifier, expectedNonce: grant.nonce, idTokenExpected: true });
  } catch (error) {
    throw describeProviderError(error);
  }
  const idToken = response.id_token;
  const claims = response.claims();
  if (!idToken || !claims) throw invalidToken('No ID token received from OIDC provider');
  const plain = { ...claims } as Record<string, unknown>;
  checkIssuedAt(plain, now);
  checkAccessTokenHash(plain, idToken, response.access_token);
  return { idToken, claims: plain, accessToken: response.access_token, userInfo: await userInfoOf(provider, response.access_token, claims.sub) };
}
