// Sign-in, token refresh, logout, admin registration and forward-auth (Grimmory's AuthenticationController and LogoutController).
import Type from 'typebox';
import { AccountError, type AccountErrorCode } from '../../core/auth/account-error.ts';
import { loginWithPassword } from '../../core/auth/login.ts';
import { endSessionUrl } from '../../core/auth/oidc/end-session.ts';
import { PERMISSIONS, type Permission } from '../../core/auth/permissions.ts';
import { liveRefreshTokenOwner, refreshSession, revokeRefreshTokens } from '../../core/auth/refresh-tokens.ts';
import { revokeAllSessions } from '../../core/auth/sessions.ts';
import { loginRemote, remoteAuthSettings } from '../../core/auth/remote-auth.ts';
import { registerUser } from '../../core/users/user-admin.ts';
import { principalOf } from '../authenticate.ts';
import { signInPolicy } from '../sign-in-policy.ts';
import { audit, auditedLogin, auditedRefresh } from '../audit.ts';
import { ApiError } from '../http-errors.ts';
import { ADMIN, type RouteSpec } from '../route-spec.ts';
import { oidcDeps } from './oidc.ts';

const ACCOUNT_ERROR_STATUS: Record<AccountErrorCode, number> = {
  INVALID_CREDENTIALS: 400,
  RATE_LIMITED: 429,
  OIDC_ONLY_MODE: 403,
  REMOTE_AUTH_DISABLED: 203,
  REMOTE_USER_MISSING: 400,
  REMOTE_USER_NOT_PROVISIONED: 500,
  USER_NOT_FOUND: 400,
  USERNAME_ALREADY_TAKEN: 400,
  DATA_CONFLICT: 400,
  SELF_DELETION_NOT_ALLOWED: 403,
  PASSWORD_INCORRECT: 400,
  PASSWORD_TOO_SHORT: 400,
  PASSWORD_TOO_LONG: 400,
  PASSWORD_SAME_AS_CURRENT: 400,
  DEMO_USER_PASSWORD_CHANGE_NOT_ALLOWED: 403,
  INVALID_INPUT: 400,
};

/** Runs an account operation, answering its refusals with Grimmory's status and message. */
export async function accountCall<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof AccountError) throw new ApiError(ACCOUNT_ERROR_STATUS[error.code], error.message);
    throw error;
  }
}

const NonBlank = Type.String({ minLength: 1, pattern: '\\S' });
const OptionalFlag = Type.Optional(Type.Union([Type.Boolean(), Type.Null()]));

const UserLoginRequest = Type.Object({ username: NonBlank, password: NonBlank });
const RefreshTokenRequest = Type.Object({ refreshToken: NonBlank });
/** Grimmory's LogoutRequest `{refreshToken}`: the body is optional, and so is its one field. */
function logoutRefreshToken(body: unknown): string | undefined {
  const token = typeof body === 'object' && body !== null ? (body as { refreshToken?: unknown }).refreshToken : undefined;
  return typeof token === 'string' && token.trim() !== '' ? token : undefined;
}

/** Entity-style flag names (`permissionUpload`...) as UserCreateRequest has them; demoUser cannot be granted here. */
const REGISTERABLE = PERMISSIONS.filter(([json]) => json !== 'demoUser');

const UserCreateRequest = Type.Object({
  username: NonBlank,
  password: Type.String({ minLength: 8, maxLength: 72 }),
  name: NonBlank,
  email: Type.String({ minLength: 1, format: 'email' }),
  ...Object.fromEntries(REGISTERABLE.map(([, entity]) => [entity, OptionalFlag])),
  selectedLibraries: Type.Optional(Type.Union([Type.Array(Type.Integer()), Type.Null()])),
});

function firstHeader(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === '' ? undefined : first;
}

export const authRoutes: RouteSpec[] = [
  {
    method: 'POST',
    url: '/api/v1/auth/login',
    auth: 'public',
    schema: { body: UserLoginRequest },
    handler: async (request, _reply, ctx) => {
      const { username, password } = request.body as { username: string; password: string };
      const result = await accountCall(() => auditedLogin(ctx, request, username, () => loginWithPassword(ctx.store.db, ctx.jwtSecret, signInPolicy(ctx), { username, password, ip: request.ip })));
      return { accessToken: result.accessToken, refreshToken: result.refreshToken, expires: result.expires, isDefaultPassword: result.isDefaultPassword };
    },
  },
  {
    method: 'POST',
    url: '/api/v1/auth/refresh',
    auth: 'public',
    schema: { body: RefreshTokenRequest },
    handler: async (request, _reply, ctx) => {
      const { refreshToken } = request.body as { refreshToken: string };
      const result = await accountCall(() => auditedRefresh(ctx, request, () => refreshSession(ctx.store.db, ctx.jwtSecret, signInPolicy(ctx), request.ip, refreshToken)));
      return { accessToken: result.accessToken, refreshToken: result.refreshToken, expires: result.expires };
    },
  },
  {
    // Grimmory's web UI drops its access token first and posts only `{refreshToken}`: either identifies the user.
    // As Grimmory, every refresh token of that user is revoked; access tokens run out on their own (sign out
    // everywhere ends them at once).
    method: 'POST',
    url: '/api/v1/auth/logout',
    auth: 'public',
    handler: async (request, _reply, ctx) => {
      const refreshToken = logoutRefreshToken(request.body);
      const userId = request.principal?.userId ?? (refreshToken ? (await liveRefreshTokenOwner(ctx.store.db, ctx.jwtSecret, refreshToken))?.userId : undefined);
      if (userId === undefined) throw new ApiError(401, refreshToken ? 'Invalid refresh token' : 'No authentication context or refresh token provided');
      await revokeRefreshTokens(ctx.store.db, userId);
      const username = request.principal?.username ?? (await ctx.store.db.selectFrom('users').select('username').where('id', '=', userId).executeTakeFirst())?.username ?? String(userId);
      await audit(ctx, request, 'LOGOUT', `User logged out: ${username}`, { type: 'User', id: userId }, { userId, username });
      // An end-session URL exists only for OIDC users while OIDC is on (null otherwise).
      return { logoutUrl: await endSessionUrl(oidcDeps(ctx), userId, firstHeader(request.headers.origin)) };
    },
  },
  {
    // Bindery's own: end every session of the caller at once (all devices, this one included).
    method: 'POST',
    url: '/api/v1/auth/logout-everywhere',
    auth: 'jwt',
    rule: 'any',
    handler: async (request, reply, ctx) => {
      const { userId, username } = principalOf(request);
      await revokeAllSessions(ctx.store.db, userId, 'sign-out-everywhere');
      await audit(ctx, request, 'LOGOUT', `User signed out everywhere: ${username}`, { type: 'User', id: userId });
      return reply.status(204).send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/auth/register',
    auth: 'jwt',
    rule: ADMIN,
    schema: { body: UserCreateRequest },
    handler: async (request, reply, ctx) => {
      const body = request.body as Record<string, unknown> & { username: string; password: string; name: string; email: string; selectedLibraries?: number[] | null };
      const permissions: Partial<Record<Permission, boolean>> = {};
      for (const [json, entity] of REGISTERABLE) permissions[json] = body[entity] === true;
      const userId = await accountCall(() =>
        registerUser(ctx.store.db, {
          username: body.username,
          password: body.password,
          name: body.name,
          email: body.email,
          permissions,
          libraryIds: body.selectedLibraries ?? [],
        }),
      );
      await audit(ctx, request, 'USER_CREATED', `Created user: ${body.username}`, { type: 'User', id: userId });
      return reply.status(204).send();
    },
  },
  {
    method: 'GET',
    url: '/api/v1/auth/remote',
    auth: 'public',
    handler: async (request, _reply, ctx) => {
      const header = (name: string): string | undefined => firstHeader(request.headers[name.toLowerCase()]);
      const result = await accountCall(() => loginRemote(ctx.store.db, ctx.jwtSecret, remoteAuthSettings(), header));
      return { accessToken: result.accessToken, refreshToken: result.refreshToken, expires: result.expires, isDefaultPassword: result.isDefaultPassword };
    },
  },
];
