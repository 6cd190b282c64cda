// Forward-auth sign-in: a reverse proxy that has already authenticated the user passes who they are in headers.
// Off unless REMOTE_AUTH_ENABLED=true; the proxy must strip these headers from client requests.
import { randomBytes } from 'node:crypto';
import type { Db } from '../store/store.ts';
import { createUser, findUserByEmail, findUserByName, UserError } from '../users/users.ts';
import { AccountError, accountError } from './account-error.ts';
import { PERMISSIONS, type Permission, type Permissions } from './permissions.ts';
import { issueTokens } from './refresh-tokens.ts';
import type { LoginResult } from './login.ts';

export interface RemoteAuthSettings {
  enabled: boolean;
  createNewUsers: boolean;
  headerName: string;
  headerUser: string;
  headerEmail: string;
  headerGroups: string;
  adminGroup: string | null;
  groupsDelimiter: RegExp;
}

function flag(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value.trim() === '') return fallback;
  return value.trim().toLowerCase() === 'true';
}

function delimiter(pattern: string | undefined): RegExp {
  try {
    return new RegExp(pattern && pattern !== '' ? pattern : '\\s+');
  } catch {
    return /\s+/;
  }
}

/** The remote-auth settings, from the same environment variables Grimmory reads. The only place they are read. */
export function remoteAuthSettings(env: NodeJS.ProcessEnv = process.env): RemoteAuthSettings {
  return {
    enabled: flag(env.REMOTE_AUTH_ENABLED, false),
    createNewUsers: flag(env.REMOTE_AUTH_CREATE_NEW_USERS, true),
    headerName: env.REMOTE_AUTH_HEADER_NAME || 'Remote-Name',
    headerUser: env.REMOTE_AUTH_HEADER_USER || 'Remote-User',
    headerEmail: env.REMOTE_AUTH_HEADER_EMAIL || 'Remote-Email',
    headerGroups: env.REMOTE_AUTH_HEADER_GROUPS || 'Remote-Groups',
    adminGroup: env.REMOTE_AUTH_ADMIN_GROUP || null,
    groupsDelimiter: delimiter(env.REMOTE_AUTH_GROUPS_DELIMITER),
  };
}

/** `[a b]` or `a,b` (per the delimiter) → the group names. */
export function parseGroups(groups: string, pattern: RegExp): string[] {
  let content = groups.trim();
  if (content.length >= 2 && content.startsWith('[') && content.endsWith(']')) content = content.slice(1, -1);
  return content.split(pattern);
}

/** Flags new remote users get: the OIDC auto-provisioning default list (entity names), limited to the plain flags. */
const PROVISIONABLE = PERMISSIONS.filter(([json]) => json !== 'admin' && json !== 'demoUser' && !json.startsWith('canBulk') && json !== 'canMoveOrganizeFiles');

interface ProvisionDefaults {
  permissions: Partial<Permissions>;
  libraryIds: number[];
}

async function provisionDefaults(db: Db): Promise<ProvisionDefaults> {
  const row = await db.selectFrom('app_settings').select('val').where('name', '=', 'oidc_auto_provision_details').executeTakeFirst();
  let details: { defaultPermissions?: unknown; defaultLibraryIds?: unknown } = {};
  try {
    const parsed = row?.val ? (JSON.parse(row.val) as unknown) : {};
    if (parsed && typeof parsed === 'object') details = parsed;
  } catch {
    // unreadable settings: no defaults
  }
  const granted = Array.isArray(details.defaultPermissions) ? details.defaultPermissions.filter((p): p is string => typeof p === 'string') : [];
  const permissions: Partial<Record<Permission, boolean>> = {};
  for (const [json, entity] of PROVISIONABLE) permissions[json] = granted.includes(entity);
  const libraryIds = Array.isArray(details.defaultLibraryIds) ? details.defaultLibraryIds.filter((id): id is number => Number.isInteger(id)) : [];
  return { permissions, libraryIds };
}

interface RemoteIdentity {
  username: string;
  name: string | undefined;
  email: string | undefined;
  groups: string | undefined;
}

async function provisionRemoteUser(db: Db, settings: RemoteAuthSettings, who: RemoteIdentity): Promise<number> {
  const isAdmin = who.groups !== undefined && settings.adminGroup !== null && parseGroups(who.groups, settings.groupsDelimiter).includes(settings.adminGroup);
  const defaults = await provisionDefaults(db);
  const allLibraries = await db.selectFrom('library').select('id').execute();
  const known = new Set(allLibraries.map((l) => l.id));
  try {
    return await createUser(db, {
      username: who.username,
      // Never used: remote users sign in through the proxy. Random so nobody can guess it.
      password: randomBytes(24).toString('base64url'),
      name: who.name ?? who.username,
      email: who.email ?? null,
      permissions: { ...defaults.permissions, admin: isAdmin },
      libraryIds: isAdmin ? [...known] : defaults.libraryIds.filter((id) => known.has(id)),
      isDefaultPassword: false,
      provisioningMethod: 'REMOTE',
    });
  } catch (error) {
    if (error instanceof UserError && error.code === 'CONFLICT') throw accountError('DATA_CONFLICT');
    throw error;
  }
}

/** Signs in the user the proxy names, creating them first when allowed. */
export async function loginRemote(db: Db, secret: Uint8Array, settings: RemoteAuthSettings, header: (name: string) => string | undefined): Promise<LoginResult> {
  if (!settings.enabled) throw accountError('REMOTE_AUTH_DISABLED');
  const name = header(settings.headerName);
  let username = header(settings.headerUser);
  const email = header(settings.headerEmail);
  const groups = header(settings.headerGroups);
  if (!username && email) username = (await findUserByEmail(db, email))?.username;
  if (!username) throw new AccountError('REMOTE_USER_MISSING', 'Remote-User header is missing');

  let user = await findUserByName(db, username);
  if (!user && settings.createNewUsers) {
    await provisionRemoteUser(db, settings, { username, name, email, groups });
    user = await findUserByName(db, username);
  }
  if (!user) throw new AccountError('REMOTE_USER_NOT_PROVISIONED', 'User not found and remote user creation is disabled');
  const isDefaultPassword = user.is_default_password === 1;
  const tokens = await issueTokens(db, secret, user.id);
  return { ...tokens, isDefaultPassword };
}
