// The daemon's one sign-in policy, shared by web login, token refresh, HTTP Basic (OPDS, Komga) and KOReader. Its
// counts are in the catalog, shared with every other process serving it; this process only remembers what it read.
import { SignInPolicy } from '../core/auth/login-rate-limit.ts';
import type { DaemonContext } from './context.ts';

const policies = new WeakMap<DaemonContext, SignInPolicy>();

export function signInPolicy(ctx: DaemonContext): SignInPolicy {
  let policy = policies.get(ctx);
  if (!policy) policies.set(ctx, (policy = new SignInPolicy(ctx.store.bookkeeping)));
  return policy;
}
