// Application settings: the full set for signed-in users (credentials only for admins), the login page's public
// subset, and admin changes by AppSettingKey constant name.
import Type from 'typebox';
import type { ProviderToTest } from '../../core/auth/oidc/diagnose.ts';
import { isAdmin } from '../../core/auth/principal.ts';
import { allowedPrivateHosts } from '../../core/config.ts';
import { loadAppSettings, loadPublicSettings } from '../../core/settings/app-settings.ts';
import { settingsEnvironment } from '../../core/settings/environment.ts';
import { withoutSecrets } from '../../core/settings/secrets.ts';
import { SettingsError, updateSettings, type SettingChange } from '../../core/settings/update-settings.ts';
import { auditSettings } from '../audit.ts';
import { principalOf } from '../authenticate.ts';
import { badRequest, forbidden } from '../http-errors.ts';
import { ADMIN, type RouteSpec } from '../route-spec.ts';
import { nullable } from '../schema-types.ts';

const SettingRequests = Type.Array(Type.Object({ name: Type.String(), value: Type.Optional(Type.Unknown()) }));

export const settingsRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/settings',
    auth: 'jwt',
    handler: async (request, _reply, ctx) => {
      const settings = await loadAppSettings(ctx.store.db, settingsEnvironment());
      return isAdmin(principalOf(request)) ? settings : withoutSecrets(settings);
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/settings',
    auth: 'jwt',
    rule: ADMIN,
    schema: { body: SettingRequests },
    handler: async (request, reply, ctx) => {
      try {
        await updateSettings(ctx.store.db, principalOf(request), request.body as SettingChange[], settingsEnvironment());
      } catch (error) {
        if (!(error instanceof SettingsError)) throw error;
        throw error.code === 'FORBIDDEN' ? forbidden(error.message) : badRequest(error.message, error.details);
      }
      await auditSettings(ctx, request, (request.body as SettingChange[]).map((c) => c.name));
      return reply.status(200).send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/settings/oidc/test',
    auth: 'jwt',
    rule: ADMIN,
    schema: { body: Type.Object({ issuerUri: nullable(Type.String()), clientId: nullable(Type.String()), clientSecret: nullable(Type.String()), scopes: nullable(Type.String()) }) },
    handler: async (request, _reply, ctx) => {
      const { diagnoseProvider } = await import('../../core/auth/oidc/diagnose.ts');
      return diagnoseProvider(request.body as ProviderToTest, allowedPrivateHosts(ctx.config));
    },
  },
  {
    method: 'GET',
    url: '/api/v1/public-settings',
    auth: 'public',
    handler: async (_request, _reply, ctx) => loadPublicSettings(ctx.store.db, settingsEnvironment()),
  },
];
