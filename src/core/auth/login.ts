// Local sign-in with username and password, behind the failed-attempt limits and the OIDC-only switch.
import type { Db } from '../store/store.ts';
import { findUserByName, hashPassword, verifyPassword } from '../users/users.ts';
import { accountError } from './account-error.ts';
import { loginIpKey, loginUserKey, type FailureLimit } from './login-rate-limit.ts';
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

let dummyHash: Promise<string> | undefined;

/** A hash to compare against when the user does not exist, so unknown names cost as much time as wrong passwords. */
function timingDummy(): Promise<string> {
  return (dummyHash ??= hashPassword('timing-equaliser-for-unknown-users'));
}

async function appSettingIsTrue(db: Db, name: string): Promise<boolean> {
  const row = await db.selectFrom('app_settings').select('val').where('name', '=', name).executeTakeFirst();
  return row?.val?.trim().toLowerCase() === 'true';
}

async function isAdminUser(db: Db, userId: number): Promise<boolean> {
  const row = await db.selectFrom('user_permissions').select('permission_admin').where('user_id', '=', userId).executeTakeFirst();
  return row?.permission_admin === 1;
}

export async function loginWithPassword(db: Db, secret: Uint8Array, limit: FailureLimit, input: LoginInput): Promise<LoginResult> {
  const user = await findUserByName(db, input.username);
  if ((await appSettingIsTrue(db, 'oidc_force_only_mode')) && !(user && (await isAdminUser(db, user.id)))) {
    throw accountError('OIDC_ONLY_MODE');
  }

  const ipKey = loginIpKey(input.ip);
  const userKey = loginUserKey(input.username);
  if (limit.isBlocked(ipKey) || limit.isBlocked(userKey)) throw accountError('RATE_LIMITED');

  const matches = user ? await verifyPassword(input.password, user.password_hash) : (await verifyPassword(input.password, await timingDummy()), false);
  if (!user || !matches) {
    limit.recordFailure(ipKey);
    limit.recordFailure(userKey);
    throw accountError('INVALID_CREDENTIALS');
  }

  limit.reset(ipKey);
  limit.reset(userKey);
  const isDefaultPassword = user.is_default_password === 1;
  const tokens = await issueTokens(db, secret, { userId: user.id, username: user.username, isDefaultPassword });
  return { ...tokens, isDefaultPassword };
}
