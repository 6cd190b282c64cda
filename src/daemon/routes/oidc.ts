// OIDC sign-in (Grimmory's OidcAuthController): a one-time state, the code exchange for the web UI (JSON), for mobile
// apps (query or form parameters, or a 302 back into the app with the tokens in the fragment), and back-channel logout.
import Type from 'typebox';
import { allowedPrivateHosts } from '../../core/config.ts';
import { consumeState, issueState } from '../../core/auth/oidc/auth-state.ts';
import { OidcError, type OidcErrorCode } from '../../core/auth/oidc/oidc-error.ts';
import type { OidcDeps } from '../../core/auth/oidc/oidc-login.ts';
import { loadOidcSettings } from '../../core/auth/oidc/oidc-settings.ts';
import { checkAppRedirectUri } from '../../core/auth/oidc/redirect-uris.ts';
import { settingsEnvironment } from '../../core/settings/environment.ts';
import { UserError } from '../../core/users/users.ts';
import { audit } from '../audit.ts';
import type { DaemonContext } from '../context.ts';
import { ApiError, badRequest } from '../http-errors.ts';
import type { RouteRequest, RouteSpec } from '../route-spec.ts';

export const OIDC_ERROR_STATUS: Record<OidcErrorCode, number> = {
  OIDC_DISABLED: 403,
  OIDC_NOT_CONFIGURED: 403,
  OIDC_INVALID_STATE: 400,
  OIDC_INVALID_REDIRECT_URI: 400,
  OIDC_TOKEN_EXCHANGE_FAILED: 502,
  OIDC_PROVIDER_UNREACHABLE: 502,
  OIDC_INVALID_TOKEN: 401,
  OIDC_USER_NOT_PROVISIONED: 403,
  USERNAME_ALREADY_TAKEN: 400,
  OIDC_LOGOUT_INVALID: 400,
  OIDC_LOGOUT_MISSING_JTI: 400,
  OIDC_LOGOUT_REPLAY: 400,
  GROUP_MAPPING_NOT_FOUND: 404,
  GROUP_MAPPING_CONFLICT: 400,
};

/** Runs an OIDC operation, answering its refusals with Grimmory's status and message. */
export async function oidcCall<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof OidcError) throw new ApiError(OIDC_ERROR_STATUS[error.code], error.message);
    if (error instanceof UserError) throw badRequest(error.message);
    throw error;
  }
}

// openid-client loads on the first sign-in, not when the daemon starts: most installs never use OIDC.
const oidcLogin = () => import('../../core/auth/oidc/oidc-login.ts');
const backchannelLogout = () => import('../../core/auth/oidc/backchannel-logout.ts');

export function oidcDeps(ctx: DaemonContext): OidcDeps {
  return { db: ctx.store.db, secret: ctx.jwtSecret, env: settingsEnvironment(), allowPrivateHosts: allowedPrivateHosts(ctx.config) };
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first.trim() === '' ? undefined : first;
}

/** Where the request came from: its Origin header, else the address it was made to. */
function requestOrigin(request: RouteRequest): string {
  return firstHeader(request.headers.origin) ?? `${request.protocol}://${request.host}`;
}

const NonBlank = Type.String({ minLength: 1, pattern: '\\S' });
const OidcCallbackRequest = Type.Object({ code: NonBlank, codeVerifier: NonBlank, redirectUri: NonBlank, nonce: NonBlank, state: NonBlank });
const RedirectQuery = Type.Object({
  code: NonBlank,
  code_verifier: NonBlank,
  redirect_uri: NonBlank,
  nonce: NonBlank,
  state: NonBlank,
  app_redirect_uri: NonBlank,
});

interface CodeParams {
  code: string;
  code_verifier: string;
  redirect_uri: string;
  nonce: string;
  state: string;
}

/** Spring's `@RequestParam`: a parameter from the query string or a form body. */
function requestParam(request: RouteRequest, name: string): string | undefined {
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.[name];
  const body = request.body;
  const fromBody = body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
  return [fromQuery, fromBody].flat().find((v): v is string => typeof v === 'string' && v !== '');
}

function requiredParams<K extends string>(request: RouteRequest, names: readonly K[]): Record<K, string> {
  const out = {} as Record<K, string>;
  for (const name of names) {
    const value = requestParam(request, name);
    if (value === undefined) throw badRequest(`Required parameter '${name}' is not present.`);
    out[name] = value;
  }
  return out;
}

const CODE_PARAMS = ['code', 'code_verifier', 'redirect_uri', 'nonce', 'state'] as const;

/** The code exchange and sign-in, audited as Grimmory audits it (a refused state is not a failed sign-in). */
async function signIn(ctx: DaemonContext, request: RouteRequest, params: CodeParams, failure: string) {
  const { loginWithOidc } = await oidcLogin();
  let result: Awaited<ReturnType<typeof loginWithOidc>>;
  try {
    result = await loginWithOidc(oidcDeps(ctx), {
      code: params.code,
      codeVerifier: params.code_verifier,
      redirectUri: params.redirect_uri,
      nonce: params.nonce,
      requestOrigin: requestOrigin(request),
    });
  } catch (error) {
    await audit(ctx, request, 'OIDC_LOGIN_FAILED', failure);
    throw error;
  }
  const { id, username, outcome, linkedLocalAccount } = result.account;
  const actor = { userId: id, username };
  const user = { type: 'User', id };
  if (outcome === 'provisioned') await audit(ctx, request, 'OIDC_USER_PROVISIONED', `OIDC auto-provisioned user: ${username}`, user, actor);
  if (linkedLocalAccount) await audit(ctx, request, 'OIDC_ACCOUNT_LINKED', `Local account linked to OIDC for user: ${username}`, user, actor);
  await audit(ctx, request, 'LOGIN_SUCCESS', `Login successful for user: ${username}`, user, actor);
  await audit(ctx, request, 'OIDC_LOGIN_SUCCESS', `OIDC login successful for user: ${username}`, user, actor);
  return result;
}

const accessTokenDto = (r: { accessToken: string; refreshToken: string; expires: number; isDefaultPassword: boolean }) => ({
  accessToken: r.accessToken,
  refreshToken: r.refreshToken,
  expires: r.expires,
  isDefaultPassword: r.isDefaultPassword,
});

export const oidcRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/auth/oidc/state',
    auth: 'public',
    handler: async (_request, _reply, ctx) => ({ state: await issueState(ctx.store.db) }),
  },
  {
    method: 'POST',
    url: '/api/v1/auth/oidc/callback',
    auth: 'public',
    schema: { body: OidcCallbackRequest },
    handler: async (request, _reply, ctx) => {
      const body = request.body as { code: string; codeVerifier: string; redirectUri: string; nonce: string; state: string };
      return oidcCall(async () => {
        await consumeState(ctx.store.db, body.state);
        const params = { code: body.code, code_verifier: body.codeVerifier, redirect_uri: body.redirectUri, nonce: body.nonce, state: body.state };
        const result = await signIn(ctx, request, params, 'OIDC callback login failed');
        return accessTokenDto(result);
      });
    },
  },
  {
    method: 'GET',
    url: '/api/v1/auth/oidc/redirect',
    auth: 'public',
    schema: { querystring: RedirectQuery },
    handler: async (request, reply, ctx) => {
      const query = request.query as CodeParams & { app_redirect_uri: string };
      await oidcCall(async () => {
        await consumeState(ctx.store.db, query.state);
        checkAppRedirectUri(query.app_redirect_uri, (await loadOidcSettings(ctx.store.db, settingsEnvironment())).redirectUris);
      });
      let fragment: string;
      try {
        const tokens = await signIn(ctx, request, query, 'OIDC redirect login failed');
        fragment = new URLSearchParams({
          access_token: tokens.accessToken,
          refresh_token: tokens.refreshToken,
          is_default_password: String(tokens.isDefaultPassword),
          expires_in: String(tokens.expires),
        }).toString();
      } catch (error) {
        request.log.warn({ code: (error as { code?: unknown }).code, err: error }, 'OIDC redirect sign-in failed');
        fragment = `error=${encodeURIComponent('Authentication failed')}`;
      }
      return reply.status(302).header('location', `${query.app_redirect_uri}#${fragment}`).header('cache-control', 'no-store').send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/auth/oidc/mobile/callback',
    auth: 'public',
    formBody: true,
    handler: async (request, _reply, ctx) => {
      const params = requiredParams(request, CODE_PARAMS);
      return oidcCall(async () => {
        await consumeState(ctx.store.db, params.state);
        return accessTokenDto(await signIn(ctx, request, params, 'OIDC mobile callback login failed'));
      });
    },
  },
  {
    method: 'POST',
    url: '/api/v1/auth/oidc/backchannel-logout',
    auth: 'public',
    formBody: true,
    handler: async (request, reply, ctx) => {
      reply.header('cache-control', 'no-store');
      const token = requestParam(request, 'logout_token');
      try {
        if (token === undefined) throw badRequest("Required parameter 'logout_token' is not present.");
        const { handleLogoutToken } = await backchannelLogout();
        const outcome = await handleLogoutToken(oidcDeps(ctx), token);
        for (const user of outcome.users) {
          await audit(ctx, request, 'BACKCHANNEL_LOGOUT', `Back-channel logout for user: ${user.username}`, { type: 'User', id: user.id }, { userId: user.id, username: user.username });
        }
        return reply.status(200).send();
      } catch (error) {
        // Grimmory answers every refusal with a bare 400; the reason goes to the log.
        if (!(error instanceof OidcError) && !(error instanceof ApiError)) request.log.error({ err: error }, 'OIDC back-channel logout failed');
        else request.log.warn({ code: error instanceof OidcError ? error.code : undefined, reason: error.message }, 'OIDC back-channel logout refused');
        return reply.status(400).send();
      }
    },
  },
];
