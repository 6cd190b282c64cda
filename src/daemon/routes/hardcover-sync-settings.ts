// The caller's Hardcover sync settings (Grimmory's HardcoverSyncSettingsController). The API key goes in whole and
// comes back masked; sending the masked form back (the web UI does when the switch is toggled) keeps the stored key.
import Type from 'typebox';
import { HardcoverSettingsError, loadHardcoverSettings, maskedSettings, updateHardcoverSettings, API_KEY_MAX_LENGTH } from '../../core/hardcover/sync-settings.ts';
import { principalOf } from '../authenticate.ts';
import { badRequest } from '../http-errors.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';
import { nullable } from '../schema-types.ts';

const RULE = adminOr('canSyncKoReader', 'canSyncKobo');

const HardcoverSyncSettingsBody = Type.Object({
  hardcoverApiKey: nullable(Type.String({ maxLength: API_KEY_MAX_LENGTH })),
  hardcoverSyncEnabled: nullable(Type.Boolean()),
});

export const hardcoverSyncSettingsRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/hardcover-sync-settings',
    auth: 'jwt',
    rule: RULE,
    handler: async (request, _reply, ctx) => maskedSettings(await loadHardcoverSettings(ctx.store.db, principalOf(request).userId)),
  },
  {
    method: 'PUT',
    url: '/api/v1/hardcover-sync-settings',
    auth: 'jwt',
    rule: RULE,
    schema: { body: HardcoverSyncSettingsBody },
    handler: async (request, _reply, ctx) => {
      const body = request.body as { hardcoverApiKey?: string | null; hardcoverSyncEnabled?: boolean | null };
      try {
        return maskedSettings(await updateHardcoverSettings(ctx.store.db, principalOf(request).userId, body));
      } catch (error) {
        if (error instanceof HardcoverSettingsError) throw badRequest('Validation error', [error.message]);
        throw error;
      }
    },
  },
];
