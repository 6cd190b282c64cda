// Sessions for Komga clients that sign in once with HTTP Basic and then send only a cookie, as Komga's own sessions
// allow (Komelia keeps no password: it sends the credentials to `GET /api/v2/users/me` and relies on the cookie set
// in return). A session belongs to an OPDS account, lasts 14 days from its last use (extended when half spent), and ends
// when the account's password changes, the account is deleted, or the client signs out. Only a hash of the token is
// stored.
import { createHash, randomBytes } from 'node:crypto';
import type { OpdsSession } from '../opds/users.ts';
import { isSortOrder } from '../opds/users.ts';
import type { Store } from '../store/store.ts';

export const SESSION_DAYS = 14;
const DAY_MS = 24 * 3600 * 1000;
/** Sessions an account keeps at most (each sign-in makes one; the oldest go first). */
const MAX_PER_ACCOUNT = 20;

const sha256 = (text: string): string => createHash('sha256').update(text).digest('base64url');

const expiryFrom = (now: number): string => new Date(now + SESSION_DAYS * DAY_MS).toISOString();

/** Starts a session for the account and returns its token (what the cookie carries). */
export async function startSession(store: Store, opdsUserId: number, now = Date.now()): Promise<string | undefined> {
  const token = randomBytes(32).toString('base64url');
  const at = new Date(now).toISOString();
  const started = await store.write(async ({ exec }) => {
    const account = await exec.get('SELECT password_hash FROM opds_user_v2 WHERE id = ?', [opdsUserId]);
    if (account === undefined) return false;
    await exec.run('DELETE FROM komga_session WHERE expires_at < ?', [at]);
    await exec.run('INSERT INTO komga_session (token_hash, opds_user_id, password_fingerprint, created_at, expires_at) VALUES (?, ?, ?, ?, ?)', [
      sha256(token),
      opdsUserId,
      sha256(account.password_hash as string),
      at,
      expiryFrom(now),
    ]);
    await exec.run(
      `DELETE FROM komga_session WHERE opds_user_id = ? AND token_hash NOT IN
         (SELECT token_hash FROM komga_session WHERE opds_user_id = ? ORDER BY expires_at DESC LIMIT ${MAX_PER_ACCOUNT})`,
      [opdsUserId, opdsUserId],
    );
    return true;
  });
  return started ? token : undefined;
}

interface SessionRow {
  id: number;
  user_id: number;
  username: string;
  sort_order: string;
  password_hash: string;
  password_fingerprint: string;
  expires_at: string;
}

/** The account a session token signs in, or undefined when the session is unknown, expired or outdated. */
export async function sessionAccount(store: Store, token: string, now = Date.now()): Promise<OpdsSession | undefined> {
  const tokenHash = sha256(token);
  const row = (await store.exec.get(
    `SELECT o.id, o.user_id, o.username, o.sort_order, o.password_hash, s.password_fingerprint, s.expires_at
       FROM komga_session s JOIN opds_user_v2 o ON o.id = s.opds_user_id WHERE s.token_hash = ?`,
    [tokenHash],
  )) as SessionRow | undefined;
  if (!row || Date.parse(row.expires_at) <= now || sha256(row.password_hash) !== row.password_fingerprint) return undefined;
  // Extending only ever moves the expiry later, whichever replica gets there first.
  if (Date.parse(row.expires_at) - now < (SESSION_DAYS * DAY_MS) / 2) {
    const expires = expiryFrom(now);
    await store.exec.run('UPDATE komga_session SET expires_at = ? WHERE token_hash = ? AND expires_at < ?', [expires, tokenHash, expires]);
  }
  return { opdsUserId: row.id, username: row.username, ownerId: row.user_id, sortOrder: isSortOrder(row.sort_order) ? row.sort_order : 'RECENT' };
}

/** Ends a session (sign-out). */
export async function endSession(store: Store, token: string): Promise<void> {
  await store.exec.run('DELETE FROM komga_session WHERE token_hash = ?', [sha256(token)]);
}
