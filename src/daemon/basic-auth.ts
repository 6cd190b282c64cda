// HTTP Basic sign-in with an OPDS account, shared by the OPDS catalog and the Komga-compatible API: too many failures
// for a name from one address first (429), then the credentials (401), then the route group's switch (403, checked
// after authentication as Grimmory does), then the owning user. Each caller answers the refusals in its own format.
import { FailureLimit } from '../core/auth/login-rate-limit.ts';
import { loadPrincipal, type Principal } from '../core/auth/principal.ts';
import { checkOpdsCredentials, CredentialCache, parseBasic, type OpdsSession } from '../core/opds/users.ts';
import { readSetting } from '../core/settings/app-settings.ts';
import type { DaemonContext } from './context.ts';
import type { RouteRequest } from './route-spec.ts';

export type BasicSignIn =
  | { kind: 'signed-in'; session: OpdsSession; principal: Principal }
  /** 30 failures for this name from this address within 15 minutes. */
  | { kind: 'blocked' }
  /** Missing or wrong credentials; `reason` is Spring's wording. */
  | { kind: 'challenge'; reason: string }
  /** The route group is switched off. */
  | { kind: 'disabled' };

interface RealmState {
  credentials: CredentialCache;
  failures: FailureLimit;
}

/** Per daemon and realm: verified credentials, and failed sign-ins per address and account name. */
const states = new WeakMap<DaemonContext, Map<string, RealmState>>();

function stateOf(ctx: DaemonContext, realm: string): RealmState {
  let realms = states.get(ctx);
  if (!realms) states.set(ctx, (realms = new Map()));
  let state = realms.get(realm);
  if (!state) {
    state = { credentials: new CredentialCache(), failures: new FailureLimit({ maxFailures: 30, windowMs: 15 * 60 * 1000, maxKeys: 1000, now: Date.now }) };
    realms.set(realm, state);
  }
  return state;
}

export const FULL_AUTHENTICATION = 'Full authentication is required to access this resource';
export const BAD_CREDENTIALS = 'Bad credentials';

/**
 * Signs the request in with HTTP Basic against the OPDS accounts. `realm` keeps the failure counts of the route groups
 * apart; `switchSetting` names the app setting that must be true.
 */
export async function signInWithOpdsAccount(request: RouteRequest, ctx: DaemonContext, realm: string, switchSetting: string): Promise<BasicSignIn> {
  const state = stateOf(ctx, realm);
  const header = request.headers.authorization;
  const key = `${request.ip ?? 'unknown'}|${parseBasic(header)?.username.toLowerCase() ?? ''}`;
  if (state.failures.isBlocked(key)) return { kind: 'blocked' };
  const result = await checkOpdsCredentials(ctx.store.db, state.credentials, header);
  if (typeof result === 'string') {
    if (result !== 'MISSING') state.failures.recordFailure(key);
    return { kind: 'challenge', reason: result === 'MISSING' ? FULL_AUTHENTICATION : BAD_CREDENTIALS };
  }
  state.failures.reset(key);
  return signInAs(ctx, result, switchSetting);
}

/** An account already identified (by credentials or by a session): the route group's switch, then the owning user. */
export async function signInAs(ctx: DaemonContext, session: OpdsSession, switchSetting: string): Promise<BasicSignIn> {
  if ((await readSetting(ctx.store.db, switchSetting)) !== true) return { kind: 'disabled' };
  const principal = await loadPrincipal(ctx.store.db, session.ownerId);
  if (!principal) return { kind: 'challenge', reason: BAD_CREDENTIALS };
  return { kind: 'signed-in', session, principal };
}

/** A switch's state without signing in (for the public documents of a route group). */
export async function switchedOn(ctx: DaemonContext, switchSetting: string): Promise<boolean> {
  return (await readSetting(ctx.store.db, switchSetting)) === true;
}
