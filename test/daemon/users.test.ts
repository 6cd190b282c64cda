import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PERMISSION_NAMES } from '../../src/core/auth/permissions.ts';
import { createLibrary, type Library } from '../../src/core/libraries/libraries.ts';
import { seedAdminFromEnv } from '../../src/core/users/seed-admin.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

let d: TestDaemon;
let folder: string;
beforeEach(async () => {
  d = await startTestDaemon();
  folder = mkdtempSync(join(tmpdir(), 'bindery-users-'));
});
afterEach(async () => {
  await d.close();
  rmSync(folder, { recursive: true, force: true });
});

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

async function library(name: string): Promise<Library> {
  return createLibrary(d.store.db, { name, paths: [folder] });
}

const SETTING_KEYS = [
  'perBookSetting', 'pdfReaderSetting', 'newPdfReaderSetting', 'epubReaderSetting', 'ebookReaderSetting', 'cbxReaderSetting',
  'sidebarLibrarySorting', 'sidebarShelfSorting', 'sidebarMagicShelfSorting', 'entityViewPreferences', 'tableColumnPreference',
  'filterMode', 'filterSortingMode', 'metadataCenterViewMode', 'koReaderEnabled', 'enableSeriesView', 'autoSaveMetadata',
  'visibleFilters', 'visibleSortFields', 'dashboardConfig',
];

describe('GET /api/v1/users/me', () => {
  it('returns the full BookLoreUser: every permission flag, libraries with paths and complete default settings', async () => {
    await d.setupAdmin();
    const fiction = await library('Fiction');
    const user = await d.createUser('reader', { canDownload: true }, [fiction.id]);
    const res = await d.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(user.token) });
    expect(res.statusCode).toBe(200);
    const me = res.json();
    expect(Object.keys(me).sort()).toEqual(
      ['id', 'username', 'defaultPassword', 'name', 'email', 'locale', 'theme', 'themeAccent', 'themeSyncEnabled', 'uiFont', 'provisioningMethod', 'assignedLibraries', 'permissions', 'userSettings'].sort(),
    );
    expect(me).toMatchObject({ id: user.id, username: 'reader', locale: 'en', theme: 'grimmory', themeAccent: null, themeSyncEnabled: true, uiFont: 'default', provisioningMethod: 'LOCAL' });
    expect(Object.keys(me.permissions).sort()).toEqual([...PERMISSION_NAMES].sort());
    expect(Object.values(me.permissions).every((v) => typeof v === 'boolean')).toBe(true);
    expect(me.permissions).toMatchObject({ admin: false, canDownload: true, canUpload: false, demoUser: false });
    expect(me.assignedLibraries).toEqual([expect.objectContaining({ id: fiction.id, name: 'Fiction', paths: [expect.objectContaining({ id: fiction.paths[0]?.id, path: folder })] })]);

    const settings = me.userSettings;
    expect(Object.keys(settings).sort()).toEqual([...SETTING_KEYS].sort());
    expect(settings.perBookSetting).toEqual({ pdf: 'Individual', epub: 'Individual', cbx: 'Individual', newPdf: 'Individual' });
    expect(settings.pdfReaderSetting).toMatchObject({ pageSpread: 'off', pageZoom: 'page-fit' });
    expect(settings.epubReaderSetting).toMatchObject({ theme: 'white', fontSize: 100, flow: 'paginated', spread: 'double' });
    expect(settings.ebookReaderSetting).toEqual({
      fontFamily: 'serif', fontSize: 16, gap: 0.05, hyphenate: false, isDark: false, justify: false, lineHeight: 1.5,
      maxBlockSize: 1440, maxColumnCount: 2, maxInlineSize: 720, theme: 'gray', flow: 'paginated',
    });
    expect(settings.cbxReaderSetting).toEqual({ pageViewMode: 'SINGLE_PAGE', pageSpread: 'ODD', fitMode: 'FIT_HEIGHT', scrollMode: 'PAGINATED', backgroundColor: 'GRAY', stripMaxWidthPercent: 100 });
    expect(settings.newPdfReaderSetting).toEqual({ pageViewMode: 'SINGLE_PAGE', pageSpread: 'ODD', fitMode: 'FIT_HEIGHT', scrollMode: 'PAGINATED', backgroundColor: 'WHITE' });
    for (const key of ['sidebarLibrarySorting', 'sidebarShelfSorting', 'sidebarMagicShelfSorting']) expect(settings[key]).toEqual({ field: 'id', order: 'asc' });
    expect(settings.entityViewPreferences.global).toMatchObject({ sortKey: 'title', sortDir: 'ASC', view: 'GRID', coverSize: 1, seriesCollapsed: false, overlayBookType: true });
    expect(settings).toMatchObject({ filterMode: 'and', filterSortingMode: 'count', metadataCenterViewMode: 'route', tableColumnPreference: null, koReaderEnabled: false, enableSeriesView: false, autoSaveMetadata: false });
  });

  it('needs authentication', async () => {
    const res = await d.inject({ method: 'GET', url: '/api/v1/users/me' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ status: 401, error: 'Unauthorized' });
  });
});

describe('admin-only user routes', () => {
  it('refuse a plain user with 403 and an anonymous caller with 401', async () => {
    const admin = await d.setupAdmin();
    const user = await d.createUser('reader', { canManageLibrary: true, canAccessUserStats: true });
    const other = await d.createUser('other');
    const calls = [
      { method: 'GET' as const, url: '/api/v1/users' },
      { method: 'PUT' as const, url: `/api/v1/users/${other.id}`, payload: { assignedLibraries: [] } },
      { method: 'DELETE' as const, url: `/api/v1/users/${other.id}` },
      { method: 'PUT' as const, url: '/api/v1/users/change-user-password', payload: { userId: other.id, newPassword: 'new-password' } },
      { method: 'GET' as const, url: `/api/v1/users/${other.id}` },
      { method: 'PUT' as const, url: `/api/v1/users/${other.id}/profile`, payload: { name: 'X' } },
    ];
    for (const call of calls) {
      const forbidden = await d.inject({ ...call, headers: bearer(user.token) });
      expect(forbidden.statusCode, `${call.method} ${call.url}`).toBe(403);
      expect(forbidden.json()).toMatchObject({ status: 403, message: 'Access denied.' });
      expect((await d.inject(call)).statusCode, `${call.method} ${call.url}`).toBe(401);
    }
    const list = await d.inject({ method: 'GET', url: '/api/v1/users', headers: bearer(admin) });
    expect(list.statusCode).toBe(200);
    expect((list.json() as { username: string }[]).map((u) => u.username)).toEqual(['admin', 'reader', 'other']);
  });
});

describe('GET /api/v1/users/{id}', () => {
  it('shows users to themselves and to admins; unknown ids are 400 "User not found"', async () => {
    const admin = await d.setupAdmin();
    const user = await d.createUser('reader');
    expect((await d.inject({ method: 'GET', url: `/api/v1/users/${user.id}`, headers: bearer(user.token) })).json()).toMatchObject({ username: 'reader' });
    expect((await d.inject({ method: 'GET', url: `/api/v1/users/${user.id}`, headers: bearer(admin) })).json()).toMatchObject({ username: 'reader' });
    const missing = await d.inject({ method: 'GET', url: '/api/v1/users/999', headers: bearer(admin) });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ status: 400, message: 'User not found: 999' });
    expect((await d.inject({ method: 'GET', url: '/api/v1/users/abc', headers: bearer(admin) })).statusCode).toBe(400);
  });
});

describe('PUT /api/v1/users/{id}', () => {
  it('replaces permissions (omitted flags become false, demoUser stays) and libraries, and returns the user', async () => {
    const admin = await d.setupAdmin();
    const a = await library('A');
    const b = await createLibrary(d.store.db, { name: 'B', paths: [mkdtempSync(join(folder, 'b-'))] });
    const user = await d.createUser('reader', { canUpload: true, demoUser: true }, [a.id]);
    const res = await d.inject({
      method: 'PUT',
      url: `/api/v1/users/${user.id}`,
      headers: bearer(admin),
      payload: { name: 'Reader R', email: 'r@example.com', permissions: { canDownload: true, canEditMetadata: null }, assignedLibraries: [b.id, 4242] },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ id: user.id, name: 'Reader R', email: 'r@example.com' });
    expect(body.permissions).toMatchObject({ canDownload: true, canUpload: false, canEditMetadata: false, admin: false, demoUser: true });
    expect(body.assignedLibraries.map((l: { name: string }) => l.name)).toEqual(['B']);
  });

  it('requires assignedLibraries, and at least one library for a non-admin', async () => {
    const admin = await d.setupAdmin();
    const user = await d.createUser('reader');
    const missing = await d.inject({ method: 'PUT', url: `/api/v1/users/${user.id}`, headers: bearer(admin), payload: { name: 'X' } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ message: 'Assigned Libraries is missing from request.' });
    const none = await d.inject({ method: 'PUT', url: `/api/v1/users/${user.id}`, headers: bearer(admin), payload: { assignedLibraries: [] } });
    expect(none.statusCode).toBe(400);
    expect(none.json()).toMatchObject({ message: 'At least one library must be assigned.' });
    const promoted = await d.inject({ method: 'PUT', url: `/api/v1/users/${user.id}`, headers: bearer(admin), payload: { permissions: { admin: true }, assignedLibraries: [] } });
    expect(promoted.statusCode).toBe(200);
    expect(promoted.json().permissions.admin).toBe(true);
    expect((await d.inject({ method: 'PUT', url: '/api/v1/users/999', headers: bearer(admin), payload: { assignedLibraries: [] } })).json()).toMatchObject({ status: 400, message: 'User not found: 999' });
  });
});

describe('PUT /api/v1/users/{id}/profile', () => {
  it('lets users change their own locale, theme and font within the supported values', async () => {
    await d.setupAdmin();
    const user = await d.createUser('reader');
    const put = (payload: object) => d.inject({ method: 'PUT', url: `/api/v1/users/${user.id}/profile`, headers: bearer(user.token), payload });
    const ok = await put({ locale: 'de', uiFont: 'atkinson', themeSyncEnabled: false });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ locale: 'de', uiFont: 'atkinson', themeSyncEnabled: false, theme: 'grimmory' });
    expect((await put({ theme: 'custom' })).json()).toMatchObject({ status: 400, message: 'Theme accent is required when theme is custom.' });
    expect((await put({ themeAccent: 'teal' })).json()).toMatchObject({ status: 400, message: 'Theme accent can only be set when theme is custom.' });
    expect((await put({ theme: 'custom', themeAccent: 'teal' })).json()).toMatchObject({ theme: 'custom', themeAccent: 'teal' });
    expect((await put({ theme: 'forest' })).json()).toMatchObject({ theme: 'forest', themeAccent: null });
    expect((await put({ locale: 'xx' })).json()).toMatchObject({ status: 400, message: 'Unsupported locale: xx' });
    expect((await put({ uiFont: 'comic' })).json()).toMatchObject({ status: 400, message: 'Unsupported UI font: comic' });
  });
});

describe('DELETE /api/v1/users/{id}', () => {
  it('deletes a user with their shelves, settings and tokens; nobody deletes themselves', async () => {
    const admin = await d.setupAdmin();
    const user = await d.createUser('reader');
    await d.inject({ method: 'PUT', url: `/api/v1/users/${user.id}/settings`, headers: bearer(user.token), payload: { key: 'filterMode', value: 'or' } });
    expect(await d.store.db.selectFrom('shelf').select('id').where('user_id', '=', user.id).execute()).toHaveLength(1);

    const res = await d.inject({ method: 'DELETE', url: `/api/v1/users/${user.id}`, headers: bearer(admin) });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    expect(await d.store.db.selectFrom('shelf').select('id').where('user_id', '=', user.id).execute()).toHaveLength(0);
    expect(await d.store.db.selectFrom('user_settings').select('id').where('user_id', '=', user.id).execute()).toHaveLength(0);
    expect((await d.inject({ method: 'GET', url: `/api/v1/users/${user.id}`, headers: bearer(admin) })).json()).toMatchObject({ message: `User not found: ${user.id}` });
    expect((await d.inject({ method: 'DELETE', url: `/api/v1/users/${user.id}`, headers: bearer(admin) })).statusCode).toBe(400);

    const self = await d.inject({ method: 'DELETE', url: '/api/v1/users/1', headers: bearer(admin) });
    expect(self.statusCode).toBe(403);
    expect(self.json()).toMatchObject({ message: 'You cannot delete your own account' });
  });
});

describe('PUT /api/v1/users/{id}/settings', () => {
  it('stores settings under UserSettingKey db keys and shows them in /users/me', async () => {
    await d.setupAdmin();
    const user = await d.createUser('reader');
    const put = (payload: object) => d.inject({ method: 'PUT', url: `/api/v1/users/${user.id}/settings`, headers: bearer(user.token), payload });
    const view = { global: { sortKey: 'author', sortDir: 'DESC', view: 'TABLE', coverSize: 1.4, seriesCollapse: true, overlayBookType: false, extra: 'dropped' }, overrides: [{ entityType: 'LIBRARY', entityId: 3, preferences: { view: 'GRID' } }] };
    const res = await put({ key: 'entityViewPreferences', value: view });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    expect((await put({ key: 'filterMode', value: 'or' })).statusCode).toBe(200);
    expect((await put({ key: 'enableSeriesView', value: true })).statusCode).toBe(200);
    expect((await put({ key: 'visibleFilters', value: ['author', 'series'] })).statusCode).toBe(200);
    expect((await put({ key: 'dashboardConfig', value: { scrollers: [{ id: 's1', type: 'RECENTLY_ADDED', title: 'New', maxItems: 20 }] } })).statusCode).toBe(200);

    const stored = await d.store.db.selectFrom('user_settings').select(['setting_key', 'setting_value']).where('user_id', '=', user.id).orderBy('setting_key').execute();
    expect(stored.find((s) => s.setting_key === 'filterMode')?.setting_value).toBe('or');
    expect(JSON.parse(stored.find((s) => s.setting_key === 'entityViewPreferences')?.setting_value ?? 'null')).toEqual(view);

    const settings = (await d.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(user.token) })).json().userSettings;
    expect(settings.entityViewPreferences).toEqual({
      global: { sortKey: 'author', sortDir: 'DESC', sortCriteria: null, view: 'TABLE', coverSize: 1.4, seriesCollapsed: true, overlayBookType: false },
      overrides: [{ entityType: 'LIBRARY', entityId: 3, preferences: { sortKey: null, sortDir: null, sortCriteria: null, view: 'GRID', seriesCollapsed: null, overlayBookType: null, coverSize: null } }],
    });
    expect(settings).toMatchObject({ filterMode: 'or', enableSeriesView: true, visibleFilters: ['author', 'series'] });
    expect(settings.dashboardConfig.scrollers[0]).toEqual({ id: 's1', type: 'RECENTLY_ADDED', title: 'New', enabled: false, order: 0, maxItems: 20, magicShelfId: null, sortField: null, sortDirection: null });
    expect(settings.perBookSetting).toEqual({ pdf: 'Individual', epub: 'Individual', cbx: 'Individual', newPdf: 'Individual' });
  });

  it('refuses unknown or blank keys with 400 and other users (admins too) with 403', async () => {
    const admin = await d.setupAdmin();
    const user = await d.createUser('reader');
    const unknown = await d.inject({ method: 'PUT', url: `/api/v1/users/${user.id}/settings`, headers: bearer(user.token), payload: { key: 'nope', value: 1 } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ message: 'Unknown setting key: nope' });
    const blank = await d.inject({ method: 'PUT', url: `/api/v1/users/${user.id}/settings`, headers: bearer(user.token), payload: { key: ' ', value: 1 } });
    expect(blank.json()).toMatchObject({ status: 400, message: 'Setting key cannot be null or blank.' });
    const byAdmin = await d.inject({ method: 'PUT', url: `/api/v1/users/${user.id}/settings`, headers: bearer(admin), payload: { key: 'filterMode', value: 'or' } });
    expect(byAdmin.statusCode).toBe(403);
  });
});

describe('password changes', () => {
  it('change-password checks the current password, a different and long enough new one, and clears the default mark', async () => {
    const admin = await d.setupAdmin();
    await d.inject({ method: 'POST', url: '/api/v1/auth/register', headers: bearer(admin), payload: { username: 'bob', password: 'first-password', name: 'Bob', email: 'bob@example.com' } });
    const token = await d.login('bob', 'first-password');
    const change = (currentPassword: string, newPassword: string) =>
      d.inject({ method: 'PUT', url: '/api/v1/users/change-password', headers: bearer(token), payload: { currentPassword, newPassword } });

    expect((await change('wrong-password', 'second-password')).json()).toMatchObject({ status: 400, message: 'Incorrect current password' });
    expect((await change('first-password', 'first-password')).json()).toMatchObject({ status: 400, message: 'New password cannot be the same as the current password' });
    expect((await change('first-password', 'short')).json()).toMatchObject({ status: 400, message: 'Password must be at least 6 characters long' });
    const ok = await change('first-password', 'second-password');
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toBe('');
    const login = await d.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'bob', password: 'second-password' } });
    expect(login.json()).toMatchObject({ isDefaultPassword: false });
    expect((await d.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'bob', password: 'first-password' } })).statusCode).toBe(400);
  });

  it('refuses demo users', async () => {
    await d.setupAdmin();
    const demo = await d.createUser('demo', { demoUser: true });
    const res = await d.inject({ method: 'PUT', url: '/api/v1/users/change-password', headers: bearer(demo.token), payload: { currentPassword: 'demo-password', newPassword: 'another-password' } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ message: 'Demo user password change not allowed.' });
  });

  it('change-user-password lets an admin set any password of 8+ characters', async () => {
    const admin = await d.setupAdmin();
    const user = await d.createUser('reader');
    const set = (payload: object) => d.inject({ method: 'PUT', url: '/api/v1/users/change-user-password', headers: bearer(admin), payload });
    expect((await set({ userId: user.id, newPassword: 'short' })).json()).toMatchObject({ status: 400, message: 'Password must be at least 6 characters long' });
    expect((await set({ userId: 999, newPassword: 'long-enough' })).json()).toMatchObject({ status: 400, message: 'User not found: 999' });
    expect((await set({ userId: user.id, newPassword: 'reset-by-admin' })).statusCode).toBe(200);
    expect(await d.login('reader', 'reset-by-admin')).toEqual(expect.any(String));
  });
});

describe('admin seeded from the environment', () => {
  it('creates the administrator only while no user exists, with the password from a file', async () => {
    const passwordFile = join(folder, 'admin-password');
    writeFileSync(passwordFile, 'seeded-password\n');
    const env = { BINDERY_ADMIN_USERNAME: 'root', BINDERY_ADMIN_PASSWORD_FILE: passwordFile, BINDERY_ADMIN_EMAIL: 'root@example.com' };
    expect(await seedAdminFromEnv(d.store.db, {})).toBeUndefined();
    expect(await seedAdminFromEnv(d.store.db, env)).toEqual({ id: 1, username: 'root' });
    const token = await d.login('root', 'seeded-password');
    const me = (await d.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(token) })).json();
    expect(me).toMatchObject({ username: 'root', email: 'root@example.com', defaultPassword: false, permissions: { admin: true, canBulkResetBookReadStatus: true } });
    expect(await seedAdminFromEnv(d.store.db, { ...env, BINDERY_ADMIN_USERNAME: 'second' })).toBeUndefined();
    await expect(seedAdminFromEnv((await startEmpty()).store.db, { BINDERY_ADMIN_USERNAME: 'x' })).rejects.toThrow(/BINDERY_ADMIN_PASSWORD/);
  });
});

let empty: TestDaemon | undefined;
async function startEmpty(): Promise<TestDaemon> {
  empty = await startTestDaemon();
  return empty;
}
afterEach(async () => {
  await empty?.close();
  empty = undefined;
});
