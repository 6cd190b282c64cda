// OIDC Back-Channel Logout: the provider posts a signed logout token when someone signs out there; every Bindery
// session of that provider session (`sid`), or else of that subject, ends: its user is signed out everywhere
// (sessions.ts).
// A token is accepted once: its `jti` is remembered, and a second delivery is OIDC_LOGOUT_REPLAY.
import { createRemoteJWKSet, customFetch, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { Db } from '../../store/store.ts';
import { revokeAllSessions } from '../sessions.ts';
import { providerClient, sameIssuer, type ProviderClient } from './discovery.ts';
import { logoutInvalid, logoutMissingJti, logoutReplay, OidcError } from './oidc-error.ts';
import type { OidcDeps } from './oidc-login.ts';
import { liveSessions, revokeSessions } from './oidc-sessions.ts';
import { loadOidcSettings, type OidcProvider } from './oidc-settings.ts';

const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
const CLOCK_SKEW_SECONDS = 30;
const MAX_AGE_SECONDS = 300;
/** How long a processed jti is remembered; older tokens fail the issue-time check anyway. */
const JTI_RETENTION_MS = 60 * 60 * 1000;
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

export interface LogoutOutcome {
  /** Users whose sessions were ended. */
  users: { id: number; username: string }[];
}

const keySets = new WeakMap<ProviderClient, ReturnType<typeof createRemoteJWKSet>>();

function keysOf(client: ProviderClient): ReturnType<typeof createRemoteJWKSet> {
  let keys = keySets.get(client);
  if (!keys) {
    keys = createRemoteJWKSet(new URL(client.metadata.jwks_uri as string), { [customFetch]: client.fetch as never });
    keySets.set(client, keys);
  }
  return keys;
}

/** Verifies the logout token against the provider's keys and the rules of the Back-Channel Logout spec. */
export async function verifyLogoutToken(client: ProviderClient, provider: OidcProvider, token: string, now = Date.now()): Promise<JWTPayload> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw logoutInvalid('Invalid OIDC logout token');
  }
  if (header.typ !== undefined && !['jwt', 'logout+jwt', 'application/logout+jwt'].includes(header.typ.toLowerCase())) throw logoutInvalid('Invalid OIDC logout token');
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keysOf(client), { audience: provider.clientId, algorithms: ALGORITHMS, clockTolerance: CLOCK_SKEW_SECONDS, currentDate: new Date(now) }));
  } catch {
    throw logoutInvalid('Invalid OIDC logout token');
  }
  if (typeof payload.iss !== 'string' || !sameIssuer(payload.iss, client.metadata.issuer)) throw logoutInvalid('Invalid OIDC logout token');
  if (typeof payload.iat !== 'number' || now / 1000 > payload.iat + MAX_AGE_SECONDS + CLOCK_SKEW_SECONDS) throw logoutInvalid('Invalid OIDC logout token');
  const events = payload.events;
  if (!events || typeof events !== 'object' || !(LOGOUT_EVENT in events)) throw logoutInvalid('Logout token missing backchannel-logout event claim');
  if (payload.nonce !== undefined) throw logoutInvalid('Logout token must not contain a nonce claim');
  return payload;
}

/** Remembers the jti; false when it was already there (a replay). */
async function firstDelivery(db: Db, jti: string, expiresAtSeconds: number | undefined, now: number): Promise<boolean> {
  const keepUntil = new Date(Math.max(now + JTI_RETENTION_MS, ((expiresAtSeconds ?? 0) + CLOCK_SKEW_SECONDS) * 1000)).toISOString();
  return db.transaction().execute(async (trx) => {
    await trx.deleteFrom('oidc_logout_jti').where('expires_at', '<=', new Date(now).toISOString()).execute();
    // The key decides: of two replicas handed the same token at once, one inserts and the other finds it taken.
    const stored = await trx.insertInto('oidc_logout_jti').values({ jti, expires_at: keepUntil }).onConflict((oc) => oc.column('jti').doNothing()).returning('jti').executeTakeFirst();
    return stored !== undefined;
  });
}

export async function handleLogoutToken(deps: OidcDeps, token: string, now = Date.now()): Promise<LogoutOutcome> {
  if (!token) throw logoutInvalid('Missing logout token');
  const settings = await loadOidcSettings(deps.db, deps.env);
  if (!settings.enabled) throw logoutInvalid('OIDC is not enabled');
  const provider = settings.provider;
  if (!provider) throw logoutInvalid('OIDC is not configured');

  let client: ProviderClient;
  try {
    client = await providerClient(provider, deps.allowPrivateHosts);
  } catch (error) {
    throw error instanceof OidcError ? logoutInvalid(error.message) : error;
  }
  const claims = await verifyLogoutToken(client, provider, token, now);
  if (typeof claims.jti !== 'string' || claims.jti.trim() === '') throw logoutMissingJti();
  if (!(await firstDelivery(deps.db, claims.jti, claims.exp, now))) throw logoutReplay();

  const sid = typeof claims.sid === 'string' && claims.sid !== '' ? claims.sid : undefined;
  const sub = typeof claims.sub === 'string' && claims.sub !== '' ? claims.sub : undefined;
  if (!sid && !sub) throw logoutInvalid("Logout token must contain either 'sub' or 'sid' claim");

  const sessions = await liveSessions(deps.db, sid ? { sid } : { subject: sub as string, issuer: provider.issuerUri });
  await revokeSessions(deps.db, sessions.map((s) => s.id));
  const userIds = [...new Set(sessions.map((s) => s.userId))];
  for (const userId of userIds) await revokeAllSessions(deps.db, userId, 'backchannel-logout');
  const users = userIds.length === 0 ? [] : await deps.db.selectFrom('users').select(['id', 'username']).where('id', 'in', userIds).execute();
  return { users };
}
