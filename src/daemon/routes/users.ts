// User accounts, profiles, per-user settings and passwords (Grimmory's UserController).
import Type from 'typebox';
import { userNotFound } from '../../core/auth/account-error.ts';
import { PERMISSION_NAMES, type Permission } from '../../core/auth/permissions.ts';
import { changeOwnPassword, deleteUser, setUserPassword, updateProfile, updateUser, type ProfileUpdate, type UserUpdate } from '../../core/users/user-admin.ts';
import { saveUserSetting } from '../../core/users/user-settings.ts';
import { bookLoreUser, listBookLoreUsers } from '../../core/users/user-view.ts';
import type { Db } from '../../core/store/store.ts';
import { audit, auditUser } from '../audit.ts';
import { principalOf } from '../authenticate.ts';
import { ADMIN, type RouteSpec } from '../route-spec.ts';
import { nullable } from '../schema-types.ts';
import { accountCall, authRoutes } from './auth.ts';


const IdParams = Type.Object({ id: Type.Integer() });

const UpdatePermissions = Type.Object(
  Object.fromEntries(PERMISSION_NAMES.filter((p) => p !== 'demoUser').map((p) => [p, nullable(Type.Boolean())])),
);

const UserUpdateRequest = Type.Object({
  name: nullable(Type.String()),
  email: nullable(Type.String()),
  permissions: nullable(UpdatePermissions),
  assignedLibraries: nullable(Type.Array(Type.Integer())),
});

const UserProfileUpdateRequest = Type.Object({
  name: nullable(Type.String()),
  email: nullable(Type.String()),
  locale: nullable(Type.String()),
  theme: nullable(Type.String()),
  themeAccent: nullable(Type.String()),
  themeSyncEnabled: nullable(Type.Boolean()),
  uiFont: nullable(Type.String()),
});

const ChangePasswordRequest = Type.Object({ currentPassword: nullable(Type.String()), newPassword: nullable(Type.String()) });
const ChangeUserPasswordRequest = Type.Object({ userId: nullable(Type.Integer()), newPassword: nullable(Type.String()) });
const UpdateUserSettingRequest = Type.Object({ key: nullable(Type.String()), value: Type.Optional(Type.Unknown()) });

async function userOr400(db: Db, id: number): Promise<unknown> {
  return accountCall(async () => {
    const user = await bookLoreUser(db, id);
    if (!user) throw userNotFound(id);
    return user;
  });
}

export const userRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/users/me',
    auth: 'jwt',
    rule: 'any',
    handler: (request, _reply, ctx) => userOr400(ctx.store.db, principalOf(request).userId),
  },
  {
    method: 'GET',
    url: '/api/v1/users',
    auth: 'jwt',
    rule: ADMIN,
    handler: (_request, _reply, ctx) => listBookLoreUsers(ctx.store.db),
  },
  {
    method: 'GET',
    url: '/api/v1/users/{id}',
    auth: 'jwt',
    rule: { selfOrAnyOf: ['admin'], param: 'id' },
    schema: { params: IdParams },
    handler: (request, _reply, ctx) => userOr400(ctx.store.db, (request.params as { id: number }).id),
  },
  {
    method: 'PUT',
    url: '/api/v1/users/{id}',
    auth: 'jwt',
    rule: ADMIN,
    schema: { params: IdParams, body: UserUpdateRequest },
    handler: async (request, _reply, ctx) => {
      const { id } = request.params as { id: number };
      const body = request.body as UserUpdate & { permissions?: Partial<Record<Permission, boolean | null>> | null };
      const permissions = body.permissions ? Object.fromEntries(Object.entries(body.permissions).map(([k, v]) => [k, v === true])) : body.permissions;
      await accountCall(() => updateUser(ctx.store.db, id, { ...body, permissions }));
      if (body.permissions) await auditUser(ctx, request, 'PERMISSIONS_CHANGED', (name) => `Changed permissions for user: ${name}`, id);
      await auditUser(ctx, request, 'USER_UPDATED', (name) => `Updated user: ${name}`, id);
      return userOr400(ctx.store.db, id);
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/users/{id}/profile',
    auth: 'jwt',
    rule: { selfOrAnyOf: ['admin'], param: 'id' },
    schema: { params: IdParams, body: UserProfileUpdateRequest },
    handler: async (request, _reply, ctx) => {
      const { id } = request.params as { id: number };
      await accountCall(() => updateProfile(ctx.store.db, id, request.body as ProfileUpdate));
      await auditUser(ctx, request, 'USER_UPDATED', (name) => `Updated user profile: ${name}`, id);
      return userOr400(ctx.store.db, id);
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/users/{id}',
    auth: 'jwt',
    rule: ADMIN,
    schema: { params: IdParams },
    handler: async (request, reply, ctx) => {
      const { id } = request.params as { id: number };
      const deleted = await accountCall(() => deleteUser(ctx.store.db, principalOf(request).userId, id));
      await audit(ctx, request, 'USER_DELETED', `Deleted user: ${deleted.username}`, { type: 'User', id: deleted.id });
      return reply.status(200).send();
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/users/change-password',
    auth: 'jwt',
    rule: 'any',
    schema: { body: ChangePasswordRequest },
    handler: async (request, reply, ctx) => {
      const body = request.body as { currentPassword?: string | null; newPassword?: string | null };
      await accountCall(() => changeOwnPassword(ctx.store.db, principalOf(request).userId, body.currentPassword, body.newPassword));
      await auditUser(ctx, request, 'PASSWORD_CHANGED', (name) => `Password changed by user: ${name}`, principalOf(request).userId);
      return reply.status(200).send();
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/users/change-user-password',
    auth: 'jwt',
    rule: ADMIN,
    schema: { body: ChangeUserPasswordRequest },
    handler: async (request, reply, ctx) => {
      const body = request.body as { userId?: number | null; newPassword?: string | null };
      await accountCall(() => setUserPassword(ctx.store.db, body.userId, body.newPassword));
      await auditUser(ctx, request, 'PASSWORD_CHANGED', (name) => `Password changed for user: ${name}`, body.userId);
      return reply.status(200).send();
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/users/{id}/settings',
    auth: 'jwt',
    // Only the user themself: Grimmory's rule is isSelf, without an admin exception.
    rule: { selfOrAnyOf: [], param: 'id' },
    schema: { params: IdParams, body: UpdateUserSettingRequest },
    handler: async (request, reply, ctx) => {
      const { id } = request.params as { id: number };
      const body = request.body as { key?: string | null; value?: unknown };
      await accountCall(() => saveUserSetting(ctx.store.db, id, body.key, body.value));
      return reply.status(200).send();
    },
  },
];

/** Sign-in and account routes together, as the route table registers them. */
export const accountRoutes: RouteSpec[] = [...authRoutes, ...userRoutes];
