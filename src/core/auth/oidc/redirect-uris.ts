// Which redirect URIs a sign-in may name. The web UI's is `<its origin>/oauth2-callback` on the origin the request came
// from; a mobile app's is a custom-scheme deep link that must be on the OIDC_REDIRECT_URIS allow-list.
import { DEFAULT_MOBILE_REDIRECT_URI } from '../../settings/setting-defaults.ts';
import { invalidRedirectUri } from './oidc-error.ts';

const WILDCARD = '*';
/** Booklore's deep link, still accepted wherever Grimmory's default is. */
const LEGACY_MOBILE_REDIRECT_URI = 'booklore://oauth2-callback';
const CALLBACK_PATH = '/oauth2-callback';

function parse(uri: string): URL | undefined {
  try {
    return new URL(uri);
  } catch {
    return undefined;
  }
}

/** A deep link: some scheme other than http(s), and no fragment. */
export function isMobileRedirectUri(uri: string): boolean {
  const url = parse(uri);
  if (!url || uri.includes('#')) return false;
  return url.protocol !== 'http:' && url.protocol !== 'https:';
}

/** The allow-list in force: the configured one (the default when empty), with the legacy link beside the default. */
export function effectiveMobileRedirectUris(configured: readonly string[]): string[] {
  const list = configured.length === 0 ? [DEFAULT_MOBILE_REDIRECT_URI] : [...configured];
  if (list.includes(DEFAULT_MOBILE_REDIRECT_URI) && !list.includes(LEGACY_MOBILE_REDIRECT_URI)) list.push(LEGACY_MOBILE_REDIRECT_URI);
  return list;
}

function mobileAllowed(uri: string, configured: readonly string[]): boolean {
  const allowed = effectiveMobileRedirectUris(configured);
  return allowed.includes(WILDCARD) || allowed.includes(uri);
}

/**
 * The redirect URI sent with a code: a listed deep link, or an http(s) URL ending in `/oauth2-callback` on the origin
 * of the request (its Origin header, else the address it was made to).
 */
export function checkRedirectUri(uri: string, configured: readonly string[], requestOrigin: string | undefined): void {
  if (!uri || uri.trim() === '') throw invalidRedirectUri();
  if (isMobileRedirectUri(uri)) {
    if (!mobileAllowed(uri, configured)) throw invalidRedirectUri();
    return;
  }
  const url = parse(uri);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.pathname.endsWith(CALLBACK_PATH)) throw invalidRedirectUri();
  const origin = requestOrigin ? parse(requestOrigin.replace(/\/+$/, ''))?.origin : undefined;
  if (requestOrigin !== undefined && origin !== url.origin) throw invalidRedirectUri();
}

/** Where GET /redirect may send the tokens: only a listed deep link. */
export function checkAppRedirectUri(uri: string, configured: readonly string[]): void {
  if (!isMobileRedirectUri(uri) || !mobileAllowed(uri, configured)) throw invalidRedirectUri();
}
