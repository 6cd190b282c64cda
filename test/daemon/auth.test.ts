import { decodeJwt } from 'jose';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_ADDRESS_FAILURES } from '../../src/core/auth/login-rate-limit.ts';
import { PASSWORD_QUEUE_LIMIT } from '../../src/core/auth/password-hashing.ts';
import { loadConfig } from '../../src/core/config.ts';
import { openStore } from '../../src/core/store/store.ts';
import { buildApp } from '../../src/daemon/app.ts';
import { principalOf } from '../../src/daemon/authenticate.ts';
import { allRoutes } from '../../src/daemon/routes/index.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

let d: TestDaemon;
beforeEach(async () => {
  d = await startTestDaemon();
});
afterEach(async () => d.close());

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
const LOCAL_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+$/;

interface Tokens {
  accessToken: string;
  refreshToken: string;
  expires: number;
  isDefaultPassword?: boolean;
}

function login(username: string, password: string, remoteAddress = '127.0.0.1') {
  return d.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password }, remoteAddress });
}

function refresh(refreshToken: string, remoteAddress = '127.0.0.1') {
  return d.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken }, remoteAddress });
}

describe('POST /api/v1/auth/login', () => {
  it('returns an AccessTokenDto whose tokens carry Grimmory claims and open authenticated routes', async () => {
    await d.setupAdmin('admin', 'admin-password');
    const res = await login('admin', 'admin-password');
    expect(res.statusCode).toBe(200);
    const body = res.json() as Tokens;
    expect(body).toEqual({ accessToken: expect.any(String), refreshToken: expect.any(String), expires: 7200, isDefaultPassword: false });
    const claims = decodeJwt(body.accessToken);
    expect(claims).toMatchObject({ iss: 'booklore', sub: 'admin', userId: 1, isDefaultPassword: false });
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(7200);
    const refreshClaims = decodeJwt(body.refreshToken);
    expect((refreshClaims.exp ?? 0) - (refreshClaims.iat ?? 0)).toBe(30 * 24 * 3600);
    const stored = await d.store.db.selectFrom('refresh_token').selectAll().where('token', '=', body.refreshToken).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ user_id: 1, revoked: 0 });

    const me = await d.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(body.accessToken) });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ id: 1, username: 'admin' });
  });

  it('answers a wrong password or an unknown user with 400 "Invalid credentials"', async () => {
    await d.setupAdmin('admin', 'admin-password');
    for (const res of [await login('admin', 'wrong-password'), await login('nobody', 'whatever-pass')]) {
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ status: 400, message: 'Invalid credentials', timestamp: expect.stringMatching(LOCAL_TIME) });
    }
  });

  it('rejects blank or missing fields with a validation error', async () => {
    const res = await d.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: ' ' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ status: 400, message: 'Validation error', details: expect.arrayContaining([expect.stringContaining('password')]) });
  });

  it('after five failures for a username refuses even the right password with 429, from any address', async () => {
    await d.setupAdmin('admin', 'admin-password');
    for (let i = 0; i < 5; i++) expect((await login('Admin ', `wrong-password-${i}`, `10.0.0.${i}`)).statusCode).toBe(400);
    const blocked = await login('admin', 'admin-password', '10.0.1.1');
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toMatchObject({ status: 429, message: 'Too many failed login attempts. Please try again later.' });
  });

  it('after twenty failures from one address refuses that address for every username, not others', async () => {
    await d.setupAdmin('admin', 'admin-password');
    for (let i = 0; i < MAX_ADDRESS_FAILURES; i++) await login(`ghost${i}`, 'wrong-password', '10.9.9.9');
    expect((await login('admin', 'admin-password', '10.9.9.9')).statusCode).toBe(429);
    expect((await login('admin', 'admin-password', '10.9.9.10')).statusCode).toBe(200);
  });

  it('a successful login resets the failure count', async () => {
    await d.setupAdmin('admin', 'admin-password');
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 4; i++) expect((await login('admin', 'wrong-password')).statusCode).toBe(400);
      expect((await login('admin', 'admin-password')).statusCode).toBe(200);
    }
  });

  it('refuses local login to non-admins with 403 while oidc_force_only_mode is on', async () => {
    await d.setupAdmin('admin', 'admin-password');
    await d.createUser('reader');
    await d.store.db.insertInto('app_settings').values({ name: 'oidc_force_only_mode', val: 'true' }).execute();
    const refused = await login('reader', 'reader-password');
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ status: 403, message: 'Local login is disabled. Use OIDC to sign in.' });
    expect((await login('admin', 'admin-password')).statusCode).toBe(200);
  });
});

describe('POST /api/v1/auth/refresh', () => {
  it('rotates: a new pair is issued, the used refresh token is refused afterwards', async () => {
    await d.setupAdmin('admin', 'admin-password');
    const first = (await login('admin', 'admin-password')).json() as Tokens;
    const res = await refresh(first.refreshToken);
    expect(res.statusCode).toBe(200);
    const second = res.json() as Tokens;
    expect(second).toEqual({ accessToken: expect.any(String), refreshToken: expect.any(String), expires: 7200 });
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect((await d.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(second.accessToken) })).statusCode).toBe(200);

    const reused = await refresh(first.refreshToken);
    expect(reused.statusCode).toBe(400);
    expect(reused.json()).toMatchObject({ status: 400, message: 'Invalid credentials' });
    expect((await refresh(second.refreshToken)).statusCode).toBe(200);
  });

  it('refuses tokens it never issued, even validly signed access tokens', async () => {
    const token = await d.setupAdmin('admin', 'admin-password');
    expect((await refresh('not-a-token')).statusCode).toBe(400);
    expect((await refresh(token)).statusCode).toBe(400);
  });

  it('blocks an address after twenty failed refreshes, even with a good token', async () => {
    await d.setupAdmin('admin', 'admin-password');
    const good = (await login('admin', 'admin-password')).json() as Tokens;
    for (let i = 0; i < MAX_ADDRESS_FAILURES; i++) expect((await refresh(`bogus-${i}`, '10.1.1.1')).statusCode).toBe(400);
    expect((await refresh(good.refreshToken, '10.1.1.1')).statusCode).toBe(429);
    expect((await refresh(good.refreshToken, '10.1.1.2')).statusCode).toBe(200);
  });
});

describe('POST /api/v1/auth/logout', () => {
  it('revokes every refresh token of the caller and answers {logoutUrl: null}', async () => {
    await d.setupAdmin('admin', 'admin-password');
    const a = (await login('admin', 'admin-password')).json() as Tokens;
    const b = (await login('admin', 'admin-password')).json() as Tokens;
    const res = await d.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(a.accessToken), payload: { refreshToken: a.refreshToken } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ logoutUrl: null });
    expect((await refresh(a.refreshToken)).statusCode).toBe(400);
    expect((await refresh(b.refreshToken)).statusCode).toBe(400);
  });

  it('answers 401 with neither a bearer token nor a refresh token (sessions.test.ts covers the body-only call)', async () => {
    const res = await d.inject({ method: 'POST', url: '/api/v1/auth/logout' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ status: 401, message: 'No authentication context or refresh token provided' });
  });
});

describe('POST /api/v1/auth/register', () => {
  const request = { username: 'bob', password: 'bob-password', name: 'Bob', email: 'bob@example.com' };

  it('lets an admin create a user with entity-style permissions and libraries; the user must change the password', async () => {
    const admin = await d.setupAdmin();
    const folder = mkdtempSync(join(tmpdir(), 'bindery-lib-'));
    try {
      const { createLibrary } = await import('../../src/core/libraries/libraries.ts');
      const library = await createLibrary(d.store.db, { name: 'Fiction', paths: [folder] });
      const res = await d.inject({
        method: 'POST',
        url: '/api/v1/auth/register',
        headers: bearer(admin),
        payload: { ...request, permissionDownload: true, permissionSyncKobo: true, permissionAdmin: false, selectedLibraries: [library.id, 999] },
      });
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');

      const tokens = (await login('bob', 'bob-password')).json() as Tokens;
      expect(tokens.isDefaultPassword).toBe(true);
      const me = (await d.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(tokens.accessToken) })).json();
      expect(me).toMatchObject({ username: 'bob', name: 'Bob', email: 'bob@example.com', defaultPassword: true, provisioningMethod: 'LOCAL' });
      expect(me.permissions).toMatchObject({ admin: false, canDownload: true, canSyncKobo: true, canUpload: false, canEmailBook: false });
      expect(me.assignedLibraries).toEqual([{ id: library.id, name: 'Fiction', watch: false, paths: [{ id: expect.any(Number), path: folder }], organizationMode: 'BOOK_PER_FILE', metadataSource: 'EMBEDDED' }]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('refuses a taken username with 400 and invalid input with a validation error', async () => {
    const admin = await d.setupAdmin();
    expect((await d.inject({ method: 'POST', url: '/api/v1/auth/register', headers: bearer(admin), payload: request })).statusCode).toBe(204);
    const again = await d.inject({ method: 'POST', url: '/api/v1/auth/register', headers: bearer(admin), payload: { ...request, email: 'other@example.com' } });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ message: 'Username already taken: bob' });
    const sameMail = await d.inject({ method: 'POST', url: '/api/v1/auth/register', headers: bearer(admin), payload: { ...request, username: 'bobby' } });
    expect(sameMail.statusCode).toBe(400);
    for (const payload of [{ ...request, username: 'x', password: 'short' }, { ...request, username: 'y', email: 'not-mail' }, { password: 'long-enough' }]) {
      const res = await d.inject({ method: 'POST', url: '/api/v1/auth/register', headers: bearer(admin), payload });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ message: 'Validation error' });
    }
  });

  it('is for admins only: 403 for a plain user, 401 anonymously', async () => {
    await d.setupAdmin();
    const user = await d.createUser('reader', { canUpload: true });
    const forbidden = await d.inject({ method: 'POST', url: '/api/v1/auth/register', headers: bearer(user.token), payload: request });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toMatchObject({ status: 403, message: 'Access denied.' });
    expect((await d.inject({ method: 'POST', url: '/api/v1/auth/register', payload: request })).statusCode).toBe(401);
  });
});

describe('GET /api/v1/auth/remote', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const key of Object.keys(process.env)) if (key.startsWith('REMOTE_AUTH_') && !(key in saved)) delete process.env[key];
  });

  it('answers 203 with an ErrorResponse while disabled', async () => {
    const res = await d.inject({ method: 'GET', url: '/api/v1/auth/remote', headers: { 'remote-user': 'alice' } });
    expect(res.statusCode).toBe(203);
    expect(res.json()).toMatchObject({ status: 203, message: 'Remote login is disabled' });
  });

  it('signs in and creates the user the proxy names; the admin group makes an admin', async () => {
    process.env.REMOTE_AUTH_ENABLED = 'true';
    process.env.REMOTE_AUTH_ADMIN_GROUP = 'admins';
    await d.setupAdmin();
    const res = await d.inject({
      method: 'GET',
      url: '/api/v1/auth/remote',
      headers: { 'remote-user': 'alice', 'remote-name': 'Alice A', 'remote-email': 'alice@example.com', 'remote-groups': '[users admins]' },
    });
    expect(res.statusCode).toBe(200);
    const tokens = res.json() as Tokens;
    expect(tokens).toMatchObject({ expires: 7200, isDefaultPassword: false });
    const me = (await d.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(tokens.accessToken) })).json();
    expect(me).toMatchObject({ username: 'alice', name: 'Alice A', email: 'alice@example.com', provisioningMethod: 'REMOTE', permissions: { admin: true, canUpload: false } });

    // Found again by e-mail when the user header is empty; no second account.
    const byMail = await d.inject({ method: 'GET', url: '/api/v1/auth/remote', headers: { 'remote-email': 'alice@example.com' } });
    expect(byMail.statusCode).toBe(200);
    expect(decodeJwt((byMail.json() as Tokens).accessToken)).toMatchObject({ sub: 'alice' });
    expect(await d.store.db.selectFrom('users').select('id').where('username', '=', 'alice').execute()).toHaveLength(1);
  });

  it('uses configured header names, refuses without a user header and when creation is off', async () => {
    process.env.REMOTE_AUTH_ENABLED = 'true';
    process.env.REMOTE_AUTH_HEADER_USER = 'X-Forwarded-User';
    process.env.REMOTE_AUTH_CREATE_NEW_USERS = 'false';
    await d.setupAdmin();
    const missing = await d.inject({ method: 'GET', url: '/api/v1/auth/remote', headers: { 'remote-user': 'admin' } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ message: 'Remote-User header is missing' });
    expect((await d.inject({ method: 'GET', url: '/api/v1/auth/remote', headers: { 'x-forwarded-user': 'admin' } })).statusCode).toBe(200);
    const unknown = await d.inject({ method: 'GET', url: '/api/v1/auth/remote', headers: { 'x-forwarded-user': 'stranger' } });
    expect(unknown.statusCode).toBe(500);
    expect(unknown.json()).toMatchObject({ message: 'User not found and remote user creation is disabled' });
  });
});

describe('?token= credentials', () => {
  it('are accepted on jwt-or-query routes only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bindery-query-'));
    const config = { ...loadConfig({ env: {}, flags: { dataDir: dir } }), logLevel: 'silent' as const };
    const store = await openStore(join(dir, 'bindery.sqlite'));
    const { app, ctx } = await buildApp({
      config,
      store,
      routes: [...(await allRoutes()), { method: 'GET', url: '/api/v1/media/probe', auth: 'jwt-or-query', rule: 'any', handler: (req) => ({ userId: principalOf(req).userId }) }],
    });
    try {
      const { createFirstAdmin } = await import('../../src/core/users/users.ts');
      const { signToken } = await import('../../src/core/auth/tokens.ts');
      const id = await createFirstAdmin(store.db, { username: 'admin', password: 'admin-password', name: 'Admin' });
      const token = await signToken(ctx.jwtSecret, { userId: id, username: 'admin', isDefaultPassword: false, sessionVersion: 0 }, 'access', 60);
      const media = await app.inject({ method: 'GET', url: `/api/v1/media/probe?token=${token}` });
      expect(media.statusCode).toBe(200);
      expect(media.json()).toEqual({ userId: id });
      expect((await app.inject({ method: 'GET', url: `/api/v1/users/me?token=${token}` })).statusCode).toBe(401);
      expect((await app.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(token) })).statusCode).toBe(200);
    } finally {
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a flood of sign-ins', () => {
  it('is shed with 503 and Retry-After once the password queue is full, not queued without end', async () => {
    await d.setupAdmin('admin', 'admin-password');
    const answers = await Promise.all(
      Array.from({ length: PASSWORD_QUEUE_LIMIT + 40 }, (_, i) => login(`ghost-${i}`, 'guess', `10.${(i >> 8) & 255}.${i & 255}.1`)),
    );
    const shed = answers.filter((a) => a.statusCode === 503);
    expect(shed.length).toBeGreaterThan(0);
    expect(shed[0]?.headers['retry-after']).toBe('1');
    expect(shed[0]?.json()).toMatchObject({ status: 503 });
    expect(answers.every((a) => a.statusCode === 503 || a.statusCode === 400)).toBe(true);
    expect((await login('admin', 'admin-password', '10.99.0.1')).statusCode).toBe(200);
  }, 30_000);
});
