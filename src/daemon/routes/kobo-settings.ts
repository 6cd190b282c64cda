// The caller's own Kobo sync settings (Grimmory's KoboSettingsController): read them, renew the device token, change them.
import Type from 'typebox';
import { koboSettingsFor, KoboSettingsError, renewDeviceToken, settingsJson, updateKoboSettings, type KoboSettingsUpdate } from '../../core/kobo/sync-settings.ts';
import { principalOf } from '../authenticate.ts';
import { badRequest } from '../http-errors.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

const BASE = '/api/v1/kobo-settings';
const RULE = adminOr('canSyncKobo');

const SettingsBody = Type.Object(
  {
    syncEnabled: Type.Optional(Type.Unknown()),
    progressMarkAsReadingThreshold: Type.Optional(Type.Unknown()),
    progressMarkAsFinishedThreshold: Type.Optional(Type.Unknown()),
    autoAddToShelf: Type.Optional(Type.Unknown()),
    twoWayProgressSync: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
);

export const koboSettingsRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: BASE,
    auth: 'jwt',
    rule: RULE,
    handler: async (request, _reply, ctx) => settingsJson(await koboSettingsFor(ctx.store.db, principalOf(request).userId)),
  },
  {
    method: 'PUT',
    url: `${BASE}/token`,
    auth: 'jwt',
    rule: RULE,
    handler: async (request, _reply, ctx) => settingsJson(await renewDeviceToken(ctx.store.db, principalOf(request).userId)),
  },
  {
    method: 'PUT',
    url: BASE,
    auth: 'jwt',
    rule: RULE,
    bodyLimit: 64 * 1024,
    schema: { body: SettingsBody },
    handler: async (request, _reply, ctx) => {
      try {
        return settingsJson(await updateKoboSettings(ctx.store.db, principalOf(request).userId, request.body as KoboSettingsUpdate));
      } catch (error) {
        if (error instanceof KoboSettingsError) throw badRequest('Validation error', [error.message]);
        throw error;
      }
    },
  },
];
