// "Test connection" in the OIDC settings: checks, one by one, what a sign-in will need from the provider, without
// signing anyone in. Each check passes, fails, warns or is skipped when an earlier one failed.
import { fetchMetadata } from './discovery.ts';
import { hostsOf, providerFetch } from './provider-fetch.ts';

export type CheckStatus = 'PASS' | 'FAIL' | 'WARN' | 'SKIP';

export interface OidcTestCheck {
  name: string;
  status: CheckStatus;
  message: string;
}

export interface OidcTestResult {
  success: boolean;
  checks: OidcTestCheck[];
}

export interface ProviderToTest {
  issuerUri?: string | null;
  clientId?: string | null;
  clientSecret?: string | null;
  scopes?: string | null;
}

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export async function diagnoseProvider(provider: ProviderToTest, allowPrivateHosts: readonly string[]): Promise<OidcTestResult> {
  const checks: OidcTestCheck[] = [];
  const add = (name: string, status: CheckStatus, message: string): void => void checks.push({ name, status, message });
  const issuer = provider.issuerUri?.trim() ?? '';
  const clientId = provider.clientId?.trim() ?? '';

  let issuerOk = false;
  try {
    const url = new URL(issuer);
    issuerOk = url.protocol === 'https:' || url.protocol === 'http:';
    if (!issuerOk) add('Issuer URI', 'FAIL', `${issuer} is not an http(s) URL`);
    else if (url.protocol === 'http:') add('Issuer URI', 'WARN', `${issuer} uses plain HTTP; use HTTPS unless the provider is on a trusted network`);
    else add('Issuer URI', 'PASS', issuer);
  } catch {
    add('Issuer URI', 'FAIL', issuer === '' ? 'The issuer URI is empty' : `${issuer} is not a URL`);
  }
  add('Client ID', clientId === '' ? 'FAIL' : 'PASS', clientId === '' ? 'The client ID is empty' : clientId);

  const later = ['Discovery document', 'Signing keys', 'Token endpoint', 'Scopes'];
  if (!issuerOk) {
    for (const name of later) add(name, 'SKIP', 'Skipped: the issuer URI is not usable');
    return { success: false, checks };
  }

  let metadata: Awaited<ReturnType<typeof fetchMetadata>>;
  try {
    metadata = await fetchMetadata(providerFetch(allowPrivateHosts, hostsOf([issuer])), issuer);
    add('Discovery document', 'PASS', `Found; the provider names itself ${metadata.issuer}`);
  } catch (error) {
    add('Discovery document', 'FAIL', reason(error));
    for (const name of later.slice(1)) add(name, 'SKIP', 'Skipped: the discovery document could not be read');
    return { success: false, checks };
  }

  const fetch = providerFetch(allowPrivateHosts, hostsOf([issuer, metadata.jwks_uri, metadata.token_endpoint]));
  try {
    const response = await fetch(metadata.jwks_uri as string, { method: 'GET', headers: { accept: 'application/json' } });
    const keys = response.status === 200 ? ((await response.json()) as { keys?: unknown[] }).keys : undefined;
    if (Array.isArray(keys) && keys.length > 0) add('Signing keys', 'PASS', `${keys.length} key(s) at ${metadata.jwks_uri}`);
    else add('Signing keys', 'FAIL', `${metadata.jwks_uri} answered ${response.status} without keys`);
  } catch (error) {
    add('Signing keys', 'FAIL', reason(error));
  }

  const token = metadata.token_endpoint as string;
  add('Token endpoint', token.startsWith('https:') ? 'PASS' : 'WARN', token.startsWith('https:') ? token : `${token} uses plain HTTP: the client secret would cross the network unencrypted`);

  const wanted = (provider.scopes?.trim() || 'openid profile email').split(/[\s,]+/).filter(Boolean);
  const supported = metadata.scopes_supported;
  if (!wanted.includes('openid')) add('Scopes', 'FAIL', `The scopes (${wanted.join(' ')}) must include openid`);
  else if (!supported) add('Scopes', 'PASS', `${wanted.join(' ')} (the provider does not list its scopes)`);
  else {
    const unknown = wanted.filter((scope) => !supported.includes(scope));
    add('Scopes', unknown.length === 0 ? 'PASS' : 'WARN', unknown.length === 0 ? wanted.join(' ') : `The provider does not list ${unknown.join(', ')}`);
  }
  return { success: checks.every((check) => check.status !== 'FAIL'), checks };
}
