// Local sign-in with username and password, behind the sign-in policy and the OIDC-only switch.
import type { Db } from '../store/store.ts';
import { findUserByName } from '../users/users.ts';
import { accountError } from './account-error.ts';
import type { SignInPolicy } from './login-rate-limit.ts';
import { passwordChecks } from './password-checks.ts';
import { dummyHash } from './password-hashing.ts';
import { issueTokens, type IssuedTokens } from './refresh-tokens.ts';

export interface LoginInput {
  username: string;
  password: string;
  /** The client address the failure counters are kept for. */
  ip: string;
}

export interface LoginResult extends IssuedTokens {
  isDefaultPassword: boolean;
}

async function appSettingIsTrue(db: Db, name: string): Promise<boolean> {
  const row = await db.selectFrom('app_settings').select('val').where('name', '=', name).executeTakeFirst();
  return row?.val?.trim().toLowerCase() === 'true';
}

async function isAdminUser(db: Db, userId: number): Promise<boolean> {
  const row = await db.selectFrom('user_permissions').select('permission_admin').where('user_id', '=', userId).executeTakeFirst();
  return row?.permission_admin === 1;
}

/** Refused (RATE_LIMITED) before any password work once the address or the name has used up its failures. */
export async function loginWithPassword(db: Db, secret: Uint8Array, policy: SignInPolicy, input: LoginInput): Promise<LoginResult> {
  const user = await findUserByName(db, input.username);
  if ((await appSettingIsTrue(db, 'oidc_force_only_mode')) && !(user && (await isAdminUser(db, user.id)))) {
    throw accountError('OIDC_ONLY_MODE');
  }
  if (await policy.isBlocked(input.ip, 'login', input.username)) throw accountError('RATE_LIMITED');

  // An unknown name is checked against a stand-in hash: the same work and time as a wrong password.
  const { matches, fresh } = await passwordChecks.check(input.username.trim().toLowerCase(), input.password, user?.password_hash ?? (await dummyHash()));
  if (!user || !matches) {
    // A repeat of a wrong password answered from memory is not a new guess.
    if (fresh) await policy.recordFailure(input.ip, 'login', input.username);
    throw accountError('INVALID_CREDENTIALS');
  }

  await policy.recordSuccess(input.ip, 'login', input.username);
  const tokens = await issueTokens(db, secret, user.id);
  return { ...tokens, isDefaultPassword: user.is_default_password === 1 };
}
