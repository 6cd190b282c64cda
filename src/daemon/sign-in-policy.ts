// The daemon's one sign-in policy (failed-attempt counts in memory: one process serves the API), shared by web login,
// token refresh, HTTP Basic (OPDS, Komga) and KOReader.
import { SignInPolicy } from '../core/auth/login-rate-limit.ts';
import type { DaemonContext } from './context.ts';

const policies = new WeakMap<DaemonContext, SignInPolicy>();

export function signInPolicy(ctx: DaemonContext): SignInPolicy {
  let policy = policies.get(ctx);
  if (!policy) policies.set(ctx, (policy = new SignInPolicy()));
  return policy;
}
