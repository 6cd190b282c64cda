import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PERMISSION_NAMES, type Permissions } from '../../src/core/auth/permissions.ts';
import type { Principal } from '../../src/core/auth/principal.ts';
import { loadAppSettings, readSetting } from '../../src/core/settings/app-settings.ts';
import { settingsEnvironment } from '../../src/core/settings/environment.ts';
import { withoutSecrets } from '../../src/core/settings/secrets.ts';
import { settingKey } from '../../src/core/settings/setting-keys.ts';
import { KoboSettingsShape, MetadataPersistenceSettingsShape } from '../../src/core/settings/setting-shapes.ts';
import { check, conform } from '../../src/core/settings/shape.ts';
import { normalizeRedirectUris, serializeSetting, SettingsError, updateSettings } from '../../src/core/settings/update-settings.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';

const env = settingsEnvironment({});
const perms = (flags: Partial<Permissions>): Permissions => ({ ...(Object.fromEntries(PERMISSION_NAMES.map((p) => [p, false])) as Permissions), ...flags });
const principal = (flags: Partial<Permissions>): Principal => ({ userId: 1, username: 'u', isDefaultPassword: false, sessionVersion: 0, permissions: perms(flags), libraryIds: [], restrictions: [] });

describe('setting shapes', () => {
  it('fills missing properties like the Java classes: initializers, skipped nulls, zero for plain primitives', () => {
    expect(conform(KoboSettingsShape, { convertToKepub: null, conversionLimitInMb: 7, extra: 'dropped' })).toEqual({
      convertToKepub: true, conversionLimitInMb: 7, convertCbxToEpub: false, conversionLimitInMbForCbx: 100,
      forceEnableHyphenation: false, conversionImageCompressionPercentage: 85, forwardToKoboStore: true,
    });
    const persistence = conform(MetadataPersistenceSettingsShape, { saveToOriginalFile: { pdf: { enabled: true } } }) as Record<string, Record<string, unknown>>;
    expect(persistence.saveToOriginalFile).toEqual({ epub: null, pdf: { enabled: true, maxFileSizeInMb: 0 }, cbx: null, audiobook: null, anyFormatEnabled: true });
    expect(persistence.sidecarSettings).toBeNull();
  });

  it('reports type mismatches with their path', () => {
    expect(check(KoboSettingsShape, { conversionLimitInMb: 'lots', convertToKepub: 1 }, '')).toEqual(['convertToKepub: must be a boolean', 'conversionLimitInMb: must be a whole number']);
    expect(check(KoboSettingsShape, [], '')).toEqual(['value: must be an object']);
  });

  it('serializes scalars as Grimmory stores them and refuses the wrong type', () => {
    expect(serializeSetting(settingKey('OPDS_SERVER_ENABLED'), true)).toBe('true');
    expect(serializeSetting(settingKey('OPDS_SERVER_ENABLED'), 'FALSE')).toBe('false');
    expect(serializeSetting(settingKey('PDF_CACHE_SIZE_IN_MB'), '2048')).toBe('2048');
    expect(serializeSetting(settingKey('OIDC_SESSION_DURATION_HOURS'), null)).toBeNull();
    expect(() => serializeSetting(settingKey('PDF_CACHE_SIZE_IN_MB'), null)).toThrow(SettingsError);
    expect(() => serializeSetting(settingKey('PDF_CACHE_SIZE_IN_MB'), 1.5)).toThrow(/whole number/);
    expect(() => serializeSetting(settingKey('AUTO_BOOK_SEARCH'), 'yes')).toThrow(/true or false/);
    expect(JSON.parse(serializeSetting(settingKey('KOBO_SETTINGS'), { forwardToKoboStore: false }) as string)).toMatchObject({ forwardToKoboStore: false, convertToKepub: true });
  });

  it('accepts only custom-scheme redirect URIs, `*` alone, without blanks or repeats', () => {
    expect(normalizeRedirectUris([' app://cb ', 'other.app:/done'])).toEqual(['app://cb', 'other.app:/done']);
    expect(normalizeRedirectUris(null)).toEqual([]);
    expect(normalizeRedirectUris(['*'])).toEqual(['*']);
    expect(() => normalizeRedirectUris(['*', 'app://x'])).toThrow('Wildcard redirect URI must be the only value');
    expect(() => normalizeRedirectUris(['https://example.com/cb'])).toThrow('Redirect URI must use a custom mobile scheme');
    expect(() => normalizeRedirectUris(['no-scheme'])).toThrow('Redirect URI must include a scheme');
    expect(() => normalizeRedirectUris(['app://cb#frag'])).toThrow('Redirect URI must not contain a fragment');
    expect(() => normalizeRedirectUris(['app://a', 'app://a'])).toThrow('Duplicate redirect URI: app://a');
    expect(() => normalizeRedirectUris(['  '])).toThrow('Redirect URI cannot be blank');
    expect(() => normalizeRedirectUris('app://a')).toThrow('OIDC redirect URIs must be an array');
  });

  it('masks every credential and nothing else', () => {
    const masked = withoutSecrets({
      oidcProviderDetails: { clientId: 'id', clientSecret: 's3cret' },
      metadataProviderSettings: { amazon: { enabled: true, cookie: 'c' }, google: { apiKey: 'g' }, hardcover: { apiKey: 'h' }, comicvine: { apiKey: 'v' }, douban: { enabled: true } },
      uploadPattern: '{title}',
    });
    expect(masked).toEqual({
      oidcProviderDetails: { clientId: 'id', clientSecret: null },
      metadataProviderSettings: { amazon: { enabled: true, cookie: null }, google: { apiKey: null }, hardcover: { apiKey: null }, comicvine: { apiKey: null }, douban: { enabled: true } },
      uploadPattern: '{title}',
    });
    expect(withoutSecrets({ oidcProviderDetails: null })).toEqual({ oidcProviderDetails: null });
  });

  it('reads force-off and remote auth from Grimmory variable names, Bindery names first', () => {
    expect(settingsEnvironment({ FORCE_DISABLE_OIDC: 'true', REMOTE_AUTH_ENABLED: 'TRUE', DISK_TYPE: 'NETWORK' })).toEqual({ forceDisableOidc: true, remoteAuthEnabled: true, diskType: 'NETWORK' });
    expect(settingsEnvironment({ BINDERY_REMOTE_AUTH_ENABLED: 'false', REMOTE_AUTH_ENABLED: 'true' }).remoteAuthEnabled).toBe(false);
  });
});

describe('settings in the catalog', () => {
  let dir: string;
  let store: Store;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bindery-settings-'));
    store = await openStore(join(dir, 'catalog.sqlite'));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('checks each key against its own permissions (any one suffices)', async () => {
    const metadataManager = principal({ canManageMetadataConfig: true });
    await updateSettings(store.db, metadataManager, [{ name: 'METADATA_MATCH_WEIGHTS', value: { title: 3 } }], env);
    expect(((await readSetting(store.db, 'METADATA_MATCH_WEIGHTS')) as Record<string, number>).title).toBe(3);
    await expect(updateSettings(store.db, metadataManager, [{ name: 'KOBO_SETTINGS', value: {} }], env)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(updateSettings(store.db, principal({ canManageGlobalPreferences: true }), [{ name: 'AUTO_BOOK_SEARCH', value: true }], env)).resolves.toBeUndefined();
    await expect(updateSettings(store.db, principal({}), [{ name: 'SIDEBAR_SHELF_SORTING', value: { field: 'name', order: 'asc' } }], env)).resolves.toBeUndefined();
    await expect(updateSettings(store.db, principal({}), [{ name: 'NOT_A_KEY', value: 1 }], env)).rejects.toMatchObject({ code: 'UNKNOWN_KEY' });
  });

  it('reads a stored value that no longer fits as the default, and keeps what was stored', async () => {
    await store.db.insertInto('app_settings').values({ name: 'cover_cropping_settings', val: '{"aspectRatioThreshold":"wide"}' }).execute();
    const settings = await loadAppSettings(store.db, env);
    expect(settings.coverCroppingSettings).toEqual({ verticalCroppingEnabled: false, horizontalCroppingEnabled: false, aspectRatioThreshold: 2.5, smartCroppingEnabled: false });
    const row = await store.db.selectFrom('app_settings').select('val').where('name', '=', 'cover_cropping_settings').executeTakeFirstOrThrow();
    expect(row.val).toBe('{"aspectRatioThreshold":"wide"}');
  });

  it('reports OIDC off in the full settings when the environment forces it off', async () => {
    await store.db.insertInto('app_settings').values({ name: 'oidc_enabled', val: 'true' }).execute();
    expect((await loadAppSettings(store.db, env)).oidcEnabled).toBe(true);
    expect((await loadAppSettings(store.db, settingsEnvironment({ FORCE_DISABLE_OIDC: 'true' }))).oidcEnabled).toBe(false);
  });
});
