// The KOReader sync account a user links to their own account: one per user, with its own username and password
// (KOReader never sees the user's real password) and the two switches of Grimmory's settings page. KOReader sends
// the MD5 of the password as its key with every request; only a bcrypt hash of that key is stored, so neither the
// password nor the key can be read back (Grimmory kept both and showed the password again).
import { CodedError } from '../coded-error.ts';
import { createHash } from 'node:crypto';
import type { SignInPolicy } from '../auth/login-rate-limit.ts';
import { passwordChecks } from '../auth/password-checks.ts';
import { dummyHash, hashPassword } from '../auth/password-hashing.ts';
import { hasAny, loadPrincipal, type Principal } from '../auth/principal.ts';
import type { Db } from '../store/store.ts';
import { nowIso } from '../time.ts';

export type KoreaderErrorCode = 'NOT_FOUND' | 'INVALID' | 'CONFLICT';

export class KoreaderError extends CodedError<KoreaderErrorCode> {}

/**
 * Grimmory's `KoreaderUser` DTO. `password` is always empty and `passwordMD5` null: neither is kept. (Grimmory's
 * settings page shows the password field empty and takes a new one; it needs a string there, not null.)
 */
export interface KoreaderAccount {
  id: number;
  username: string;
  password: '';
  passwordMD5: null;
  syncEnabled: boolean;
  syncWithWebReader: boolean;
}

export const USERNAME_MAX = 100;

/** Lowercase hex MD5 of the UTF-8 bytes: the key KOReader derives from a password. */
export function md5Hex(text: string): string {
  return createHash('md5').update(text, 'utf8').digest('hex');
}

interface AccountRow {
  id: number;
  username: string;
  key_hash: string;
  sync_enabled: number;
  sync_with_booklore_reader: number;
  booklore_user_id: number | null;
}

const COLUMNS = ['id', 'username', 'key_hash', 'sync_enabled', 'sync_with_booklore_reader', 'booklore_user_id'] as const;

function toAccount(row: AccountRow): KoreaderAccount {
  return {
    id: row.id,
    username: row.username,
    password: '',
    passwordMD5: null,
    syncEnabled: row.sync_enabled === 1,
    syncWithWebReader: row.sync_with_booklore_reader === 1,
  };
}

const notLinked = (userId: number): KoreaderError => new KoreaderError('NOT_FOUND', `Koreader user not found for BookLore user ID: ${userId}`);

function accountRow(db: Db, userId: number): Promise<AccountRow | undefined> {
  return db.selectFrom('koreader_user').select(COLUMNS).where('booklore_user_id', '=', userId).executeTakeFirst();
}

/** The account linked to the user; NOT_FOUND when there is none. */
export async function getAccount(db: Db, userId: number): Promise<KoreaderAccount> {
  const row = await accountRow(db, userId);
  if (!row) throw notLinked(userId);
  return toAccount(row);
}

/**
 * Creates the user's account or changes its username and password (the switches are kept). Only a bcrypt hash of
 * the password's MD5 (the key KOReader will send) is stored; a username another account holds is a CONFLICT.
 */
export async function saveAccount(db: Db, userId: number, input: { username?: unknown; password?: unknown }): Promise<KoreaderAccount> {
  const { username, password } = input;
  if (typeof username !== 'string' || username.trim() === '') throw new KoreaderError('INVALID', 'username is required');
  if (username.length > USERNAME_MAX) throw new KoreaderError('INVALID', `username must be at most ${USERNAME_MAX} characters`);
  if (typeof password !== 'string' || password === '') throw new KoreaderError('INVALID', 'password is required');
  const values = { username, key_hash: await hashPassword(md5Hex(password)), updated_at: nowIso() };
  return db.transaction().execute(async (trx) => {
    const taken = await trx.selectFrom('koreader_user').select('booklore_user_id').where('username', '=', username).executeTakeFirst();
    if (taken && taken.booklore_user_id !== userId) throw new KoreaderError('CONFLICT', 'A data conflict occurred. The operation could not be completed.');
    const existing = await trx.selectFrom('koreader_user').select('id').where('booklore_user_id', '=', userId).executeTakeFirst();
    if (existing) await trx.updateTable('koreader_user').set(values).where('id', '=', existing.id).execute();
    else await trx.insertInto('koreader_user').values({ ...values, booklore_user_id: userId }).execute();
    const row = await trx.selectFrom('koreader_user').select(COLUMNS).where('booklore_user_id', '=', userId).executeTakeFirstOrThrow();
    return toAccount(row);
  });
}

async function setFlag(db: Db, userId: number, column: 'sync_enabled' | 'sync_with_booklore_reader', enabled: boolean): Promise<void> {
  const result = await db
    .updateTable('koreader_user')
    .set({ [column]: enabled ? 1 : 0, updated_at: nowIso() })
    .where('booklore_user_id', '=', userId)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw notLinked(userId);
}

export const setSyncEnabled = (db: Db, userId: number, enabled: boolean): Promise<void> => setFlag(db, userId, 'sync_enabled', enabled);
export const setSyncWithWebReader = (db: Db, userId: number, enabled: boolean): Promise<void> => setFlag(db, userId, 'sync_with_booklore_reader', enabled);

/** A KOReader device that presented valid credentials, with the user it syncs for. */
export interface SyncSession {
  accountId: number;
  username: string;
  syncWithWebReader: boolean;
  principal: Principal;
}

const MD5_HEX = /^[0-9a-f]{32}$/i;

export type CredentialFailure = 'MISSING' | 'RATE_LIMITED' | 'BAD_CREDENTIALS' | 'NOT_LINKED' | 'NO_PERMISSION' | 'SYNC_DISABLED';

/**
 * Checks `x-auth-user` / `x-auth-key` (the MD5 hex of the password, in either letter case) from address `ip`, under
 * the sign-in policy: refused before any password work once the address or the name has used up its failures. A
 * session needs an account linked to an existing user who may sync with KOReader (admin or canSyncKoReader) and has
 * sync turned on.
 */
export async function checkCredentials(db: Db, policy: SignInPolicy, ip: string, username: string | undefined, key: string | undefined): Promise<SyncSession | CredentialFailure> {
  if (!username || !key) return 'MISSING';
  if (await policy.isBlocked(ip, 'koreader', username)) return 'RATE_LIMITED';
  if (!MD5_HEX.test(key)) {
    // Not a key KOReader could have made: no password work, but it counts as a failed attempt.
    await policy.recordFailure(ip, 'koreader', username);
    return 'BAD_CREDENTIALS';
  }
  const row = await db.selectFrom('koreader_user').select(COLUMNS).where('username', '=', username).executeTakeFirst();
  // An unknown name costs what a wrong key costs, so answer times do not tell which names exist.
  const { matches, fresh } = await passwordChecks.check(username, key.toLowerCase(), row?.key_hash ?? (await dummyHash()));
  if (!row || !matches) {
    if (fresh) await policy.recordFailure(ip, 'koreader', username);
    return 'BAD_CREDENTIALS';
  }
  await policy.recordSuccess(ip, 'koreader', username);
  if (row.booklore_user_id === null) return 'NOT_LINKED';
  const principal = await loadPrincipal(db, row.booklore_user_id);
  if (!principal) return 'NOT_LINKED';
  if (!hasAny(principal, ['admin', 'canSyncKoReader'])) return 'NO_PERMISSION';
  if (row.sync_enabled !== 1) return 'SYNC_DISABLED';
  return { accountId: row.id, username: row.username, syncWithWebReader: row.sync_with_booklore_reader === 1, principal };
}
