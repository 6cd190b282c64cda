// HTTP Basic sign-in with an OPDS account, shared by the OPDS catalog and the Komga-compatible API: no credentials
// first (401, as Grimmory), then the route group's switch (403 before any password work: Grimmory checks the password
// first, which let anyone spend the server's CPU on a switched-off protocol), then the sign-in policy (429), then the
// credentials (401), then the owning user. Each caller answers the refusals in its own format.
import { principalFor, type Principal } from '../core/auth/principal.ts';
import { checkOpdsCredentials, type OpdsSession } from '../core/opds/users.ts';
import { readSetting } from '../core/settings/app-settings.ts';
import { memosPerOwner } from '../core/store/snapshot.ts';
import type { DaemonContext } from './context.ts';
import type { RouteRequest } from './route-spec.ts';
import { signInPolicy } from './sign-in-policy.ts';

export type BasicSignIn =
  | { kind: 'signed-in'; session: OpdsSession; principal: Principal }
  /** The sign-in policy refuses this address or name for now. */
  | { kind: 'blocked' }
  /** Missing or wrong credentials; `reason` is Spring's wording. */
  | { kind: 'challenge'; reason: string }
  /** The route group is switched off. */
  | { kind: 'disabled' };

export const FULL_AUTHENTICATION = 'Full authentication is required to access this resource';
export const BAD_CREDENTIALS = 'Bad credentials';

/** Signs the request in with HTTP Basic against the OPDS accounts; `switchSetting` names the app setting that must be true. */
export async function signInWithOpdsAccount(request: RouteRequest, ctx: DaemonContext, switchSetting: string): Promise<BasicSignIn> {
  const header = request.headers.authorization;
  if (!header) return { kind: 'challenge', reason: FULL_AUTHENTICATION };
  if (!(await switchedOn(ctx, switchSetting))) return { kind: 'disabled' };
  const result = await checkOpdsCredentials(ctx.store, signInPolicy(ctx), request.ip ?? 'unknown', header);
  if (result === 'RATE_LIMITED') return { kind: 'blocked' };
  if (typeof result === 'string') return { kind: 'challenge', reason: result === 'MISSING' ? FULL_AUTHENTICATION : BAD_CREDENTIALS };
  return signedInAs(ctx, result);
}

/** An account already identified by a session: the route group's switch, then the owning user. */
export async function signInAs(ctx: DaemonContext, session: OpdsSession, switchSetting: string): Promise<BasicSignIn> {
  if (!(await switchedOn(ctx, switchSetting))) return { kind: 'disabled' };
  return signedInAs(ctx, session);
}

async function signedInAs(ctx: DaemonContext, session: OpdsSession): Promise<BasicSignIn> {
  // Readers send their credentials with every request: the principal is remembered until the catalog changes.
  const principal = await principalFor(ctx.store, session.ownerId);
  if (!principal) return { kind: 'challenge', reason: BAD_CREDENTIALS };
  return { kind: 'signed-in', session, principal };
}

const switches = memosPerOwner<string, boolean>(16);

/**
 * A switch's state without signing in (for the public documents of a route group), remembered until the catalog (which
 * holds the settings) changes: every request of a reader app asks.
 */
export function switchedOn(ctx: DaemonContext, switchSetting: string): Promise<boolean> {
  const memo = switches(ctx);
  return memo.getAsync(ctx.store, switchSetting, async () => (await readSetting(ctx.store.db, switchSetting)) === true);
}
