// Signing a user out everywhere, at once: the user's session version goes up, so every access token signed before is
// refused on its next request (the gate compares the token's version with the user's), and every refresh token is
// revoked. Every path that must end a user's sessions comes through here, and listeners (live connections) hear of it.
import { publishSessionRevoked } from '../events/live-events.ts';
import type { Db } from '../store/store.ts';
import { revokeRefreshTokens } from './refresh-tokens.ts';

export type SessionRevocationReason =
  /** The user changed their password, or an administrator set it (API or `bindery users passwd`). */
  | 'password-changed'
  /** An administrator deleted the user. */
  | 'user-deleted'
  /** A permission or a library was taken away from the user. */
  | 'access-removed'
  /** The OIDC provider ended the user's session (back-channel logout). */
  | 'backchannel-logout'
  /** The user, or an administrator for them, asked to sign out everywhere. */
  | 'sign-out-everywhere';

export interface SessionsRevoked {
  userId: number;
  username: string;
  reason: SessionRevocationReason;
}

type Listener = (event: SessionsRevoked) => void;

const listeners = new Set<Listener>();

/**
 * Calls `listener` after each revocation this process makes (e.g. to close the user's live connections). Returns the
 * function that removes it. A listener that throws does not stop the others or the revocation.
 */
export function onSessionsRevoked(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Ends every session of the user: access tokens signed before stop working on their next request, refresh tokens are
 * revoked. Returns false when there is no such user.
 */
export async function revokeAllSessions(db: Db, userId: number, reason: SessionRevocationReason): Promise<boolean> {
  const user = await db.transaction().execute(async (trx) => {
    const found = await trx
      .updateTable('users')
      .set((eb) => ({ session_version: eb('session_version', '+', 1) }))
      .where('id', '=', userId)
      .returning(['id', 'username'])
      .executeTakeFirst();
    if (found) {
      await revokeRefreshTokens(trx, userId);
      // Every server process closes the user's live connections, whichever process ended the sessions (the CLI too).
      // On the wire the reason is spelled as Grimmory spells it (`backchannel_logout`).
      await publishSessionRevoked(trx, userId, reason.replace(/-/g, '_'));
    }
    return found;
  });
  if (!user) return false;
  const event: SessionsRevoked = { userId: user.id, username: user.username, reason };
  for (const listener of listeners) {
    try {
      listener(event);
    } catch {
      // One listener's failure must not keep the revocation from the others.
    }
  }
  return true;
}
