// Access and refresh tokens: HS256 JWTs with Grimmory's claims, signed with a secret kept in the catalog.
import { randomBytes } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import type { Db } from '../store/store.ts';

export const ACCESS_TOKEN_SECONDS = 2 * 60 * 60;
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 60 * 60;
const ISSUER = 'booklore';

export interface TokenClaims {
  userId: number;
  username: string;
  isDefaultPassword: boolean;
}

/** The signing secret, created on first use; every process sharing the catalog uses the same one. */
export async function signingSecret(db: Db): Promise<Uint8Array> {
  const existing = await db.selectFrom('jwt_secret').select('secret').orderBy('id', 'desc').executeTakeFirst();
  if (existing) return Buffer.from(existing.secret, 'base64');
  const secret = randomBytes(48).toString('base64');
  await db.transaction().execute(async (trx) => {
    const again = await trx.selectFrom('jwt_secret').select('id').executeTakeFirst();
    if (!again) await trx.insertInto('jwt_secret').values({ secret }).execute();
  });
  return signingSecret(db);
}

export async function signToken(secret: Uint8Array, claims: TokenClaims, lifetimeSeconds: number): Promise<string> {
  return new SignJWT({ userId: claims.userId, isDefaultPassword: claims.isDefaultPassword, jti: randomBytes(8).toString('hex') })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setSubject(claims.username)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + lifetimeSeconds)
    .sign(secret);
}

interface Verified {
  claims: { userId: number; username: string };
  /** Seconds since the epoch, as in the token. */
  exp: number;
}

/** Tokens verified recently, per secret: checking the signature is most of the cost of a small request. */
const verified = new WeakMap<Uint8Array, Map<string, Verified>>();
const VERIFIED_LIMIT = 1000;

/** The user id a valid token speaks for, or undefined for anything invalid, expired or malformed. */
export async function verifyToken(secret: Uint8Array, token: string): Promise<{ userId: number; username: string } | undefined> {
  let cache = verified.get(secret);
  if (!cache) verified.set(secret, (cache = new Map()));
  const hit = cache.get(token);
  if (hit) {
    cache.delete(token);
    // jose's rule: a token is expired once the current second reaches `exp`.
    if (Math.floor(Date.now() / 1000) >= hit.exp) return undefined;
    cache.set(token, hit);
    return hit.claims;
  }
  try {
    const { payload } = await jwtVerify(token, secret, { issuer: ISSUER, algorithms: ['HS256'], requiredClaims: ['exp', 'iat', 'sub'] });
    if (typeof payload.userId !== 'number' || !Number.isInteger(payload.userId) || typeof payload.sub !== 'string') return undefined;
    const claims = Object.freeze({ userId: payload.userId, username: payload.sub });
    cache.set(token, { claims, exp: payload.exp as number });
    if (cache.size > VERIFIED_LIMIT) cache.delete(cache.keys().next().value as string);
    return claims;
  } catch {
    return undefined;
  }
}
