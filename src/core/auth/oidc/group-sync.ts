// Applying the group mappings at sign-in. ON_LOGIN makes the user's flags and libraries exactly what their groups'
// mappings grant; ON_LOGIN_ADDITIVE only adds. Nothing happens when the mode is DISABLED, the provider sent no
// groups, or no mapping matches one of them (so a provider that stops sending groups does not lock anyone out).
import { PERMISSIONS, rowFromPermissions, type Permission } from '../permissions.ts';
import type { Db } from '../../store/store.ts';
import { mappingsForGroups, type GroupMapping } from './group-mappings.ts';
import type { GroupSyncMode } from './oidc-settings.ts';

/** Every flag a mapping can set through its permission list: all but admin (its own switch) and demo user. */
const MAPPABLE = PERMISSIONS.filter(([json]) => json !== 'admin' && json !== 'demoUser');

export interface MergedGrant {
  admin: boolean;
  permissions: Set<Permission>;
  libraryIds: Set<number>;
}

export function mergeMappings(mappings: readonly GroupMapping[]): MergedGrant {
  const merged: MergedGrant = { admin: false, permissions: new Set(), libraryIds: new Set() };
  for (const mapping of mappings) {
    if (mapping.isAdmin) merged.admin = true;
    for (const [json, entity] of MAPPABLE) if (mapping.permissions.includes(entity)) merged.permissions.add(json);
    for (const id of mapping.libraryIds) merged.libraryIds.add(id);
  }
  return merged;
}

/** Returns true when the user's permissions or libraries were rewritten. */
export async function syncUserGroups(db: Db, userId: number, groups: readonly string[], mode: GroupSyncMode): Promise<boolean> {
  if (mode === 'DISABLED' || groups.length === 0) return false;
  const mappings = await mappingsForGroups(db, groups);
  if (mappings.length === 0) return false;
  const grant = mergeMappings(mappings);
  const additive = mode === 'ON_LOGIN_ADDITIVE';

  const flags: Partial<Record<Permission, boolean>> = {};
  if (!additive || grant.admin) flags.admin = grant.admin;
  for (const [json] of MAPPABLE) if (!additive || grant.permissions.has(json)) flags[json] = grant.permissions.has(json);

  await db.transaction().execute(async (trx) => {
    const known = new Set((await trx.selectFrom('library').select('id').execute()).map((l) => l.id));
    const wanted = [...grant.libraryIds].filter((id) => known.has(id));
    const columns = rowFromPermissions(flags);
    if (Object.keys(columns).length > 0) {
      await trx.insertInto('user_permissions').values({ user_id: userId, ...columns }).onConflict((oc) => oc.column('user_id').doUpdateSet(columns)).execute();
    }
    if (!additive) await trx.deleteFrom('user_library_mapping').where('user_id', '=', userId).execute();
    if (wanted.length > 0) {
      await trx
        .insertInto('user_library_mapping')
        .values(wanted.map((library_id) => ({ user_id: userId, library_id })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  });
  return true;
}
