// Accounts: creation with hashed passwords, permissions and assigned libraries.
import { CodedError } from '../coded-error.ts';
import { allPermissions, PERMISSION_NAMES, rowFromPermissions, type Permissions } from '../auth/permissions.ts';
import { hashPassword } from '../auth/password-hashing.ts';
import { dialectOf } from '../store/dialect.ts';
import { kyselyExec } from '../store/sql-exec.ts';
import type { Db } from '../store/store.ts';

export class UserError extends CodedError<'CONFLICT' | 'INVALID' | 'NOT_FOUND'> {}

// bcrypt on the password pool, so hashes carry over from Grimmory's `users.password_hash` unchanged.
export { hashPassword, verifyPassword } from '../auth/password-hashing.ts';

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 72;

export interface NewUser {
  username: string;
  password: string;
  name: string;
  email?: string | null;
  permissions?: Partial<Permissions>;
  libraryIds?: number[];
  isDefaultPassword?: boolean;
  provisioningMethod?: 'LOCAL' | 'OIDC' | 'REMOTE';
}

function noPermissions(): Permissions {
  return Object.fromEntries(PERMISSION_NAMES.map((p) => [p, false])) as Permissions;
}

export async function countUsers(db: Db): Promise<number> {
  const row = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

interface CreateOptions {
  /** Refuse unless the catalog has no user yet, decided inside the creating transaction (setup on several replicas). */
  onlyFirst?: boolean;
}

/** Creates a user with a permissions row, library assignments and the per-user "Favorites" shelf. */
export async function createUser(db: Db, input: NewUser, options: CreateOptions = {}): Promise<number> {
  const username = input.username.trim();
  if (!username) throw new UserError('INVALID', 'username must not be blank');
  if (input.password.length < PASSWORD_MIN || input.password.length > PASSWORD_MAX) {
    throw new UserError('INVALID', `password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
  }
  const hash = await hashPassword(input.password);
  return db.transaction().execute(async (trx) => {
    if (options.onlyFirst) {
      await kyselyExec(trx).run(dialectOf(trx).lockTable('users'));
      if ((await countUsers(trx)) > 0) throw new UserError('CONFLICT', 'setup is already complete: users exist');
    }
    const clash = await trx.selectFrom('users').select('id').where('username', '=', username).executeTakeFirst();
    if (clash) throw new UserError('CONFLICT', `username "${username}" is already taken`);
    if (input.email) {
      const mail = await trx.selectFrom('users').select('id').where('email', '=', input.email).executeTakeFirst();
      if (mail) throw new UserError('CONFLICT', `e-mail "${input.email}" is already in use`);
    }
    const user = await trx
      .insertInto('users')
      .values({
        username,
        password_hash: hash,
        name: input.name.trim() || username,
        email: input.email ?? null,
        is_default_password: input.isDefaultPassword ? 1 : 0,
        provisioning_method: input.provisioningMethod ?? 'LOCAL',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    // Every column written, as Grimmory's entity does: a flag not granted is false (the email column defaults to 1).
    await trx.insertInto('user_permissions').values({ user_id: user.id, ...rowFromPermissions({ ...noPermissions(), ...input.permissions }) }).execute();
    if (input.libraryIds && input.libraryIds.length > 0) {
      await trx.insertInto('user_library_mapping').values(input.libraryIds.map((library_id) => ({ user_id: user.id, library_id }))).execute();
    }
    await trx.insertInto('shelf').values({ user_id: user.id, name: 'Favorites', icon: 'heart', icon_type: 'LUCIDE' }).execute();
    return user.id;
  });
}

/** The first account of a fresh install: an administrator with every permission. */
export async function createFirstAdmin(db: Db, input: Omit<NewUser, 'permissions' | 'provisioningMethod'>): Promise<number> {
  if ((await countUsers(db)) > 0) throw new UserError('CONFLICT', 'setup is already complete: users exist');
  return createUser(db, { ...input, permissions: allPermissions(), provisioningMethod: 'LOCAL' }, { onlyFirst: true });
}

export interface UserRow {
  id: number;
  username: string;
  password_hash: string;
  is_default_password: number;
}

/**
 * The user a login name refers to: the exact username, else the only case-insensitive match
 * (Grimmory's MariaDB compares usernames without case).
 */
export async function findUserByName(db: Db, username: string): Promise<UserRow | undefined> {
  const columns = ['id', 'username', 'password_hash', 'is_default_password'] as const;
  const exact = await db.selectFrom('users').select(columns).where('username', '=', username).executeTakeFirst();
  if (exact) return exact;
  const folded = await db.selectFrom('users').select(columns).where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase())).limit(2).execute();
  return folded.length === 1 ? folded[0] : undefined;
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').select(['id', 'username', 'password_hash', 'is_default_password']).where('email', '=', email).executeTakeFirst();
}
