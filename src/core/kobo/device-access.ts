// Who a device is: the token in its store URL names a user's Kobo settings; the user must hold the Kobo sync
// permission (admin alone does not grant it, as in Grimmory).
import { principalFor, type Principal } from '../auth/principal.ts';
import type { Store } from '../store/store.ts';
import type { KoboSettingsRow } from './sync-settings.ts';

export interface KoboDevice {
  principal: Principal;
  settings: KoboSettingsRow;
}

export type DeviceRefusal = 'INVALID_TOKEN' | 'NO_USER' | 'NO_PERMISSION';

export async function deviceFor(store: Store, token: string): Promise<KoboDevice | DeviceRefusal> {
  if (token === '') return 'INVALID_TOKEN';
  // Every request of a device asks: plain SQL (the query builder cost more than the read on a sync page).
  const settings = (await store.exec.get('SELECT * FROM kobo_user_settings WHERE token = ?', [token])) as KoboSettingsRow | undefined;
  if (!settings) return 'INVALID_TOKEN';
  const principal = await principalFor(store, settings.user_id);
  if (!principal) return 'NO_USER';
  if (!principal.permissions.canSyncKobo) return 'NO_PERMISSION';
  return { principal, settings };
}
