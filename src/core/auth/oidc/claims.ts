// Who signed in, from the ID token's claims and the userinfo answer: each value from the claim the settings name,
// else the standard one, looked up in the ID token first. A user without a username claim is named by e-mail or subject.
import type { ClaimMapping } from './oidc-settings.ts';

export interface OidcIdentity {
  subject: string;
  username: string;
  email: string | null;
  name: string | null;
  pictureUrl: string | null;
  /** Group names the provider put in the groups claim (empty when none). */
  groups: string[];
  /** The provider's session id (`sid`), which back-channel logout names. */
  sessionId: string | null;
}

type Claims = Record<string, unknown>;

function candidates(primary: string | null, fallback: string): string[] {
  return primary && primary !== fallback ? [primary, fallback] : [fallback];
}

function firstString(sources: readonly Claims[], names: readonly string[]): string | null {
  for (const source of sources) {
    for (const name of names) {
      const value = source[name];
      if (typeof value === 'string' && value !== '') return value;
    }
  }
  return null;
}

function firstList(sources: readonly Claims[], names: readonly string[]): string[] {
  for (const source of sources) {
    for (const name of names) {
      const value = source[name];
      if (Array.isArray(value)) {
        const list = value.filter((v): v is string => typeof v === 'string');
        if (list.length > 0) return list;
      }
    }
  }
  return [];
}

/** Grimmory's order: primary then fallback claim in the ID token, then the same two in userinfo. */
function lookup<T>(idToken: Claims, userInfo: Claims, names: string[], pick: (sources: readonly Claims[], names: readonly string[]) => T, empty: (v: T) => boolean): T {
  for (const name of names) {
    const fromToken = pick([idToken], [name]);
    if (!empty(fromToken)) return fromToken;
  }
  return pick([userInfo], names);
}

export function identityFrom(idToken: Claims, userInfo: Claims, mapping: ClaimMapping): OidcIdentity {
  const text = (primary: string | null, fallback: string): string | null => lookup(idToken, userInfo, candidates(primary, fallback), firstString, (v) => v === null);
  const subject = typeof idToken.sub === 'string' ? idToken.sub : '';
  const email = text(mapping.email, 'email');
  const username = text(mapping.username, 'preferred_username') ?? email ?? subject;
  return {
    subject,
    username,
    email,
    name: text(mapping.name, 'name'),
    pictureUrl: text(null, 'picture'),
    groups: lookup(idToken, userInfo, candidates(mapping.groups, 'groups'), firstList, (v) => v.length === 0),
    sessionId: typeof idToken.sid === 'string' ? idToken.sid : null,
  };
}
