// Grimmory's AppSettingKey: the constant name clients send, the key stored in `app_settings`, the value's type,
// its default, and who may change it (any listed flag).
import type { Permission } from '../auth/permissions.ts';
import * as defaults from './setting-defaults.ts';
import { conform, type Shape } from './shape.ts';
import * as shapes from './setting-shapes.ts';

export type SettingValue =
  /** Stored as JSON text. `initial` is the default; `persist` stores it on first read. */
  | { kind: 'json'; shape: Shape; initial: () => unknown; persist: boolean }
  /** Stored as `true` / `false`; anything else reads as false. */
  | { kind: 'boolean'; initial: boolean }
  | { kind: 'integer'; initial: number | null }
  | { kind: 'string'; initial: string | null };

export interface SettingKey {
  name: string;
  dbKey: string;
  value: SettingValue;
  /** Holders of any of these may change it; empty means anyone who reaches the endpoint. */
  changeableBy: readonly Permission[];
}

const ADMIN: readonly Permission[] = ['admin'];
const METADATA: readonly Permission[] = ['admin', 'canManageMetadataConfig'];
const PREFERENCES: readonly Permission[] = ['admin', 'canManageGlobalPreferences'];

const json = (shape: Shape, initial: () => unknown, persist = true): SettingValue => ({ kind: 'json', shape, initial, persist });
const fresh = (shape: Shape) => (): unknown => conform(shape, {});

export const SETTING_KEYS: readonly SettingKey[] = [
  { name: 'OIDC_PROVIDER_DETAILS', dbKey: 'oidc_provider_details', value: json(shapes.OidcProviderDetailsShape, () => null, false), changeableBy: ADMIN },
  { name: 'OIDC_REDIRECT_URIS', dbKey: 'oidc_redirect_uris', value: json({ kind: 'list', of: { kind: 'string' } }, () => [defaults.DEFAULT_MOBILE_REDIRECT_URI]), changeableBy: ADMIN },
  { name: 'OIDC_ENABLED', dbKey: 'oidc_enabled', value: { kind: 'boolean', initial: false }, changeableBy: ADMIN },
  { name: 'OIDC_AUTO_PROVISION_DETAILS', dbKey: 'oidc_auto_provision_details', value: json(shapes.OidcAutoProvisionDetailsShape, fresh(shapes.OidcAutoProvisionDetailsShape)), changeableBy: ADMIN },
  { name: 'OIDC_SESSION_DURATION_HOURS', dbKey: 'oidc_session_duration_hours', value: { kind: 'integer', initial: null }, changeableBy: ADMIN },
  { name: 'OIDC_GROUP_SYNC_MODE', dbKey: 'oidc_group_sync_mode', value: { kind: 'string', initial: 'DISABLED' }, changeableBy: ADMIN },
  { name: 'OIDC_FORCE_ONLY_MODE', dbKey: 'oidc_force_only_mode', value: { kind: 'boolean', initial: false }, changeableBy: ADMIN },
  { name: 'KOBO_SETTINGS', dbKey: 'kobo_settings', value: json(shapes.KoboSettingsShape, fresh(shapes.KoboSettingsShape)), changeableBy: ADMIN },
  { name: 'OPDS_SERVER_ENABLED', dbKey: 'opds_server_enabled', value: { kind: 'boolean', initial: false }, changeableBy: ADMIN },
  { name: 'KOMGA_API_ENABLED', dbKey: 'komga_api_enabled', value: { kind: 'boolean', initial: false }, changeableBy: ADMIN },
  { name: 'KOMGA_GROUP_UNKNOWN', dbKey: 'komga_group_unknown', value: { kind: 'boolean', initial: true }, changeableBy: ADMIN },
  { name: 'QUICK_BOOK_MATCH', dbKey: 'quick_book_match', value: json(shapes.MetadataRefreshOptionsShape, defaults.defaultMetadataRefreshOptions), changeableBy: METADATA },
  { name: 'LIBRARY_METADATA_REFRESH_OPTIONS', dbKey: 'library_metadata_refresh_options', value: json({ kind: 'list', of: shapes.MetadataRefreshOptionsShape }, () => []), changeableBy: METADATA },
  { name: 'METADATA_PROVIDER_SETTINGS', dbKey: 'metadata_provider_settings', value: json(shapes.MetadataProviderSettingsShape, defaults.defaultMetadataProviderSettings), changeableBy: METADATA },
  { name: 'METADATA_MATCH_WEIGHTS', dbKey: 'metadata_match_weights', value: json(shapes.MetadataMatchWeightsShape, fresh(shapes.MetadataMatchWeightsShape)), changeableBy: METADATA },
  { name: 'METADATA_PERSISTENCE_SETTINGS', dbKey: 'metadata_persistence_settings_v2', value: json(shapes.MetadataPersistenceSettingsShape, defaults.defaultMetadataPersistenceSettings), changeableBy: METADATA },
  { name: 'METADATA_PUBLIC_REVIEWS_SETTINGS', dbKey: 'metadata_public_reviews_settings', value: json(shapes.MetadataPublicReviewsSettingsShape, defaults.defaultMetadataPublicReviewsSettings), changeableBy: METADATA },
  { name: 'UPLOAD_FILE_PATTERN', dbKey: 'upload_file_pattern', value: { kind: 'string', initial: defaults.DEFAULT_UPLOAD_PATTERN }, changeableBy: METADATA },
  { name: 'MOVE_FILE_PATTERN', dbKey: 'move_file_pattern', value: { kind: 'string', initial: null }, changeableBy: METADATA },
  { name: 'METADATA_DOWNLOAD_ON_BOOKDROP', dbKey: 'metadata_download_on_bookdrop', value: { kind: 'boolean', initial: true }, changeableBy: METADATA },
  { name: 'METADATA_PROVIDER_SPECIFIC_FIELDS', dbKey: 'metadata_provider_specific_fields', value: json(shapes.MetadataProviderSpecificFieldsShape, defaults.defaultMetadataProviderSpecificFields), changeableBy: METADATA },
  { name: 'COVER_CROPPING_SETTINGS', dbKey: 'cover_cropping_settings', value: json(shapes.CoverCroppingSettingsShape, defaults.defaultCoverCroppingSettings), changeableBy: PREFERENCES },
  { name: 'AUTO_BOOK_SEARCH', dbKey: 'auto_book_search', value: { kind: 'boolean', initial: false }, changeableBy: PREFERENCES },
  { name: 'SIMILAR_BOOK_RECOMMENDATION', dbKey: 'similar_book_recommendation', value: { kind: 'boolean', initial: true }, changeableBy: PREFERENCES },
  { name: 'PDF_CACHE_SIZE_IN_MB', dbKey: 'pdf_cache_size_in_mb', value: { kind: 'integer', initial: 5120 }, changeableBy: PREFERENCES },
  { name: 'MAX_FILE_UPLOAD_SIZE_IN_MB', dbKey: 'max_file_upload_size_in_mb', value: { kind: 'integer', initial: 100 }, changeableBy: PREFERENCES },
  { name: 'SIDEBAR_LIBRARY_SORTING', dbKey: 'sidebar_library_sorting', value: json(shapes.SidebarSortOptionShape, () => null, false), changeableBy: [] },
  { name: 'SIDEBAR_SHELF_SORTING', dbKey: 'sidebar_shelf_sorting', value: json(shapes.SidebarSortOptionShape, () => null, false), changeableBy: [] },
];

const BY_NAME = new Map(SETTING_KEYS.map((k) => [k.name, k]));

/** The key a client names by its constant (`OPDS_SERVER_ENABLED`), or undefined for an unknown name. */
export function settingKeyNamed(name: string): SettingKey | undefined {
  return BY_NAME.get(name);
}

export function settingKey(name: string): SettingKey {
  const key = BY_NAME.get(name);
  if (!key) throw new Error(`unknown setting ${name}`);
  return key;
}
