// Reading application settings: the stored value of each key, or its default (stored on first read, as Grimmory does).
import { sql } from 'kysely';
import type { Db } from '../store/store.ts';
import type { SettingsEnvironment } from './environment.ts';
import { check, conform } from './shape.ts';
import { settingKey, type SettingKey } from './setting-keys.ts';

type Json = Record<string, unknown>;

/** Rows of `app_settings`; a key may be present with a NULL value. */
type StoredSettings = Map<string, string | null>;

export async function storedSettings(db: Db): Promise<StoredSettings> {
  const rows = await db.selectFrom('app_settings').select(['name', 'val']).execute();
  return new Map(rows.map((r) => [r.name, r.val]));
}

/** The typed value of one key given the stored rows, plus the text to store when the default should be kept. */
function resolve(key: SettingKey, stored: StoredSettings): { value: unknown; toStore?: string } {
  const raw = stored.get(key.dbKey);
  const v = key.value;
  if (v.kind === 'json') {
    if (raw !== undefined && raw !== null && raw.trim() !== '') {
      try {
        const parsed = JSON.parse(raw) as unknown;
        // A stored value that no longer fits reads as the default, without overwriting it.
        if (check(v.shape, parsed, '').length === 0) return { value: conform(v.shape, parsed) };
      } catch {
        // fall through to the default
      }
      return { value: conform(v.shape, v.initial()) };
    }
    const initial = v.initial();
    const value = initial === null ? null : conform(v.shape, initial);
    return value !== null && v.persist ? { value, toStore: JSON.stringify(value) } : { value };
  }
  // Scalars are created with their default when the key has no row at all; a row holding NULL stays NULL.
  const missing = !stored.has(key.dbKey);
  const text = missing ? (v.initial === null ? null : String(v.initial)) : (raw ?? null);
  const toStore = missing && text !== null ? { toStore: text } : {};
  if (v.kind === 'boolean') return { value: text?.trim().toLowerCase() === 'true', ...toStore };
  if (v.kind === 'integer') {
    const parsed = text !== null && /^\s*-?\d+\s*$/.test(text) ? Number(text) : null;
    return { value: parsed ?? v.initial, ...toStore };
  }
  return { value: text, ...toStore };
}

/** Reads the given keys, storing the defaults of the ones that were never set. */
async function readKeys(db: Db, names: readonly string[]): Promise<Map<string, unknown>> {
  const stored = await storedSettings(db);
  const out = new Map<string, unknown>();
  const toStore: { name: string; val: string }[] = [];
  for (const name of names) {
    const key = settingKey(name);
    const { value, toStore: text } = resolve(key, stored);
    out.set(name, value);
    if (text !== undefined) toStore.push({ name: key.dbKey, val: text });
  }
  if (toStore.length > 0) {
    // Another reader may create the same defaults at the same time; the first one stays.
    await db.insertInto('app_settings').values(toStore).onConflict((oc) => oc.column('name').doNothing()).execute();
  }
  return out;
}

/**
 * One setting's typed value (its default when unset), without storing anything. Reads that one row, in plain SQL: the
 * HTTP Basic routes check their switch on every request.
 */
export async function readSetting(db: Db, name: string): Promise<unknown> {
  const key = settingKey(name);
  const { rows } = await sql<{ name: string; val: string | null }>`SELECT name, val FROM app_settings WHERE name = ${key.dbKey}`.execute(db);
  return resolve(key, new Map(rows.map((r) => [r.name, r.val]))).value;
}

const APP_SETTING_KEYS = [
  'QUICK_BOOK_MATCH', 'LIBRARY_METADATA_REFRESH_OPTIONS', 'OIDC_PROVIDER_DETAILS', 'OIDC_REDIRECT_URIS', 'OIDC_AUTO_PROVISION_DETAILS',
  'METADATA_PROVIDER_SETTINGS', 'METADATA_MATCH_WEIGHTS', 'METADATA_PERSISTENCE_SETTINGS', 'METADATA_PUBLIC_REVIEWS_SETTINGS', 'KOBO_SETTINGS',
  'COVER_CROPPING_SETTINGS', 'METADATA_PROVIDER_SPECIFIC_FIELDS', 'AUTO_BOOK_SEARCH', 'UPLOAD_FILE_PATTERN', 'SIMILAR_BOOK_RECOMMENDATION',
  'OPDS_SERVER_ENABLED', 'KOMGA_API_ENABLED', 'KOMGA_GROUP_UNKNOWN', 'PDF_CACHE_SIZE_IN_MB', 'MAX_FILE_UPLOAD_SIZE_IN_MB',
  'METADATA_DOWNLOAD_ON_BOOKDROP', 'OIDC_SESSION_DURATION_HOURS', 'OIDC_ENABLED', 'OIDC_GROUP_SYNC_MODE', 'OIDC_FORCE_ONLY_MODE',
] as const;

/** Grimmory's `AppSettings` object: every property present, defaults filled in (and stored) for keys never set. */
export async function loadAppSettings(db: Db, env: SettingsEnvironment): Promise<Json> {
  const s = await readKeys(db, APP_SETTING_KEYS);
  const get = (name: (typeof APP_SETTING_KEYS)[number]): unknown => s.get(name) ?? null;
  return {
    defaultMetadataRefreshOptions: get('QUICK_BOOK_MATCH'),
    libraryMetadataRefreshOptions: get('LIBRARY_METADATA_REFRESH_OPTIONS'),
    autoBookSearch: get('AUTO_BOOK_SEARCH'),
    similarBookRecommendation: get('SIMILAR_BOOK_RECOMMENDATION'),
    opdsServerEnabled: get('OPDS_SERVER_ENABLED'),
    komgaApiEnabled: get('KOMGA_API_ENABLED'),
    komgaGroupUnknown: get('KOMGA_GROUP_UNKNOWN'),
    uploadPattern: get('UPLOAD_FILE_PATTERN'),
    pdfCacheSizeInMb: get('PDF_CACHE_SIZE_IN_MB'),
    maxFileUploadSizeInMb: get('MAX_FILE_UPLOAD_SIZE_IN_MB'),
    remoteAuthEnabled: env.remoteAuthEnabled,
    metadataDownloadOnBookdrop: get('METADATA_DOWNLOAD_ON_BOOKDROP'),
    oidcEnabled: get('OIDC_ENABLED') === true && !env.forceDisableOidc,
    oidcProviderDetails: get('OIDC_PROVIDER_DETAILS'),
    oidcRedirectUris: get('OIDC_REDIRECT_URIS'),
    oidcAutoProvisionDetails: get('OIDC_AUTO_PROVISION_DETAILS'),
    metadataProviderSettings: get('METADATA_PROVIDER_SETTINGS'),
    metadataMatchWeights: get('METADATA_MATCH_WEIGHTS'),
    metadataPersistenceSettings: get('METADATA_PERSISTENCE_SETTINGS'),
    metadataPublicReviewsSettings: get('METADATA_PUBLIC_REVIEWS_SETTINGS'),
    koboSettings: get('KOBO_SETTINGS'),
    coverCroppingSettings: get('COVER_CROPPING_SETTINGS'),
    metadataProviderSpecificFields: get('METADATA_PROVIDER_SPECIFIC_FIELDS'),
    oidcSessionDurationHours: get('OIDC_SESSION_DURATION_HOURS'),
    oidcGroupSyncMode: get('OIDC_GROUP_SYNC_MODE'),
    oidcForceOnlyMode: get('OIDC_FORCE_ONLY_MODE'),
    diskType: env.diskType,
  };
}

/**
 * What the login page may know before anyone signs in. `oidcEnabled` is the stored switch as is (the environment's
 * force-off applies only to the full settings), and the client secret is never included.
 */
export async function loadPublicSettings(db: Db, env: SettingsEnvironment): Promise<Json> {
  const s = await readKeys(db, ['OIDC_ENABLED', 'OIDC_PROVIDER_DETAILS', 'OIDC_FORCE_ONLY_MODE']);
  const details = s.get('OIDC_PROVIDER_DETAILS');
  return {
    oidcEnabled: s.get('OIDC_ENABLED') === true,
    remoteAuthEnabled: env.remoteAuthEnabled,
    oidcProviderDetails: details && typeof details === 'object' ? { ...(details as Json), clientSecret: null } : null,
    oidcForceOnlyMode: s.get('OIDC_FORCE_ONLY_MODE') === true,
  };
}
