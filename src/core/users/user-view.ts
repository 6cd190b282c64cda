// A user as Grimmory's BookLoreUser JSON: profile, every permission flag, assigned libraries and complete settings.
import { permissionsFromRow, type Permissions } from '../auth/permissions.ts';
import { libraryJson } from '../libraries/library-json.ts';
import { listLibraries } from '../libraries/libraries.ts';
import type { Db } from '../store/store.ts';
import { userSettingsJson, type StoredSetting } from './user-settings.ts';

export interface BookLoreUserJson {
  id: number;
  username: string;
  defaultPassword: boolean;
  name: string | null;
  email: string | null;
  locale: string | null;
  theme: string | null;
  themeAccent: string | null;
  themeSyncEnabled: boolean;
  uiFont: string | null;
  provisioningMethod: string | null;
  assignedLibraries: Record<string, unknown>[];
  permissions: Permissions;
  userSettings: Record<string, unknown>;
}

async function buildUsers(db: Db, ids: number[] | 'all'): Promise<BookLoreUserJson[]> {
  let users = db.selectFrom('users').selectAll().orderBy('id');
  if (ids !== 'all') {
    if (ids.length === 0) return [];
    users = users.where('id', 'in', ids);
  }
  const rows = await users.execute();
  if (rows.length === 0) return [];
  const userIds = rows.map((r) => r.id);
  const [perms, mappings, settings, libraries] = await Promise.all([
    db.selectFrom('user_permissions').selectAll().where('user_id', 'in', userIds).execute(),
    db.selectFrom('user_library_mapping').select(['user_id', 'library_id']).where('user_id', 'in', userIds).execute(),
    db.selectFrom('user_settings').select(['user_id', 'setting_key', 'setting_value']).where('user_id', 'in', userIds).execute(),
    listLibraries(db),
  ]);
  const libraryById = new Map(libraries.map((l) => [l.id, libraryJson(l)]));
  const settingsOf = new Map<number, StoredSetting[]>();
  for (const s of settings) settingsOf.set(s.user_id, [...(settingsOf.get(s.user_id) ?? []), s]);

  return rows.map((u) => ({
    id: u.id,
    username: u.username,
    defaultPassword: u.is_default_password === 1,
    name: u.name,
    email: u.email,
    locale: u.locale,
    theme: u.theme,
    themeAccent: u.theme_accent,
    themeSyncEnabled: u.theme_sync_enabled === 1,
    uiFont: u.ui_font,
    provisioningMethod: u.provisioning_method,
    assignedLibraries: mappings
      .filter((m) => m.user_id === u.id)
      .map((m) => libraryById.get(m.library_id))
      .filter((l): l is Record<string, unknown> => l !== undefined),
    permissions: permissionsFromRow(perms.find((p) => p.user_id === u.id) ?? {}),
    userSettings: userSettingsJson(settingsOf.get(u.id) ?? []),
  }));
}

export async function bookLoreUser(db: Db, userId: number): Promise<BookLoreUserJson | undefined> {
  return (await buildUsers(db, [userId]))[0];
}

export function listBookLoreUsers(db: Db): Promise<BookLoreUserJson[]> {
  return buildUsers(db, 'all');
}
