// Sessions: an access token plus a refresh token that is stored, used once (rotation) and revocable.
import type { Db } from '../store/store.ts';
import { accountError } from './account-error.ts';
import type { SignInPolicy } from './login-rate-limit.ts';
import { ACCESS_TOKEN_SECONDS, REFRESH_TOKEN_SECONDS, signToken, verifyRefreshToken, type TokenClaims } from './tokens.ts';

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  /** Lifetime of the access token in seconds. */
  expires: number;
}

/** The claims a new token for this user carries, read fresh from the catalog. */
export async function sessionClaims(db: Db, userId: number): Promise<TokenClaims | undefined> {
  const user = await db.selectFrom('users').select(['id', 'username', 'is_default_password', 'session_version']).where('id', '=', userId).executeTakeFirst();
  return user ? { userId: user.id, username: user.username, isDefaultPassword: user.is_default_password === 1, sessionVersion: user.session_version } : undefined;
}

function refreshExpiry(lifetimeSeconds = REFRESH_TOKEN_SECONDS): string {
  return new Date(Date.now() + lifetimeSeconds * 1000).toISOString();
}

/** Drops the user's revoked and expired refresh tokens so the table does not grow with every sign-in. */
async function pruneRefreshTokens(db: Db, userId: number): Promise<void> {
  const now = new Date().toISOString();
  await db
    .deleteFrom('refresh_token')
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('revoked', '=', 1), eb('expiry_date', '<', now)]))
    .execute();
}

/**
 * Signs a new access/refresh pair for the user (claims read fresh from the catalog, session version included) and
 * stores the refresh token. `refreshLifetimeSeconds` shortens or lengthens the refresh token of this sign-in only
 * (OIDC session duration); its rotations get the standard lifetime.
 */
export async function issueTokens(db: Db, secret: Uint8Array, userId: number, refreshLifetimeSeconds = REFRESH_TOKEN_SECONDS): Promise<IssuedTokens> {
  const claims = await sessionClaims(db, userId);
  if (!claims) throw new Error(`cannot sign in user ${userId}: no such user`);
  const accessToken = await signToken(secret, claims, 'access', ACCESS_TOKEN_SECONDS);
  const refreshToken = await signToken(secret, claims, 'refresh', refreshLifetimeSeconds);
  await pruneRefreshTokens(db, claims.userId);
  await db.insertInto('refresh_token').values({ user_id: claims.userId, token: refreshToken, expiry_date: refreshExpiry(refreshLifetimeSeconds), revoked: 0 }).execute();
  return { accessToken, refreshToken, expires: ACCESS_TOKEN_SECONDS };
}

/** The user a stored, unrevoked, unexpired refresh token of ours belongs to; undefined for anything else. */
export async function liveRefreshTokenOwner(db: Db, secret: Uint8Array, token: string): Promise<{ tokenId: number; userId: number } | undefined> {
  const stored = await db.selectFrom('refresh_token').select(['id', 'user_id', 'revoked', 'expiry_date']).where('token', '=', token).executeTakeFirst();
  if (!stored || stored.revoked === 1 || Date.parse(stored.expiry_date) <= Date.now()) return undefined;
  const valid = await verifyRefreshToken(secret, token);
  return valid && valid.userId === stored.user_id ? { tokenId: stored.id, userId: stored.user_id } : undefined;
}

/**
 * Trades a stored, unrevoked, unexpired refresh token for a new pair; the old token is revoked (rotation).
 * Failures count against the caller's address in the sign-in policy.
 */
export async function refreshSession(db: Db, secret: Uint8Array, policy: SignInPolicy, ip: string, token: string): Promise<IssuedTokens> {
  if (await policy.isBlocked(ip, 'refresh')) throw accountError('RATE_LIMITED');
  const fail = async (): Promise<never> => {
    await policy.recordFailure(ip, 'refresh');
    throw accountError('INVALID_CREDENTIALS');
  };
  const stored = await liveRefreshTokenOwner(db, secret, token);
  if (!stored) return fail();
  const claims = await sessionClaims(db, stored.userId);
  if (!claims) return fail();

  const refreshToken = await signToken(secret, claims, 'refresh', REFRESH_TOKEN_SECONDS);
  const rotated = await db.transaction().execute(async (trx) => {
    // Only one of two concurrent refreshes with the same token may win.
    const revoked = await trx
      .updateTable('refresh_token')
      .set({ revoked: 1, revocation_date: new Date().toISOString() })
      .where('id', '=', stored.tokenId)
      .where('revoked', '=', 0)
      .executeTakeFirst();
    if (Number(revoked.numUpdatedRows) !== 1) return false;
    await trx.insertInto('refresh_token').values({ user_id: claims.userId, token: refreshToken, expiry_date: refreshExpiry(), revoked: 0 }).execute();
    return true;
  });
  if (!rotated) return fail();
  await policy.recordSuccess(ip, 'refresh');
  return { accessToken: await signToken(secret, claims, 'access', ACCESS_TOKEN_SECONDS), refreshToken, expires: ACCESS_TOKEN_SECONDS };
}

/** Revokes every live refresh token of the user (logout; sessions.ts for sign-out everywhere). Returns how many. */
export async function revokeRefreshTokens(db: Db, userId: number): Promise<number> {
  const result = await db
    .updateTable('refresh_token')
    .set({ revoked: 1, revocation_date: new Date().toISOString() })
    .where('user_id', '=', userId)
    .where('revoked', '=', 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
