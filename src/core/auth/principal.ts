// Who is asking: a user with live permissions, assigned libraries and content restrictions.
import { memosPerOwner } from '../store/snapshot.ts';
import type { Db, Store } from '../store/store.ts';
import { permissionsFromRow, type Permission, type Permissions } from './permissions.ts';

export interface ContentRestriction {
  type: 'CATEGORY' | 'TAG' | 'MOOD' | 'AGE_RATING' | 'CONTENT_RATING';
  mode: 'EXCLUDE' | 'ALLOW_ONLY';
  value: string;
}

export interface Principal {
  userId: number;
  username: string;
  isDefaultPassword: boolean;
  /** users.session_version: tokens signed under another version are no longer valid. */
  sessionVersion: number;
  permissions: Permissions;
  /** Library ids the user may see; admins see every library regardless. */
  libraryIds: number[];
  restrictions: ContentRestriction[];
}

export function isAdmin(p: Principal): boolean {
  return p.permissions.admin;
}

/** `admin | flag...` — the usual shape of a route rule. */
export function hasAny(p: Principal, flags: readonly Permission[]): boolean {
  return flags.some((f) => p.permissions[f]);
}

export async function loadPrincipal(db: Db, userId: number): Promise<Principal | undefined> {
  const user = await db.selectFrom('users').select(['id', 'username', 'is_default_password', 'session_version']).where('id', '=', userId).executeTakeFirst();
  if (!user) return undefined;
  const perms = await db.selectFrom('user_permissions').selectAll().where('user_id', '=', userId).executeTakeFirst();
  const libraries = await db.selectFrom('user_library_mapping').select('library_id').where('user_id', '=', userId).execute();
  const restrictions = await db.selectFrom('user_content_restriction').select(['restriction_type', 'mode', 'value']).where('user_id', '=', userId).execute();
  return {
    userId: user.id,
    username: user.username,
    isDefaultPassword: user.is_default_password === 1,
    sessionVersion: user.session_version,
    permissions: permissionsFromRow(perms ?? {}),
    libraryIds: libraries.map((l) => l.library_id),
    restrictions: restrictions.map((r) => ({ type: r.restriction_type as ContentRestriction['type'], mode: r.mode as ContentRestriction['mode'], value: r.value })),
  };
}

const principals = memosPerOwner<number, Principal | undefined>(1000);

/**
 * The principal as loadPrincipal reads it, reused until anything in the catalog changes: a write by this process or a
 * commit by another one (the CLI) is seen on the next request, as Grimmory reloads the user on every request. Cached
 * principals are frozen: many requests share one.
 */
export async function principalFor(store: Store, userId: number): Promise<Principal | undefined> {
  const memo = principals(store);
  return memo.getAsync(store, userId, async () => {
    const principal = await loadPrincipal(store.db, userId);
    if (!principal) return undefined;
    Object.freeze(principal.permissions);
    Object.freeze(principal.libraryIds);
    principal.restrictions.forEach((r) => Object.freeze(r));
    Object.freeze(principal.restrictions);
    return Object.freeze(principal);
  });
}

/** The principal `principalFor` would give, when it is already kept for the catalog as it is now. */
export function knownPrincipal(store: Store, userId: number): Principal | undefined {
  return principals(store).peek(store, userId);
}
