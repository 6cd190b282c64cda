// The one-time `state` of an OIDC sign-in: handed out by GET /api/v1/auth/oidc/state, valid five minutes, consumed by
// the callback. The client makes its own PKCE verifier and nonce (Grimmory's protocol); the provider checks the
// verifier and the ID token must carry the nonce, so only the state needs keeping here.
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../store/store.ts';
import { invalidState } from './oidc-error.ts';

export const STATE_LIFETIME_MS = 5 * 60 * 1000;
/** Live states kept at most; beyond it the oldest go first (the endpoint is public). */
export const MAX_LIVE_STATES = 5000;

const hashOf = (state: string): string => createHash('sha256').update(state).digest('base64url');

export async function issueState(db: Db, now = Date.now(), maxLive = MAX_LIVE_STATES): Promise<string> {
  const state = randomBytes(32).toString('base64url');
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('oidc_auth_state').where('expires_at', '<=', new Date(now).toISOString()).execute();
    await trx.insertInto('oidc_auth_state').values({ state_hash: hashOf(state), expires_at: new Date(now + STATE_LIFETIME_MS).toISOString() }).execute();
    const excess = await trx.selectFrom('oidc_auth_state').select('state_hash').orderBy('expires_at', 'desc').offset(maxLive).limit(1000).execute();
    if (excess.length > 0) await trx.deleteFrom('oidc_auth_state').where('state_hash', 'in', excess.map((r) => r.state_hash)).execute();
  });
  return state;
}

/** Accepts a state once, and only before it expires; anything else is OIDC_INVALID_STATE. */
export async function consumeState(db: Db, state: string | undefined, now = Date.now()): Promise<void> {
  if (!state || state.trim() === '') throw invalidState();
  const removed = await db
    .deleteFrom('oidc_auth_state')
    .where('state_hash', '=', hashOf(state))
    .where('expires_at', '>', new Date(now).toISOString())
    .executeTakeFirst();
  if (Number(removed.numDeletedRows) !== 1) throw invalidState();
}
