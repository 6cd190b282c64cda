// Tokens and sign-out: a refresh token never opens a route; logout works as Grimmory's web UI calls it; every path that
// must end a user's sessions ends them at once, access tokens included.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { onSessionsRevoked, type SessionsRevoked } from '../../src/core/auth/sessions.ts';
import { allRoutes } from '../../src/daemon/routes/index.ts';
import { runCli } from '../helpers/cli.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

let d: TestDaemon;
beforeEach(async () => {
  d = await startTestDaemon();
  await d.setupAdmin('admin', 'admin-password');
});
afterEach(async () => d.close());

interface Tokens {
  accessToken: string;
  refreshToken: string;
}

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

async function signIn(username: string, password: string): Promise<Tokens> {
  const res = await d.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Tokens;
}

const me = async (token: string): Promise<number> => (await d.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(token) })).statusCode;
const refresh = async (token: string): Promise<number> => (await d.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: token } })).statusCode;

describe('refresh tokens', () => {
  it('open no route that takes a JWT, as a bearer token or as ?token=', async () => {
    const tokens = await signIn('admin', 'admin-password');
    const routes = (await allRoutes()).filter((r) => r.auth === 'jwt' || r.auth === 'jwt-or-query');
    expect(routes.length).toBeGreaterThan(250);
    const families = new Set<string>();
    for (const route of routes) {
      const url = route.url.replace(/\{\*?[A-Za-z]+\}/g, '1');
      const res = await d.inject({ method: route.method, url, headers: bearer(tokens.refreshToken) });
      expect(res.statusCode, `${route.method} ${route.url}`).toBe(401);
      if (route.auth === 'jwt-or-query') {
        const query = await d.inject({ method: route.method, url: `${url}${url.includes('?') ? '&' : '?'}token=${encodeURIComponent(tokens.refreshToken)}` });
        expect(query.statusCode, `${route.method} ${route.url}?token=`).toBe(401);
      }
      families.add(route.url.split('/').slice(0, 4).join('/'));
    }
    // Web API, app API, media (?token=) and reader routes are all among them.
    for (const family of ['/api/v1/books', '/api/v1/app', '/api/v1/media', '/api/v1/users']) expect(families.has(family), family).toBe(true);
    // The access token of the same sign-in does open them.
    expect(await me(tokens.accessToken)).toBe(200);
    expect((await d.inject({ method: 'GET', url: `/api/v1/app/users/me`, headers: bearer(tokens.accessToken) })).statusCode).toBe(200);
  });

  it('open nothing once verified and kept either (the gate answers a kept access token at once)', async () => {
    const tokens = await signIn('admin', 'admin-password');
    // The first call verifies the token and loads the principal; the second finds both kept.
    for (let i = 0; i < 2; i++) expect(await me(tokens.accessToken)).toBe(200);
    expect(await refresh(tokens.refreshToken)).toBe(200);
    for (let i = 0; i < 2; i++) expect(await me(tokens.refreshToken)).toBe(401);
    expect((await d.inject({ method: 'GET', url: '/api/v1/users/me' })).statusCode).toBe(401);
  });

  it('still refresh, once, and an access token does not', async () => {
    const tokens = await signIn('admin', 'admin-password');
    expect(await refresh(tokens.accessToken)).toBe(400);
    expect(await refresh(tokens.refreshToken)).toBe(200);
    expect(await refresh(tokens.refreshToken)).toBe(400);
  });
});

describe('POST /api/v1/auth/logout', () => {
  it('revokes with only {refreshToken} in the body, as the web UI sends it, and answers {logoutUrl: null}', async () => {
    const phone = await signIn('admin', 'admin-password');
    const web = await signIn('admin', 'admin-password');
    const res = await d.inject({ method: 'POST', url: '/api/v1/auth/logout', payload: { refreshToken: web.refreshToken } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ logoutUrl: null });
    // As Grimmory: every refresh token of the user is revoked.
    expect(await refresh(web.refreshToken)).toBe(400);
    expect(await refresh(phone.refreshToken)).toBe(400);
    const audit = await d.store.db.selectFrom('audit_log').selectAll().where('action', '=', 'LOGOUT').executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ username: 'admin', description: 'User logged out: admin' });
  });

  it('answers 401 with a message without a token or with a refresh token it does not know', async () => {
    const none = await d.inject({ method: 'POST', url: '/api/v1/auth/logout' });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ status: 401, message: 'No authentication context or refresh token provided' });
    const unknown = await d.inject({ method: 'POST', url: '/api/v1/auth/logout', payload: { refreshToken: 'not-one-of-ours' } });
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json()).toMatchObject({ status: 401, message: 'Invalid refresh token' });
    // An access token is not a refresh token.
    const tokens = await signIn('admin', 'admin-password');
    expect((await d.inject({ method: 'POST', url: '/api/v1/auth/logout', payload: { refreshToken: tokens.accessToken } })).statusCode).toBe(401);
    expect(await refresh(tokens.refreshToken)).toBe(200);
  });
});

describe('signing out everywhere', () => {
  let events: SessionsRevoked[];
  let stop: () => void;
  beforeEach(() => {
    events = [];
    stop = onSessionsRevoked((event) => events.push(event));
  });
  afterEach(() => stop());

  /** A user with two devices signed in, and a way to see that both lost their sessions at once. */
  async function reader(permissions: Record<string, boolean> = { canDownload: true }): Promise<{ id: number; devices: Tokens[]; assertSignedOut: (reason: string) => Promise<void> }> {
    const { id } = await d.createUser('reader', permissions);
    const devices = [await signIn('reader', 'reader-password'), await signIn('reader', 'reader-password')];
    for (const device of devices) expect(await me(device.accessToken)).toBe(200);
    return {
      id,
      devices,
      assertSignedOut: async (reason) => {
        for (const device of devices) {
          expect(await me(device.accessToken)).toBe(401);
          expect(await refresh(device.refreshToken)).toBe(400);
        }
        expect(events).toEqual([{ userId: id, username: 'reader', reason }]);
      },
    };
  }

  it('follows a password change by the user', async () => {
    const r = await reader();
    const res = await d.inject({ method: 'PUT', url: '/api/v1/users/change-password', headers: bearer(r.devices[0]!.accessToken), payload: { currentPassword: 'reader-password', newPassword: 'new-reader-password' } });
    expect(res.statusCode).toBe(200);
    await r.assertSignedOut('password-changed');
    expect(await me((await signIn('reader', 'new-reader-password')).accessToken)).toBe(200);
  });

  it('follows a password set by an admin', async () => {
    const r = await reader();
    const admin = await signIn('admin', 'admin-password');
    const res = await d.inject({ method: 'PUT', url: '/api/v1/users/change-user-password', headers: bearer(admin.accessToken), payload: { userId: r.id, newPassword: 'set-by-admin' } });
    expect(res.statusCode).toBe(200);
    await r.assertSignedOut('password-changed');
    expect(await me(admin.accessToken)).toBe(200);
  });

  it('follows `bindery users passwd` and `bindery users sign-out` from another process', async () => {
    const r = await reader();
    const passwd = await runCli(['--data-dir', d.config.dataDir, 'users', 'passwd', 'reader', '--password-stdin'], { input: 'cli-password\n', env: { BINDERY_FROM_SOURCE: '1' } });
    expect(passwd.code, passwd.stderr).toBe(0);
    for (const device of r.devices) {
      expect(await me(device.accessToken)).toBe(401);
      expect(await refresh(device.refreshToken)).toBe(400);
    }
    const again = await signIn('reader', 'cli-password');
    expect(await me(again.accessToken)).toBe(200);
    const signOut = await runCli(['--data-dir', d.config.dataDir, '--json', 'users', 'sign-out', 'reader'], { env: { BINDERY_FROM_SOURCE: '1' } });
    expect(signOut.code, signOut.stderr).toBe(0);
    expect(JSON.parse(signOut.stdout)).toEqual({ id: r.id, username: 'reader', signedOut: true });
    expect(await me(again.accessToken)).toBe(401);
    expect(await refresh(again.refreshToken)).toBe(400);
  }, 60_000);

  it('follows the deletion of the user', async () => {
    const r = await reader();
    const admin = await signIn('admin', 'admin-password');
    expect((await d.inject({ method: 'DELETE', url: `/api/v1/users/${r.id}`, headers: bearer(admin.accessToken) })).statusCode).toBe(200);
    for (const device of r.devices) expect(await me(device.accessToken)).toBe(401);
    expect(events).toEqual([{ userId: r.id, username: 'reader', reason: 'user-deleted' }]);
  });

  it('follows a permission or library taken away, not one granted', async () => {
    const library = await d.store.db.insertInto('library').values({ name: 'Shelf' }).returning('id').executeTakeFirstOrThrow();
    const r = await reader({ canDownload: true });
    await d.store.db.insertInto('user_library_mapping').values({ user_id: r.id, library_id: library.id }).execute();
    const admin = await signIn('admin', 'admin-password');
    const update = (permissions: Record<string, boolean>, assignedLibraries: number[]) =>
      d.inject({ method: 'PUT', url: `/api/v1/users/${r.id}`, headers: bearer(admin.accessToken), payload: { name: 'Reader', email: 'reader@example.com', permissions, assignedLibraries } });
    expect((await update({ canDownload: true, canUpload: true }, [library.id])).statusCode).toBe(200);
    expect(await me(r.devices[0]!.accessToken)).toBe(200);
    expect(events).toEqual([]);
    expect((await update({ canDownload: false, canUpload: true }, [library.id])).statusCode).toBe(200);
    await r.assertSignedOut('access-removed');
  });

  it('on request: POST /api/v1/auth/logout-everywhere ends every session of the caller, this one included', async () => {
    const r = await reader();
    const res = await d.inject({ method: 'POST', url: '/api/v1/auth/logout-everywhere', headers: bearer(r.devices[1]!.accessToken) });
    expect(res.statusCode).toBe(204);
    await r.assertSignedOut('sign-out-everywhere');
    expect((await d.inject({ method: 'POST', url: '/api/v1/auth/logout-everywhere' })).statusCode).toBe(401);
  });
});
