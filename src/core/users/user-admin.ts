// Changing accounts: registration by an admin, updates of permissions/libraries/profile, deletion, passwords.
import { AccountError, accountError, invalidInput, userNotFound } from '../auth/account-error.ts';
import { PERMISSION_NAMES, rowFromPermissions, type Permissions } from '../auth/permissions.ts';
import { revokeAllSessions } from '../auth/sessions.ts';
import { isConstraintViolation } from '../store/constraint-errors.ts';
import type { Db } from '../store/store.ts';
import { createUser, hashPassword, PASSWORD_MAX, PASSWORD_MIN, UserError, verifyPassword } from './users.ts';

/** Runs a write, turning a refused write (e-mail already used, a library deleted meanwhile) into Grimmory's data-conflict error. */
async function guardConflict<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isConstraintViolation(error) || (error instanceof UserError && error.code === 'CONFLICT')) throw accountError('DATA_CONFLICT');
    throw error;
  }
}

async function requireUser(db: Db, userId: number | null | undefined): Promise<{ id: number; username: string; password_hash: string; theme: string; theme_accent: string | null }> {
  const user = userId === null || userId === undefined
    ? undefined
    : await db.selectFrom('users').select(['id', 'username', 'password_hash', 'theme', 'theme_accent']).where('id', '=', userId).executeTakeFirst();
  if (!user) throw userNotFound(userId);
  return user;
}

/** The ids among `ids` that name existing libraries (unknown ids are dropped, as Grimmory's findAllById does). */
export async function existingLibraryIds(db: Db, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('library').select('id').where('id', 'in', [...new Set(ids)]).execute();
  return rows.map((r) => r.id);
}

/** Grimmory's rule for password changes: at least 8 characters; bcrypt itself cannot take more than 72 bytes. */
export function checkNewPassword(password: string | null | undefined): string {
  if (password === null || password === undefined || password.length < PASSWORD_MIN) throw accountError('PASSWORD_TOO_SHORT');
  if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX) throw new AccountError('PASSWORD_TOO_LONG', `Password must be at most ${PASSWORD_MAX} bytes long`);
  return password;
}

export interface RegisterRequest {
  username: string;
  password: string;
  name: string;
  email: string | null;
  permissions: Partial<Permissions>;
  libraryIds: number[];
  /** Admin-registered users must change the password on first login (Grimmory's default). */
  isDefaultPassword?: boolean;
}

export async function registerUser(db: Db, request: RegisterRequest): Promise<number> {
  const taken = await db.selectFrom('users').select('id').where('username', '=', request.username.trim()).executeTakeFirst();
  if (taken) throw new AccountError('USERNAME_ALREADY_TAKEN', `Username already taken: ${request.username}`);
  const libraryIds = await existingLibraryIds(db, request.libraryIds);
  return guardConflict(() =>
    createUser(db, {
      username: request.username,
      password: request.password,
      name: request.name,
      email: request.email,
      permissions: { ...request.permissions, demoUser: false },
      libraryIds,
      isDefaultPassword: request.isDefaultPassword ?? true,
      provisioningMethod: 'LOCAL',
    }),
  );
}

export interface UserUpdate {
  name?: string | null;
  email?: string | null;
  /** Every flag but demoUser; absent flags count as false, as in Grimmory's request class. */
  permissions?: Partial<Permissions> | null;
  assignedLibraries?: number[] | null;
}

/** Admin update of a user: name, e-mail, permissions and (mandatory) library assignment. */
export async function updateUser(db: Db, userId: number, update: UserUpdate): Promise<void> {
  const user = await requireUser(db, userId);
  const current = await db.selectFrom('user_permissions').select('permission_admin').where('user_id', '=', user.id).executeTakeFirst();
  const targetIsAdmin = update.permissions ? update.permissions.admin === true : current?.permission_admin === 1;
  if (update.assignedLibraries === null || update.assignedLibraries === undefined) throw invalidInput('Assigned Libraries is missing from request.');
  const libraryIds = await existingLibraryIds(db, update.assignedLibraries);
  if (!targetIsAdmin && libraryIds.length === 0) throw invalidInput('At least one library must be assigned.');

  // Grimmory's request carries every flag but demoUser as a primitive boolean, so an omitted flag means false.
  const permissionRow = update.permissions
    ? rowFromPermissions(Object.fromEntries(PERMISSION_NAMES.filter((p) => p !== 'demoUser').map((p) => [p, update.permissions?.[p] === true])))
    : undefined;
  const removesAccess = (permissionRow !== undefined && (await takesFlagsAway(db, user.id, permissionRow))) || (await takesLibrariesAway(db, user.id, libraryIds));

  await guardConflict(() =>
    db.transaction().execute(async (trx) => {
      const profile: { name?: string; email?: string | null } = {};
      if (typeof update.name === 'string' && update.name.trim() !== '') profile.name = update.name;
      if (update.email !== undefined) profile.email = update.email === '' ? null : update.email;
      if (Object.keys(profile).length > 0) await trx.updateTable('users').set(profile).where('id', '=', user.id).execute();
      if (permissionRow) await writePermissions(trx, user.id, permissionRow);
      await trx.deleteFrom('user_library_mapping').where('user_id', '=', user.id).execute();
      if (libraryIds.length > 0) {
        await trx.insertInto('user_library_mapping').values(libraryIds.map((library_id) => ({ user_id: user.id, library_id }))).execute();
      }
    }),
  );
  if (removesAccess) await revokeAllSessions(db, user.id, 'access-removed');
}

type PermissionRow = ReturnType<typeof rowFromPermissions>;

/** True when writing `row` would turn off a permission the user has now. */
async function takesFlagsAway(db: Db, userId: number, row: PermissionRow): Promise<boolean> {
  const current = (await db.selectFrom('user_permissions').selectAll().where('user_id', '=', userId).executeTakeFirst()) as Record<string, unknown> | undefined;
  if (!current) return false;
  return Object.entries(row).some(([column, value]) => value === 0 && current[column] === 1);
}

/** True when the user is assigned a library that `keep` does not list. */
async function takesLibrariesAway(db: Db, userId: number, keep: readonly number[]): Promise<boolean> {
  const current = await db.selectFrom('user_library_mapping').select('library_id').where('user_id', '=', userId).execute();
  return current.some((row) => !keep.includes(row.library_id));
}

async function writePermissions(db: Db, userId: number, row: PermissionRow): Promise<void> {
  await db.insertInto('user_permissions').values({ user_id: userId, ...row }).onConflict((oc) => oc.column('user_id').doUpdateSet(row)).execute();
}

const SUPPORTED_LOCALES = new Set(['en', 'es', 'it', 'de', 'fr', 'nl', 'pl', 'pt', 'ru', 'hr', 'sv', 'zh', 'ja', 'hu', 'sl', 'sk', 'uk', 'id', 'da']);
const SUPPORTED_THEMES = new Set(['grimmory', 'cobalt', 'ember', 'crimson', 'rose', 'forest', 'meadow', 'teal', 'lagoon', 'violet', 'fuchsia', 'slate', 'custom']);
const SUPPORTED_ACCENTS = new Set(['red', 'orange', 'amber', 'yellow', 'lime', 'green', 'emerald', 'teal', 'cyan', 'sky', 'blue', 'indigo', 'violet', 'purple', 'fuchsia', 'pink', 'rose']);
const SUPPORTED_UI_FONTS = new Set(['default', 'atkinson']);

export interface ProfileUpdate {
  name?: string | null;
  email?: string | null;
  locale?: string | null;
  theme?: string | null;
  themeAccent?: string | null;
  themeSyncEnabled?: boolean | null;
  uiFont?: string | null;
}

/** Profile preferences a user may change about themselves (or an admin about anyone). */
export async function updateProfile(db: Db, userId: number, update: ProfileUpdate): Promise<void> {
  const user = await requireUser(db, userId);
  const set: { name?: string; email?: string; locale?: string; theme?: string; theme_accent?: string | null; theme_sync_enabled?: number; ui_font?: string } = {};
  if (update.name !== null && update.name !== undefined) set.name = update.name;
  if (update.email !== null && update.email !== undefined) set.email = update.email;
  if (update.locale !== null && update.locale !== undefined) {
    if (!SUPPORTED_LOCALES.has(update.locale)) throw invalidInput(`Unsupported locale: ${update.locale}`);
    set.locale = update.locale;
  }
  const theme = update.theme ?? user.theme;
  if (!SUPPORTED_THEMES.has(theme)) throw invalidInput(`Unsupported theme: ${theme}`);
  if (theme !== 'custom') {
    if (update.themeAccent !== null && update.themeAccent !== undefined) throw invalidInput('Theme accent can only be set when theme is custom.');
    set.theme = theme;
    set.theme_accent = null;
  } else {
    const accent = update.themeAccent ?? user.theme_accent;
    if (accent === null) throw invalidInput('Theme accent is required when theme is custom.');
    if (!SUPPORTED_ACCENTS.has(accent)) throw invalidInput(`Unsupported theme accent: ${accent}`);
    set.theme = theme;
    set.theme_accent = accent;
  }
  if (update.themeSyncEnabled !== null && update.themeSyncEnabled !== undefined) set.theme_sync_enabled = update.themeSyncEnabled ? 1 : 0;
  if (update.uiFont !== null && update.uiFont !== undefined) {
    if (!SUPPORTED_UI_FONTS.has(update.uiFont)) throw invalidInput(`Unsupported UI font: ${update.uiFont}`);
    set.ui_font = update.uiFont;
  }
  await guardConflict(() => db.updateTable('users').set(set).where('id', '=', user.id).execute());
}

/**
 * Deletes a user with everything that is theirs (progress, shelves, settings, tokens: the catalog cascades), after
 * ending their sessions (so live connections hear of it). `actorId` is the admin asking; nobody deletes their own
 * account this way.
 */
export async function deleteUser(db: Db, actorId: number | null, userId: number): Promise<{ id: number; username: string }> {
  const user = await requireUser(db, userId);
  if (actorId === user.id) throw accountError('SELF_DELETION_NOT_ALLOWED');
  await revokeAllSessions(db, user.id, 'user-deleted');
  await db.deleteFrom('users').where('id', '=', user.id).execute();
  return { id: user.id, username: user.username };
}

/**
 * A user's own password change: current password checked, new one different and long enough; clears the "default"
 * mark and signs the user out everywhere (this session included: the client signs in again with the new password).
 */
export async function changeOwnPassword(db: Db, userId: number, currentPassword: string | null | undefined, newPassword: string | null | undefined): Promise<void> {
  const user = await requireUser(db, userId);
  const perms = await db.selectFrom('user_permissions').select('permission_demo_user').where('user_id', '=', user.id).executeTakeFirst();
  if (perms?.permission_demo_user === 1) throw accountError('DEMO_USER_PASSWORD_CHANGE_NOT_ALLOWED');
  if (typeof currentPassword !== 'string' || !(await verifyPassword(currentPassword, user.password_hash))) throw accountError('PASSWORD_INCORRECT');
  if (typeof newPassword === 'string' && (await verifyPassword(newPassword, user.password_hash))) throw accountError('PASSWORD_SAME_AS_CURRENT');
  const password = checkNewPassword(newPassword);
  await db.updateTable('users').set({ password_hash: await hashPassword(password), is_default_password: 0 }).where('id', '=', user.id).execute();
  await revokeAllSessions(db, user.id, 'password-changed');
}

/** An admin sets a user's password (no current password needed); the user is signed out everywhere. */
export async function setUserPassword(db: Db, userId: number | null | undefined, newPassword: string | null | undefined): Promise<void> {
  const user = await requireUser(db, userId);
  const password = checkNewPassword(newPassword);
  await db.updateTable('users').set({ password_hash: await hashPassword(password) }).where('id', '=', user.id).execute();
  await revokeAllSessions(db, user.id, 'password-changed');
}

/** Turns flags on or off, leaving the others as they are; turning one off signs the user out everywhere. */
export async function setPermissionFlags(db: Db, userId: number, flags: Partial<Permissions>): Promise<void> {
  const user = await requireUser(db, userId);
  const row = rowFromPermissions(flags);
  if (Object.keys(row).length === 0) return;
  const removesAccess = await takesFlagsAway(db, user.id, row);
  await writePermissions(db, user.id, row);
  if (removesAccess) await revokeAllSessions(db, user.id, 'access-removed');
}

/** Adds or removes library assignments; removing one signs the user out everywhere. */
export async function changeLibraryAccess(db: Db, userId: number, libraryIds: number[], grant: boolean): Promise<void> {
  const user = await requireUser(db, userId);
  if (libraryIds.length === 0) return;
  if (grant) {
    const ids = await existingLibraryIds(db, libraryIds);
    if (ids.length > 0) {
      await db
        .insertInto('user_library_mapping')
        .values(ids.map((library_id) => ({ user_id: user.id, library_id })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  } else {
    const removed = await db.deleteFrom('user_library_mapping').where('user_id', '=', user.id).where('library_id', 'in', libraryIds).executeTakeFirst();
    if (Number(removed.numDeletedRows) > 0) await revokeAllSessions(db, user.id, 'access-removed');
  }
}
