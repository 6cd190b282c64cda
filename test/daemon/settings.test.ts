import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

let d: TestDaemon;
let user: { id: number; token: string };
let admin: { id: number; token: string };

beforeEach(async () => {
  d = await startTestDaemon();
  user = await d.createUser('reader');
  admin = await d.createUser('admin', { admin: true });
});
afterEach(async () => d.close());

// Deep property access into the settings tree; the assertions check the values.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const call = (token: string | undefined, options: InjectOptions) =>
  d.inject({ ...options, headers: { ...(options.headers ?? {}), ...(token ? { authorization: `Bearer ${token}` } : {}) } });
const getSettings = async (token: string) => (await call(token, { method: 'GET', url: '/api/v1/settings' })).json() as Json;
const put = (token: string, body: unknown) => call(token, { method: 'PUT', url: '/api/v1/settings', payload: body as object });

const APP_SETTINGS_KEYS = [
  'defaultMetadataRefreshOptions', 'libraryMetadataRefreshOptions', 'autoBookSearch', 'similarBookRecommendation', 'opdsServerEnabled',
  'komgaApiEnabled', 'komgaGroupUnknown', 'uploadPattern', 'pdfCacheSizeInMb', 'maxFileUploadSizeInMb', 'remoteAuthEnabled',
  'metadataDownloadOnBookdrop', 'oidcEnabled', 'oidcProviderDetails', 'oidcRedirectUris', 'oidcAutoProvisionDetails',
  'metadataProviderSettings', 'metadataMatchWeights', 'metadataPersistenceSettings', 'metadataPublicReviewsSettings', 'koboSettings',
  'coverCroppingSettings', 'metadataProviderSpecificFields', 'oidcSessionDurationHours', 'oidcGroupSyncMode', 'oidcForceOnlyMode', 'diskType',
];

describe('GET /api/v1/settings', () => {
  it('reports every AppSettings property with Grimmory\'s defaults on a new install', async () => {
    const res = await call(user.token, { method: 'GET', url: '/api/v1/settings' });
    expect(res.statusCode).toBe(200);
    const s = res.json() as Json;
    expect(Object.keys(s).sort()).toEqual([...APP_SETTINGS_KEYS].sort());
    expect(s).toMatchObject({
      autoBookSearch: false, similarBookRecommendation: true, opdsServerEnabled: false, komgaApiEnabled: false, komgaGroupUnknown: true,
      uploadPattern: '{authors}/<{series}/><{seriesIndex}. >/{title}/{title}< - {authors}>< ({year})>', pdfCacheSizeInMb: 5120,
      maxFileUploadSizeInMb: 100, remoteAuthEnabled: false, metadataDownloadOnBookdrop: true, oidcEnabled: false, oidcProviderDetails: null,
      oidcRedirectUris: ['grimmory://oauth2-callback'], oidcSessionDurationHours: null, oidcGroupSyncMode: 'DISABLED', oidcForceOnlyMode: false,
      diskType: 'LOCAL', libraryMetadataRefreshOptions: [],
      oidcAutoProvisionDetails: { enableAutoProvisioning: false, allowLocalAccountLinking: true, defaultPermissions: null, defaultLibraryIds: null },
      koboSettings: { convertToKepub: true, conversionLimitInMb: 100, convertCbxToEpub: false, conversionLimitInMbForCbx: 100, conversionImageCompressionPercentage: 85, forceEnableHyphenation: false, forwardToKoboStore: true },
      coverCroppingSettings: { verticalCroppingEnabled: false, horizontalCroppingEnabled: false, aspectRatioThreshold: 2.5, smartCroppingEnabled: false },
    });
    expect(s.metadataProviderSettings).toEqual({
      amazon: { enabled: true, cookie: null, domain: 'com' }, google: { enabled: true, language: null, apiKey: null }, goodReads: { enabled: true },
      hardcover: { enabled: false, apiKey: null }, comicvine: { enabled: false, apiKey: null }, ranobedb: { enabled: false }, douban: { enabled: false },
      lubimyczytac: null, audible: null, openLibrary: { enabled: true },
    });
    expect(s.metadataMatchWeights).toMatchObject({ title: 10, subtitle: 1, goodreadsRating: 4, audibleRating: 0, coverImage: 5 });
    expect(Object.keys(s.metadataMatchWeights)).toHaveLength(27);
    expect(s.metadataPersistenceSettings).toEqual({
      saveToOriginalFile: { epub: { enabled: false, maxFileSizeInMb: 250 }, pdf: { enabled: false, maxFileSizeInMb: 250 }, cbx: { enabled: false, maxFileSizeInMb: 250 }, audiobook: { enabled: false, maxFileSizeInMb: 250 }, anyFormatEnabled: false },
      convertCbrCb7ToCbz: false, moveFilesToLibraryPattern: false, sidecarSettings: null,
    });
    expect(s.metadataPublicReviewsSettings).toEqual({ downloadEnabled: true, autoDownloadEnabled: false, providers: [{ provider: 'Amazon', enabled: true, maxReviews: 5 }, { provider: 'GoodReads', enabled: false, maxReviews: 5 }, { provider: 'Douban', enabled: false, maxReviews: 5 }] });
    expect(s.defaultMetadataRefreshOptions).toMatchObject({ refreshCovers: false, mergeCategories: true, reviewBeforeApply: false, replaceMode: 'REPLACE_MISSING', libraryId: null });
    expect(s.defaultMetadataRefreshOptions.fieldOptions.title).toEqual({ p1: 'GoodReads', p2: 'Google', p3: null, p4: null });
    expect(s.defaultMetadataRefreshOptions.fieldOptions.tags).toEqual({ p1: null, p2: null, p3: null, p4: null });
    expect(s.defaultMetadataRefreshOptions.enabledFields).toMatchObject({ title: true, moods: true, ranobedbId: false, ranobedbRating: false });
    expect(s.metadataProviderSpecificFields).toMatchObject({ asin: true, audibleReviewCount: true, ranobedbId: null });
  });

  it('stores the defaults on first read, once', async () => {
    const names = async () => (await d.store.db.selectFrom('app_settings').select('name').orderBy('name').execute()).map((r) => r.name);
    expect(await names()).not.toContain('kobo_settings');
    await getSettings(user.token);
    const first = await names();
    expect(first).toEqual(expect.arrayContaining(['kobo_settings', 'pdf_cache_size_in_mb', 'quick_book_match', 'oidc_redirect_uris', 'upload_file_pattern', 'library_metadata_refresh_options']));
    expect(first).not.toContain('oidc_provider_details');
    await getSettings(admin.token);
    expect(await names()).toEqual(first);
    const row = await d.store.db.selectFrom('app_settings').select('val').where('name', '=', 'library_metadata_refresh_options').executeTakeFirstOrThrow();
    expect(row.val).toBe('[]');
  });

  it('needs a signed-in user', async () => {
    expect((await call(undefined, { method: 'GET', url: '/api/v1/settings' })).statusCode).toBe(401);
  });
});

describe('PUT /api/v1/settings', () => {
  it('lets an admin change settings by constant name', async () => {
    const res = await put(admin.token, [
      { name: 'OPDS_SERVER_ENABLED', value: true },
      { name: 'PDF_CACHE_SIZE_IN_MB', value: 2048 },
      { name: 'UPLOAD_FILE_PATTERN', value: '{title}' },
      { name: 'KOBO_SETTINGS', value: { forwardToKoboStore: false, conversionLimitInMb: 20 } },
      { name: 'LIBRARY_METADATA_REFRESH_OPTIONS', value: [{ libraryId: 3, refreshCovers: true, replaceMode: 'REPLACE_ALL' }] },
    ]);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    const s = await getSettings(user.token);
    expect(s).toMatchObject({ opdsServerEnabled: true, pdfCacheSizeInMb: 2048, uploadPattern: '{title}' });
    expect(s.koboSettings).toMatchObject({ forwardToKoboStore: false, conversionLimitInMb: 20, convertToKepub: true });
    expect(s.libraryMetadataRefreshOptions).toHaveLength(1);
    expect(s.libraryMetadataRefreshOptions[0]).toMatchObject({ libraryId: 3, refreshCovers: true, replaceMode: 'REPLACE_ALL', mergeCategories: false });
    expect(s.libraryMetadataRefreshOptions[0].enabledFields.title).toBe(true);
    const stored = await d.store.db.selectFrom('app_settings').select('val').where('name', '=', 'opds_server_enabled').executeTakeFirstOrThrow();
    expect(stored.val).toBe('true');
  });

  it('refuses non-admins with 403 and changes nothing', async () => {
    const res = await put(user.token, [{ name: 'OPDS_SERVER_ENABLED', value: true }]);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ status: 403, message: 'Access denied.' });
    expect((await getSettings(user.token)).opdsServerEnabled).toBe(false);
    expect((await call(undefined, { method: 'PUT', url: '/api/v1/settings', payload: [] })).statusCode).toBe(401);
  });

  it('refuses unknown keys and wrongly typed values with 400, applying none of the batch', async () => {
    const unknown = await put(admin.token, [{ name: 'OPDS_SERVER_ENABLED', value: true }, { name: 'opds_server_enabled', value: true }]);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ status: 400, message: expect.stringContaining('opds_server_enabled') });
    const wrong = await put(admin.token, [{ name: 'KOMGA_API_ENABLED', value: true }, { name: 'METADATA_MATCH_WEIGHTS', value: { title: 'high' } }]);
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toMatchObject({ details: ['title: must be a whole number'] });
    expect((await put(admin.token, [{ name: 'MAX_FILE_UPLOAD_SIZE_IN_MB', value: 'lots' }])).statusCode).toBe(400);
    expect((await put(admin.token, { name: 'OPDS_SERVER_ENABLED', value: true })).statusCode).toBe(400);
    expect((await put(admin.token, [{ name: 'OPDS_SERVER_ENABLED', value: 'TRUE' }])).statusCode).toBe(200);
    const s = await getSettings(admin.token);
    expect([s.komgaApiEnabled, s.maxFileUploadSizeInMb, s.opdsServerEnabled]).toEqual([false, 100, true]);
    expect((await put(admin.token, [{ value: true }])).statusCode).toBe(400);
  });

  it('validates OIDC redirect URIs and OIDC-only mode, allowing a batch to enable OIDC first', async () => {
    const web = await put(admin.token, [{ name: 'OIDC_REDIRECT_URIS', value: ['https://example.com/callback'] }]);
    expect(web.statusCode).toBe(400);
    expect(web.json()).toMatchObject({ message: 'Redirect URI must use a custom mobile scheme' });
    expect((await put(admin.token, [{ name: 'OIDC_REDIRECT_URIS', value: [' bindery://cb ', 'grimmory://oauth2-callback'] }])).statusCode).toBe(200);
    expect((await getSettings(admin.token)).oidcRedirectUris).toEqual(['bindery://cb', 'grimmory://oauth2-callback']);

    const early = await put(admin.token, [{ name: 'OIDC_FORCE_ONLY_MODE', value: true }]);
    expect(early.json()).toMatchObject({ status: 400, message: 'Cannot enable OIDC-only mode: OIDC must be enabled first' });
    const together = await put(admin.token, [
      { name: 'OIDC_ENABLED', value: true },
      { name: 'OIDC_PROVIDER_DETAILS', value: { providerName: 'Auth', clientId: 'bindery', clientSecret: 'shh', issuerUri: 'https://id.example.com' } },
      { name: 'OIDC_FORCE_ONLY_MODE', value: 'true' },
    ]);
    expect(together.statusCode).toBe(200);
    expect(await getSettings(admin.token)).toMatchObject({ oidcEnabled: true, oidcForceOnlyMode: true, oidcProviderDetails: { clientId: 'bindery', clientSecret: 'shh', claimMapping: null } });
  });

  it('answers the OIDC connection test for admins only (the checks themselves: oidc-test-connection.test.ts)', async () => {
    const res = await call(admin.token, { method: 'POST', url: '/api/v1/settings/oidc/test', payload: { issuerUri: 'not a url' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ success: false, checks: expect.arrayContaining([{ name: 'Issuer URI', status: 'FAIL', message: expect.any(String) }]) });
    expect((await call(user.token, { method: 'POST', url: '/api/v1/settings/oidc/test', payload: {} })).statusCode).toBe(403);
  });
});

describe('secrets', () => {
  beforeEach(async () => {
    const res = await put(admin.token, [
      { name: 'OIDC_PROVIDER_DETAILS', value: { providerName: 'Auth', clientId: 'bindery', clientSecret: 'oidc-secret', issuerUri: 'https://id.example.com', scopes: 'openid' } },
      { name: 'METADATA_PROVIDER_SETTINGS', value: { amazon: { enabled: true, cookie: 'session=abc', domain: 'de' }, google: { enabled: true, apiKey: 'google-key' }, hardcover: { enabled: true, apiKey: 'hc-key' }, comicvine: { enabled: true, apiKey: 'cv-key' } } },
    ]);
    expect(res.statusCode).toBe(200);
  });

  it('are returned to admins and never to other users', async () => {
    const full = await getSettings(admin.token);
    expect(full.oidcProviderDetails.clientSecret).toBe('oidc-secret');
    expect(full.metadataProviderSettings).toMatchObject({ amazon: { cookie: 'session=abc' }, google: { apiKey: 'google-key' }, hardcover: { apiKey: 'hc-key' }, comicvine: { apiKey: 'cv-key' } });

    const res = await call(user.token, { method: 'GET', url: '/api/v1/settings' });
    expect(res.body).not.toMatch(/oidc-secret|google-key|hc-key|cv-key|session=abc/);
    const masked = res.json() as Json;
    expect(masked.oidcProviderDetails).toEqual({ providerName: 'Auth', clientId: 'bindery', clientSecret: null, issuerUri: 'https://id.example.com', scopes: 'openid', claimMapping: null });
    expect(masked.metadataProviderSettings).toMatchObject({ amazon: { enabled: true, cookie: null, domain: 'de' }, google: { apiKey: null }, hardcover: { enabled: true, apiKey: null }, comicvine: { apiKey: null } });
  });

  it('stay out of the public settings, which need no login and carry exactly four properties', async () => {
    await put(admin.token, [{ name: 'OIDC_ENABLED', value: true }]);
    const res = await d.inject({ method: 'GET', url: '/api/v1/public-settings' });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain('oidc-secret');
    expect(res.json()).toEqual({
      oidcEnabled: true,
      remoteAuthEnabled: false,
      oidcProviderDetails: { providerName: 'Auth', clientId: 'bindery', clientSecret: null, issuerUri: 'https://id.example.com', scopes: 'openid', claimMapping: null },
      oidcForceOnlyMode: false,
    });
  });
});

describe('GET /api/v1/public-settings on a new install', () => {
  it('answers without a token', async () => {
    const res = await d.inject({ method: 'GET', url: '/api/v1/public-settings' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ oidcEnabled: false, remoteAuthEnabled: false, oidcProviderDetails: null, oidcForceOnlyMode: false });
  });
});
