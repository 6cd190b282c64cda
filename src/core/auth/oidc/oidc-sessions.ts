// The provider-side sessions behind Bindery sign-ins: which user, which subject, the provider's session id (`sid`)
// and the ID token (the hint for the provider's end-session page). Back-channel logout finds them by sid or subject.
import type { Db } from '../../store/store.ts';

const REVOKED_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

export interface NewOidcSession {
  userId: number;
  subject: string;
  issuer: string;
  sessionId: string | null;
  idToken: string;
}

/** Drops sessions revoked over a week ago and any over thirty days old (Grimmory's daily clean-up). */
async function pruneSessions(db: Db, now: number): Promise<void> {
  const revokedBefore = new Date(now - REVOKED_RETENTION_MS).toISOString();
  const createdBefore = new Date(now - MAX_AGE_MS).toISOString();
  await db
    .deleteFrom('oidc_session')
    .where((eb) => eb.or([eb.and([eb('revoked', '=', 1), eb('created_at', '<', revokedBefore)]), eb('created_at', '<', createdBefore)]))
    .execute();
}

export async function recordSession(db: Db, session: NewOidcSession, now = Date.now()): Promise<void> {
  await pruneSessions(db, now);
  await db
    .insertInto('oidc_session')
    .values({
      user_id: session.userId,
      oidc_subject: session.subject,
      oidc_issuer: session.issuer,
      oidc_session_id: session.sessionId,
      id_token_hint: session.idToken,
      created_at: new Date(now).toISOString(),
      revoked: 0,
    })
    .execute();
}

export interface LiveSession {
  id: number;
  userId: number;
  idTokenHint: string | null;
}

/** Live sessions of the provider session `sid`, else of the subject at the issuer. */
export async function liveSessions(db: Db, by: { sid: string } | { subject: string; issuer: string }): Promise<LiveSession[]> {
  let query = db.selectFrom('oidc_session').select(['id', 'user_id', 'id_token_hint']).where('revoked', '=', 0);
  query = 'sid' in by ? query.where('oidc_session_id', '=', by.sid) : query.where('oidc_subject', '=', by.subject).where('oidc_issuer', '=', by.issuer);
  const rows = await query.execute();
  return rows.map((r) => ({ id: r.id, userId: r.user_id, idTokenHint: r.id_token_hint }));
}

/** The user's newest live session (for the end-session URL at logout). */
export async function latestSession(db: Db, userId: number): Promise<LiveSession | undefined> {
  const row = await db
    .selectFrom('oidc_session')
    .select(['id', 'user_id', 'id_token_hint'])
    .where('user_id', '=', userId)
    .where('revoked', '=', 0)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst();
  return row ? { id: row.id, userId: row.user_id, idTokenHint: row.id_token_hint } : undefined;
}

export async function revokeSessions(db: Db, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('oidc_session').set({ revoked: 1 }).where('id', 'in', [...ids]).execute();
}
