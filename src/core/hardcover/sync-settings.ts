// Each user's Hardcover sync settings (Grimmory's HardcoverSyncSettings): their personal API key and the switch. Kept
// where Grimmory keeps them, as the user settings `hardcoverApiKey` / `hardcoverSyncEnabled`; older Grimmory catalogs
// had them on the Kobo settings row, which is still read while the user has none of their own. The key is a
// credential: what leaves the server is a masked form that only shows its last characters.
import { CodedError } from '../coded-error.ts';
import type { Db } from '../store/store.ts';

export const API_KEY_SETTING = 'hardcoverApiKey';
export const SYNC_ENABLED_SETTING = 'hardcoverSyncEnabled';
/** Grimmory's column size for the key. */
export const API_KEY_MAX_LENGTH = 2048;

export class HardcoverSettingsError extends CodedError<'INVALID'> {}

export interface HardcoverSyncSettings {
  hardcoverApiKey: string | null;
  hardcoverSyncEnabled: boolean;
}

const MASK = '********';
/** Keys shorter than this are masked whole: showing four characters of a short secret gives too much away. */
const SHOW_TAIL_FROM = 16;

/** The key as it is shown: never the key itself. Null and "" pass through (there is nothing to hide). */
export function maskApiKey(key: string | null): string | null {
  if (key === null || key === '') return key;
  return key.length >= SHOW_TAIL_FROM ? `${MASK}${key.slice(-4)}` : MASK;
}

/** The settings as the API answers them: the key masked. */
export function maskedSettings(settings: HardcoverSyncSettings): HardcoverSyncSettings {
  return { hardcoverApiKey: maskApiKey(settings.hardcoverApiKey), hardcoverSyncEnabled: settings.hardcoverSyncEnabled };
}

/** The stored settings, with the key in full (for the sync itself; never for an answer). */
export async function loadHardcoverSettings(db: Db, userId: number): Promise<HardcoverSyncSettings> {
  const rows = await db
    .selectFrom('user_settings')
    .select(['setting_key', 'setting_value'])
    .where('user_id', '=', userId)
    .where('setting_key', 'in', [API_KEY_SETTING, SYNC_ENABLED_SETTING])
    .execute();
  const byKey = new Map(rows.map((r) => [r.setting_key, r.setting_value]));
  let apiKey = byKey.get(API_KEY_SETTING) ?? null;
  const enabledText = byKey.get(SYNC_ENABLED_SETTING);
  let enabled = enabledText?.trim().toLowerCase() === 'true';
  if (!byKey.has(API_KEY_SETTING) || enabledText === undefined) {
    const legacy = await db.selectFrom('kobo_user_settings').select(['hardcover_api_key', 'hardcover_sync_enabled']).where('user_id', '=', userId).executeTakeFirst();
    if (legacy) {
      if (!byKey.has(API_KEY_SETTING) && legacy.hardcover_api_key && legacy.hardcover_api_key.trim() !== '') apiKey = legacy.hardcover_api_key;
      if (enabledText === undefined && legacy.hardcover_sync_enabled === 1) enabled = true;
    }
  }
  return { hardcoverApiKey: apiKey, hardcoverSyncEnabled: enabled };
}

/** The key to sync with: present only while sync is on and a key is set. */
export async function hardcoverSyncKey(db: Db, userId: number): Promise<string | undefined> {
  const settings = await loadHardcoverSettings(db, userId);
  const key = settings.hardcoverApiKey?.trim();
  return settings.hardcoverSyncEnabled && key ? key : undefined;
}

export interface HardcoverSettingsUpdate {
  hardcoverApiKey?: string | null;
  hardcoverSyncEnabled?: boolean | null;
}

/**
 * Saves the form as Grimmory does: the switch as sent (missing = off) and the key trimmed, a missing or null key
 * clearing it. The masked key the API handed out comes back unchanged when only the switch is toggled: it keeps the
 * stored key. Returns what is stored now (key in full).
 */
export async function updateHardcoverSettings(db: Db, userId: number, update: HardcoverSettingsUpdate): Promise<HardcoverSyncSettings> {
  const sent = update.hardcoverApiKey ?? '';
  if (sent.length > API_KEY_MAX_LENGTH) throw new HardcoverSettingsError('INVALID', `hardcoverApiKey: must be at most ${API_KEY_MAX_LENGTH} characters`);
  // A header value cannot carry these; refusing them here beats a sync that fails on every progress change.
  if (/[\r\n\0]/.test(sent)) throw new HardcoverSettingsError('INVALID', 'hardcoverApiKey: must not contain line breaks');
  const current = await loadHardcoverSettings(db, userId);
  const trimmed = sent.trim();
  const apiKey = trimmed !== '' && trimmed === maskApiKey(current.hardcoverApiKey) ? (current.hardcoverApiKey ?? '') : trimmed;
  const enabled = update.hardcoverSyncEnabled === true;
  const now = new Date().toISOString();
  await db.transaction().execute(async (trx) => {
    for (const [key, value] of [
      [API_KEY_SETTING, apiKey],
      [SYNC_ENABLED_SETTING, String(enabled)],
    ] as const) {
      await trx
        .insertInto('user_settings')
        .values({ user_id: userId, setting_key: key, setting_value: value, created_at: now, updated_at: now })
        .onConflict((oc) => oc.columns(['user_id', 'setting_key']).doUpdateSet({ setting_value: value, updated_at: now }))
        .execute();
    }
  });
  return { hardcoverApiKey: apiKey, hardcoverSyncEnabled: enabled };
}
