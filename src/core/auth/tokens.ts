// Access and refresh tokens: HS256 JWTs with Grimmory's claims, signed with a secret kept in the catalog. Each carries
// its kind (`typ`), checked wherever a token is accepted, so a refresh token never opens a route, and the user's
// session version (`sv`) when it was signed, which the gate compares with the user's current one.
import { randomBytes } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import { dialectOf } from '../store/dialect.ts';
import { kyselyExec } from '../store/sql-exec.ts';
import type { Db } from '../store/store.ts';

export const ACCESS_TOKEN_SECONDS = 2 * 60 * 60;
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 60 * 60;
const ISSUER = 'booklore';

export interface TokenClaims {
  userId: number;
  username: string;
  isDefaultPassword: boolean;
  /** users.session_version when the token is signed; raising it ends every session signed before. */
  sessionVersion: number;
}

export type TokenKind = 'access' | 'refresh';

/** The signing secret, created on first use; every process sharing the catalog uses the same one. */
export async function signingSecret(db: Db): Promise<Uint8Array> {
  const existing = await db.selectFrom('jwt_secret').select('secret').orderBy('id', 'desc').executeTakeFirst();
  if (existing) return Buffer.from(existing.secret, 'base64');
  const secret = randomBytes(48).toString('base64');
  await db.transaction().execute(async (trx) => {
    // Replicas starting together on a new catalog must all end up with the one secret: the second waits, then sees it.
    await kyselyExec(trx).run(dialectOf(trx).lockTable('jwt_secret'));
    const again = await trx.selectFrom('jwt_secret').select('id').executeTakeFirst();
    if (!again) await trx.insertInto('jwt_secret').values({ secret }).execute();
  });
  return signingSecret(db);
}

export async function signToken(secret: Uint8Array, claims: TokenClaims, kind: TokenKind, lifetimeSeconds: number): Promise<string> {
  return new SignJWT({ userId: claims.userId, isDefaultPassword: claims.isDefaultPassword, typ: kind, sv: claims.sessionVersion, jti: randomBytes(8).toString('hex') })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setSubject(claims.username)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + lifetimeSeconds)
    .sign(secret);
}

export interface VerifiedClaims {
  userId: number;
  username: string;
  sessionVersion: number;
}

interface Verified {
  claims: VerifiedClaims;
  /** The `typ` claim; tokens signed before kinds existed have none. */
  kind: TokenKind | undefined;
  /** Seconds since the epoch, as in the token. */
  exp: number;
}

/** Tokens verified recently, per secret: checking the signature is most of the cost of a small request. */
const verified = new WeakMap<Uint8Array, Map<string, Verified>>();
const VERIFIED_LIMIT = 1000;

/** The claims of an access token; undefined for a refresh token, a token of no kind, or anything invalid or expired. */
export async function verifyAccessToken(secret: Uint8Array, token: string): Promise<VerifiedClaims | undefined> {
  const verified = await verifyToken(secret, token);
  return verified?.kind === 'access' ? verified.claims : undefined;
}

/**
 * The claims of a refresh token. Refresh tokens signed before kinds existed (no `typ`) are still taken: the caller
 * only accepts a token it finds in its refresh-token table, where access tokens are never stored.
 */
export async function verifyRefreshToken(secret: Uint8Array, token: string): Promise<VerifiedClaims | undefined> {
  const verified = await verifyToken(secret, token);
  return verified && verified.kind !== 'access' ? verified.claims : undefined;
}

/**
 * The claims of an access token verified recently and not expired, without a promise: most requests carry a token
 * seen moments ago. Undefined when `verifyAccessToken` has to be asked.
 */
export function knownAccessClaims(secret: Uint8Array, token: string): VerifiedClaims | undefined {
  const cache = verified.get(secret);
  const hit = cache && recent(cache, token);
  return hit?.kind === 'access' ? hit.claims : undefined;
}

/** A kept verification, moved to the most recently used end; undefined when none is kept or it has expired. */
function recent(cache: Map<string, Verified>, token: string): Verified | undefined {
  const hit = cache.get(token);
  if (!hit) return undefined;
  cache.delete(token);
  // jose's rule: a token is expired once the current second reaches `exp`.
  if (Math.floor(Date.now() / 1000) >= hit.exp) return undefined;
  cache.set(token, hit);
  return hit;
}

async function verifyToken(secret: Uint8Array, token: string): Promise<Pick<Verified, 'claims' | 'kind'> | undefined> {
  let cache = verified.get(secret);
  if (!cache) verified.set(secret, (cache = new Map()));
  if (cache.has(token)) return recent(cache, token);
  try {
    const { payload } = await jwtVerify(token, secret, { issuer: ISSUER, algorithms: ['HS256'], requiredClaims: ['exp', 'iat', 'sub'] });
    if (typeof payload.userId !== 'number' || !Number.isInteger(payload.userId) || typeof payload.sub !== 'string') return undefined;
    const kind = payload.typ === 'access' || payload.typ === 'refresh' ? payload.typ : undefined;
    const sessionVersion = typeof payload.sv === 'number' && Number.isInteger(payload.sv) ? payload.sv : 0;
    const entry: Verified = { claims: Object.freeze({ userId: payload.userId, username: payload.sub, sessionVersion }), kind, exp: payload.exp as number };
    cache.set(token, entry);
    if (cache.size > VERIFIED_LIMIT) cache.delete(cache.keys().next().value as string);
    return entry;
  } catch {
    return undefined;
  }
}
