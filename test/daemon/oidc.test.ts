// OIDC sign-in against a real OpenID Provider (oidc-provider on 127.0.0.1): state → provider → callback → Bindery's own
// tokens; auto-provisioning and account linking; group mappings; tampered state, nonce and code; the mobile
// endpoints; back-channel logout and its replay refusal; OIDC-only mode; the logout URL; the session duration.
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handleLogoutToken } from '../../src/core/auth/oidc/backchannel-logout.ts';
import { OidcError } from '../../src/core/auth/oidc/oidc-error.ts';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { oidcDeps } from '../../src/daemon/routes/oidc.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { startTestProvider, type TestProvider } from '../helpers/oidc-provider.ts';

const CLIENT_ID = 'bindery';
const CLIENT_SECRET = 'bindery-client-secret';
const MOBILE_REDIRECT = 'grimmory://oauth2-callback';

let d: TestDaemon;
let op: TestProvider;
let origin: string;
let webRedirect: string;
let adminToken: string;
let libraryA: number;
let libraryB: number;

interface Tokens {
  accessToken: string;
  refreshToken: string;
  expires: number;
  isDefaultPassword?: boolean;
}

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

async function putSettings(changes: { name: string; value: unknown }[]): Promise<void> {
  const res = await d.inject({ method: 'PUT', url: '/api/v1/settings', headers: bearer(adminToken), payload: changes });
  expect(res.statusCode, res.body).toBe(200);
}

async function autoProvision(details: Record<string, unknown>): Promise<void> {
  await putSettings([{ name: 'OIDC_AUTO_PROVISION_DETAILS', value: details }]);
}

async function state(): Promise<string> {
  const res = await d.inject({ method: 'GET', url: '/api/v1/auth/oidc/state' });
  expect(res.statusCode).toBe(200);
  return (res.json() as { state: string }).state;
}

/** The web UI's flow: a state from Bindery, the provider's login, the code posted back. */
async function webSignIn(accountId: string, tamper: (body: Record<string, string>) => void = () => {}) {
  const s = await state();
  const auth = await op.authorize({ clientId: CLIENT_ID, redirectUri: webRedirect, state: s, accountId });
  expect(auth.url.searchParams.get('state')).toBe(s);
  const body: Record<string, string> = { code: auth.code, codeVerifier: auth.codeVerifier, redirectUri: webRedirect, nonce: auth.nonce, state: s };
  tamper(body);
  return d.inject({ method: 'POST', url: '/api/v1/auth/oidc/callback', headers: { origin }, payload: body });
}

async function userRow(username: string) {
  return d.store.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
}

async function permissionsOf(userId: number) {
  return d.store.db.selectFrom('user_permissions').selectAll().where('user_id', '=', userId).executeTakeFirstOrThrow();
}

async function librariesOf(userId: number): Promise<number[]> {
  const rows = await d.store.db.selectFrom('user_library_mapping').select('library_id').where('user_id', '=', userId).orderBy('library_id').execute();
  return rows.map((r) => r.library_id);
}

beforeAll(async () => {
  d = await startTestDaemon();
  await d.app.listen({ host: '127.0.0.1', port: 0 });
  origin = `http://127.0.0.1:${(d.app.server.address() as AddressInfo).port}`;
  webRedirect = `${origin}/oauth2-callback`;
  op = await startTestProvider({
    clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [webRedirect, MOBILE_REDIRECT], backchannel_logout_uri: `${origin}/api/v1/auth/oidc/backchannel-logout` }],
    accounts: [
      { sub: 'sub-alice', preferred_username: 'alice', email: 'alice@example.org', name: 'Alice Liddell', picture: 'https://example.org/alice.png', groups: ['readers'] },
      { sub: 'sub-bob', preferred_username: 'bob', email: 'bob@example.org', name: 'Bob', groups: ['bindery-admins'] },
      { sub: 'sub-dave', preferred_username: 'dave', email: 'dave@example.org', name: 'Dave' },
      { sub: 'sub-erin', preferred_username: 'erin', email: 'erin@example.org', name: 'Erin (SSO)' },
      { sub: 'sub-mallory', preferred_username: 'carol', email: 'mallory@example.org', name: 'Mallory' },
      { sub: 'sub-frank', preferred_username: 'frank', name: 'Frank', groups: ['readers', 'uploaders'] },
      { sub: 'sub-gina', preferred_username: 'gina', name: 'Gina' },
      { sub: 'sub-hal', preferred_username: 'hal', name: 'Hal' },
    ],
  });
  adminToken = await d.setupAdmin('admin', 'admin-password');
  mkdirSync(`${d.dir}/a`);
  mkdirSync(`${d.dir}/b`);
  libraryA = (await createLibrary(d.store.db, { name: 'A', paths: [`${d.dir}/a`] })).id;
  libraryB = (await createLibrary(d.store.db, { name: 'B', paths: [`${d.dir}/b`] })).id;
  await putSettings([
    {
      name: 'OIDC_PROVIDER_DETAILS',
      value: {
        providerName: 'Test IdP',
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        issuerUri: op.issuer,
        scopes: 'openid profile email groups',
        claimMapping: { username: 'preferred_username', name: 'name', email: 'email', groups: 'groups' },
      },
    },
    { name: 'OIDC_ENABLED', value: true },
    { name: 'OIDC_AUTO_PROVISION_DETAILS', value: { enableAutoProvisioning: true, allowLocalAccountLinking: true, defaultPermissions: ['permissionUpload', 'permissionDownload', 'permissionAdmin'], defaultLibraryIds: [libraryA, 9999] } },
  ]);
}, 60_000);

afterAll(async () => {
  await d?.close();
  await op?.close();
});

describe('public settings', () => {
  it('report OIDC as switched on with the provider, without its secret', async () => {
    const res = await d.inject({ method: 'GET', url: '/api/v1/public-settings' });
    expect(res.json()).toMatchObject({
      oidcEnabled: true,
      oidcForceOnlyMode: false,
      oidcProviderDetails: { providerName: 'Test IdP', clientId: CLIENT_ID, clientSecret: null, issuerUri: op.issuer },
    });
  });
});

describe('web sign-in', () => {
  it('goes state → provider → callback and returns Bindery tokens that open /users/me', async () => {
    const res = await webSignIn('sub-alice');
    expect(res.statusCode, res.body).toBe(200);
    const tokens = res.json() as Tokens;
    expect(tokens).toEqual({ accessToken: expect.any(String), refreshToken: expect.any(String), expires: 7200, isDefaultPassword: false });
    expect(decodeJwt(tokens.accessToken)).toMatchObject({ iss: 'booklore', sub: 'alice', isDefaultPassword: false });

    const me = await d.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(tokens.accessToken) });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ username: 'alice', name: 'Alice Liddell', email: 'alice@example.org', provisioningMethod: 'OIDC' });

    const refreshed = await d.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: tokens.refreshToken } });
    expect(refreshed.statusCode).toBe(200);
  });

  it('auto-provisions with the default permissions (plain flags only) and the default libraries that exist', async () => {
    const alice = await userRow('alice');
    expect(alice).toMatchObject({ oidc_subject: 'sub-alice', oidc_issuer: op.issuer, provisioning_method: 'OIDC', avatar_url: 'https://example.org/alice.png', is_default_password: 0 });
    const perms = await permissionsOf(alice!.id);
    expect(perms).toMatchObject({ permission_upload: 1, permission_download: 1, permission_admin: 0, permission_delete_book: 0 });
    expect(await librariesOf(alice!.id)).toEqual([libraryA]);
    const session = await d.store.db.selectFrom('oidc_session').selectAll().where('user_id', '=', alice!.id).executeTakeFirstOrThrow();
    expect(session).toMatchObject({ oidc_subject: 'sub-alice', oidc_issuer: op.issuer, revoked: 0 });
    expect(session.oidc_session_id).toEqual(expect.any(String));
    expect(decodeJwt(session.id_token_hint ?? '')).toMatchObject({ sub: 'sub-alice', aud: CLIENT_ID });
  });

  it('signs the same subject in as the same account, following changes of name and e-mail', async () => {
    const before = await userRow('alice');
    op.accounts.get('sub-alice')!.name = 'Alice L.';
    const res = await webSignIn('sub-alice');
    expect(res.statusCode, res.body).toBe(200);
    const after = await userRow('alice');
    expect(after?.id).toBe(before?.id);
    expect(after?.name).toBe('Alice L.');
    expect(await d.store.db.selectFrom('users').select('id').where('oidc_subject', '=', 'sub-alice').execute()).toHaveLength(1);
  });

  it('refuses a state that was used already or never issued (400 OIDC_INVALID_STATE)', async () => {
    const s = await state();
    const auth = await op.authorize({ clientId: CLIENT_ID, redirectUri: webRedirect, state: s, accountId: 'sub-alice' });
    const body = { code: auth.code, codeVerifier: auth.codeVerifier, redirectUri: webRedirect, nonce: auth.nonce, state: s };
    expect((await d.inject({ method: 'POST', url: '/api/v1/auth/oidc/callback', headers: { origin }, payload: body })).statusCode).toBe(200);
    const replay = await d.inject({ method: 'POST', url: '/api/v1/auth/oidc/callback', headers: { origin }, payload: body });
    expect(replay.statusCode).toBe(400);
    expect(replay.json()).toMatchObject({ status: 400, message: 'Invalid or expired OIDC state parameter' });
    const forged = await webSignIn('sub-alice', (b) => (b.state = 'made-up-state'));
    expect(forged.statusCode).toBe(400);
    expect(forged.json()).toMatchObject({ message: 'Invalid or expired OIDC state parameter' });
  });

  it('refuses a tampered nonce (401 OIDC_INVALID_TOKEN)', async () => {
    const res = await webSignIn('sub-alice', (b) => (b.nonce = 'not-the-nonce-that-was-sent'));
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ status: 401, message: expect.stringMatching(/^Invalid token from OIDC provider: /) });
  });

  it('refuses a tampered code or code verifier (502 OIDC_TOKEN_EXCHANGE_FAILED)', async () => {
    for (const tamper of [(b: Record<string, string>) => (b.code = `${b.code}x`), (b: Record<string, string>) => (b.codeVerifier = 'A'.repeat(43))]) {
      const res = await webSignIn('sub-alice', tamper);
      expect(res.statusCode).toBe(502);
      expect(res.json()).toMatchObject({ status: 502, message: expect.stringMatching(/^Failed to exchange authorization code: invalid_grant/) });
    }
  });

  it('refuses a redirect URI on another origin than the request’s, or not ending in /oauth2-callback (400)', async () => {
    for (const redirectUri of ['http://evil.example/oauth2-callback', `${origin}/elsewhere`]) {
      const res = await webSignIn('sub-alice', (b) => (b.redirectUri = redirectUri));
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ message: 'Invalid redirect URI' });
    }
  });

  it('validates the callback body (400 Validation error)', async () => {
    const res = await d.inject({ method: 'POST', url: '/api/v1/auth/oidc/callback', payload: { code: 'x', codeVerifier: ' ', redirectUri: webRedirect, nonce: 'n' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ message: 'Validation error' });
  });
});

describe('accounts', () => {
  beforeEach(async () => {
    await putSettings([{ name: 'OIDC_GROUP_SYNC_MODE', value: 'DISABLED' }]);
  });

  it('without auto-provisioning, refuses an unknown user (403) but still signs in known ones', async () => {
    await autoProvision({ enableAutoProvisioning: false });
    const res = await webSignIn('sub-dave');
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ message: "OIDC user 'dave' is not provisioned and auto-provisioning is disabled" });
    expect(await userRow('dave')).toBeUndefined();
    expect((await webSignIn('sub-alice')).statusCode).toBe(200);
    await autoProvision({ enableAutoProvisioning: true, defaultPermissions: ['permissionDownload'] });
    expect((await webSignIn('sub-dave')).statusCode).toBe(200);
    expect(await userRow('dave')).toMatchObject({ provisioning_method: 'OIDC', oidc_subject: 'sub-dave' });
  });

  it('links a local account of the same username when linking is allowed, and the password login still knows it', async () => {
    const erin = await d.createUser('erin');
    await autoProvision({ enableAutoProvisioning: false, allowLocalAccountLinking: true });
    const res = await webSignIn('sub-erin');
    expect(res.statusCode, res.body).toBe(200);
    expect(decodeJwt((res.json() as Tokens).accessToken)).toMatchObject({ userId: erin.id, sub: 'erin' });
    expect(await userRow('erin')).toMatchObject({ id: erin.id, provisioning_method: 'OIDC', oidc_subject: 'sub-erin', name: 'Erin (SSO)' });
    const password = await d.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'erin', password: 'erin-password' } });
    expect(password.statusCode).toBe(200);
  });

  it('never hands a local account to an OIDC user when linking is off, nor an account bound to another subject', async () => {
    const carol = await d.createUser('carol');
    await autoProvision({ enableAutoProvisioning: true, allowLocalAccountLinking: false });
    const taken = await webSignIn('sub-mallory');
    expect(taken.statusCode).toBe(400);
    expect(taken.json()).toMatchObject({ message: 'Username already taken: carol' });
    await autoProvision({ enableAutoProvisioning: false, allowLocalAccountLinking: false });
    expect((await webSignIn('sub-mallory')).statusCode).toBe(403);
    expect(await userRow('carol')).toMatchObject({ id: carol.id, provisioning_method: 'LOCAL', oidc_subject: null });

    // An OIDC account already bound to alice's subject is not taken over by another subject calling itself alice.
    await autoProvision({ enableAutoProvisioning: true, allowLocalAccountLinking: true });
    op.accounts.set('sub-impostor', { sub: 'sub-impostor', preferred_username: 'alice', name: 'Impostor' });
    const impostor = await webSignIn('sub-impostor');
    expect(impostor.statusCode).toBe(400);
    expect(impostor.json()).toMatchObject({ message: 'Username already taken: alice' });
  });
});

describe('group mappings', () => {
  const url = '/api/v1/admin/oidc-group-mappings';
  let readersId: number;

  it('are managed by admins: create, list, update, delete, with Grimmory’s refusals', async () => {
    const created = await d.inject({ method: 'POST', url, headers: bearer(adminToken), payload: { oidcGroupClaim: 'readers', isAdmin: false, permissions: ['permissionDownload'], libraryIds: [libraryB], description: 'Readers' } });
    expect(created.statusCode, created.body).toBe(200);
    readersId = (created.json() as { id: number }).id;
    expect(created.json()).toEqual({ id: readersId, oidcGroupClaim: 'readers', isAdmin: false, permissions: ['permissionDownload'], libraryIds: [libraryB], description: 'Readers' });
    const admins = await d.inject({ method: 'POST', url, headers: bearer(adminToken), payload: { oidcGroupClaim: 'bindery-admins', isAdmin: true } });
    expect(admins.json()).toMatchObject({ oidcGroupClaim: 'bindery-admins', isAdmin: true, permissions: [], libraryIds: [], description: null });
    const uploaders = await d.inject({ method: 'POST', url, headers: bearer(adminToken), payload: { oidcGroupClaim: 'uploaders', permissions: ['permissionUpload'], libraryIds: [libraryA] } });
    expect(uploaders.statusCode).toBe(200);

    const duplicate = await d.inject({ method: 'POST', url, headers: bearer(adminToken), payload: { oidcGroupClaim: 'readers' } });
    expect(duplicate.statusCode).toBe(400);
    const noClaim = await d.inject({ method: 'POST', url, headers: bearer(adminToken), payload: { isAdmin: true } });
    expect(noClaim.statusCode).toBe(400);

    const temp = await d.inject({ method: 'POST', url, headers: bearer(adminToken), payload: { oidcGroupClaim: 'temp' } });
    const tempId = (temp.json() as { id: number }).id;
    const updated = await d.inject({ method: 'PUT', url: `${url}/${tempId}`, headers: bearer(adminToken), payload: { oidcGroupClaim: 'temp2', isAdmin: false, permissions: ['permissionEmailBook'], description: 'changed' } });
    expect(updated.json()).toEqual({ id: tempId, oidcGroupClaim: 'temp2', isAdmin: false, permissions: ['permissionEmailBook'], libraryIds: [], description: 'changed' });
    const list = await d.inject({ method: 'GET', url, headers: bearer(adminToken) });
    expect((list.json() as { oidcGroupClaim: string }[]).map((m) => m.oidcGroupClaim)).toEqual(['readers', 'bindery-admins', 'uploaders', 'temp2']);
    const deleted = await d.inject({ method: 'DELETE', url: `${url}/${tempId}`, headers: bearer(adminToken) });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.body).toBe('');
    for (const res of [
      await d.inject({ method: 'DELETE', url: `${url}/${tempId}`, headers: bearer(adminToken) }),
      await d.inject({ method: 'PUT', url: `${url}/${tempId}`, headers: bearer(adminToken), payload: { oidcGroupClaim: 'x' } }),
    ]) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ message: 'OIDC group mapping not found' });
    }
    const user = await d.createUser('plain-user');
    expect((await d.inject({ method: 'GET', url, headers: bearer(user.token) })).statusCode).toBe(403);
  });

  it('ON_LOGIN sets flags and libraries to exactly what the groups grant; admin groups make admins', async () => {
    await autoProvision({ enableAutoProvisioning: true, defaultPermissions: ['permissionUpload', 'permissionDeleteBook'], defaultLibraryIds: [libraryA] });
    await putSettings([{ name: 'OIDC_GROUP_SYNC_MODE', value: 'ON_LOGIN' }]);
    expect((await webSignIn('sub-bob')).statusCode).toBe(200);
    const bob = await userRow('bob');
    expect(await permissionsOf(bob!.id)).toMatchObject({ permission_admin: 1, permission_upload: 0, permission_delete_book: 0 });

    const alice = await userRow('alice');
    expect((await webSignIn('sub-alice')).statusCode).toBe(200);
    expect(await permissionsOf(alice!.id)).toMatchObject({ permission_download: 1, permission_upload: 0, permission_admin: 0 });
    expect(await librariesOf(alice!.id)).toEqual([libraryB]);

    // Two groups: their grants merge.
    expect((await webSignIn('sub-frank')).statusCode).toBe(200);
    const frank = await userRow('frank');
    expect(await permissionsOf(frank!.id)).toMatchObject({ permission_download: 1, permission_upload: 1, permission_delete_book: 0 });
    expect(await librariesOf(frank!.id)).toEqual([libraryA, libraryB].sort((a, b) => a - b));
  });

  it('ON_LOGIN_ADDITIVE only adds; a user with no mapped group keeps what they have; DISABLED changes nothing', async () => {
    await autoProvision({ enableAutoProvisioning: true, defaultPermissions: ['permissionEmailBook'], defaultLibraryIds: [libraryA] });
    await putSettings([{ name: 'OIDC_GROUP_SYNC_MODE', value: 'ON_LOGIN_ADDITIVE' }]);
    op.accounts.get('sub-gina')!.groups = ['readers', 'unmapped'];
    expect((await webSignIn('sub-gina')).statusCode).toBe(200);
    const gina = await userRow('gina');
    expect(await permissionsOf(gina!.id)).toMatchObject({ permission_email_book: 1, permission_download: 1, permission_upload: 0 });
    expect(await librariesOf(gina!.id)).toEqual([libraryA, libraryB].sort((a, b) => a - b));

    expect((await webSignIn('sub-hal')).statusCode).toBe(200);
    const hal = await userRow('hal');
    expect(await permissionsOf(hal!.id)).toMatchObject({ permission_email_book: 1, permission_download: 0 });

    await putSettings([{ name: 'OIDC_GROUP_SYNC_MODE', value: 'DISABLED' }]);
    op.accounts.get('sub-hal')!.groups = ['bindery-admins'];
    expect((await webSignIn('sub-hal')).statusCode).toBe(200);
    expect(await permissionsOf(hal!.id)).toMatchObject({ permission_admin: 0 });
  });
});

describe('mobile sign-in', () => {
  it('POST /mobile/callback takes form parameters and a listed deep link', async () => {
    const s = await state();
    const auth = await op.authorize({ clientId: CLIENT_ID, redirectUri: MOBILE_REDIRECT, state: s, accountId: 'sub-alice' });
    const form = new URLSearchParams({ code: auth.code, code_verifier: auth.codeVerifier, redirect_uri: MOBILE_REDIRECT, nonce: auth.nonce, state: s });
    const res = await d.inject({ method: 'POST', url: '/api/v1/auth/oidc/mobile/callback', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ accessToken: expect.any(String), refreshToken: expect.any(String), expires: 7200, isDefaultPassword: false });
  });

  it('refuses a deep link that is not on OIDC_REDIRECT_URIS, and missing parameters', async () => {
    const s = await state();
    const query = new URLSearchParams({ code: 'c', code_verifier: 'v', redirect_uri: 'otherapp://callback', nonce: 'n', state: s });
    const res = await d.inject({ method: 'POST', url: `/api/v1/auth/oidc/mobile/callback?${query}` });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ message: 'Invalid redirect URI' });
    const missing = await d.inject({ method: 'POST', url: '/api/v1/auth/oidc/mobile/callback?code=c' });
    expect(missing.statusCode).toBe(400);
  });

  it('GET /redirect sends the app its tokens in the fragment, or an error fragment when the sign-in fails', async () => {
    const s = await state();
    const auth = await op.authorize({ clientId: CLIENT_ID, redirectUri: MOBILE_REDIRECT, state: s, accountId: 'sub-alice' });
    const query = new URLSearchParams({ code: auth.code, code_verifier: auth.codeVerifier, redirect_uri: MOBILE_REDIRECT, nonce: auth.nonce, state: s, app_redirect_uri: MOBILE_REDIRECT });
    const res = await d.inject({ method: 'GET', url: `/api/v1/auth/oidc/redirect?${query}` });
    expect(res.statusCode).toBe(302);
    const location = String(res.headers.location);
    expect(location.startsWith(`${MOBILE_REDIRECT}#access_token=`)).toBe(true);
    const fragment = new URLSearchParams(location.split('#')[1]);
    expect(fragment.get('is_default_password')).toBe('false');
    expect(fragment.get('expires_in')).toBe('7200');
    const me = await d.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(fragment.get('access_token') ?? '') });
    expect(me.json()).toMatchObject({ username: 'alice' });

    const s2 = await state();
    const bad = new URLSearchParams({ code: 'wrong', code_verifier: auth.codeVerifier, redirect_uri: MOBILE_REDIRECT, nonce: auth.nonce, state: s2, app_redirect_uri: MOBILE_REDIRECT });
    const failed = await d.inject({ method: 'GET', url: `/api/v1/auth/oidc/redirect?${bad}` });
    expect(failed.statusCode).toBe(302);
    expect(failed.headers.location).toBe(`${MOBILE_REDIRECT}#error=Authentication%20failed`);

    const s3 = await state();
    const elsewhere = new URLSearchParams({ code: 'c', code_verifier: 'v', redirect_uri: MOBILE_REDIRECT, nonce: 'n', state: s3, app_redirect_uri: 'https://evil.example/steal' });
    const refused = await d.inject({ method: 'GET', url: `/api/v1/auth/oidc/redirect?${elsewhere}` });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ message: 'Invalid redirect URI' });
  });
});

describe('sessions and logout', () => {
  it('OIDC_SESSION_DURATION_HOURS sets the lifetime of the refresh token issued at sign-in', async () => {
    await putSettings([{ name: 'OIDC_SESSION_DURATION_HOURS', value: 1 }]);
    try {
      const res = await webSignIn('sub-alice');
      const { refreshToken } = res.json() as Tokens;
      const stored = await d.store.db.selectFrom('refresh_token').select('expiry_date').where('token', '=', refreshToken).executeTakeFirstOrThrow();
      expect(Math.abs(Date.parse(stored.expiry_date) - Date.now() - 3600_000)).toBeLessThan(60_000);
    } finally {
      await putSettings([{ name: 'OIDC_SESSION_DURATION_HOURS', value: null }]);
    }
  });

  it('logout hands an OIDC user the provider’s end-session URL, and a local user null', async () => {
    const tokens = (await webSignIn('sub-alice')).json() as Tokens;
    const res = await d.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { ...bearer(tokens.accessToken), origin } });
    const logoutUrl = new URL((res.json() as { logoutUrl: string }).logoutUrl);
    expect(logoutUrl.href.startsWith(`${op.issuer}/session/end`)).toBe(true);
    expect(logoutUrl.searchParams.get('client_id')).toBe(CLIENT_ID);
    expect(logoutUrl.searchParams.get('post_logout_redirect_uri')).toBe(`${origin}/login`);
    expect(decodeJwt(logoutUrl.searchParams.get('id_token_hint') ?? '')).toMatchObject({ sub: 'sub-alice' });
    const local = await d.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(adminToken) });
    expect(local.json()).toEqual({ logoutUrl: null });
  });

  it('a sign-out at the provider reaches Bindery by back-channel and ends the user’s sessions at once', async () => {
    const tokens = (await webSignIn('sub-alice')).json() as Tokens;
    expect((await d.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(tokens.accessToken) })).statusCode).toBe(200);
    const alice = await userRow('alice');
    const session = await d.store.db.selectFrom('oidc_session').selectAll().where('user_id', '=', alice!.id).where('revoked', '=', 0).orderBy('id', 'desc').executeTakeFirstOrThrow();
    const deliveries = op.backchannel.length;
    await op.logout(session.id_token_hint ?? '');
    expect(op.backchannel.slice(deliveries)).toEqual([{ ok: true }]);
    const refresh = await d.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: tokens.refreshToken } });
    expect(refresh.statusCode).toBe(400);
    // The access token stops working too, not when it expires.
    expect((await d.inject({ method: 'GET', url: '/api/v1/users/me', headers: bearer(tokens.accessToken) })).statusCode).toBe(401);
    expect(await d.store.db.selectFrom('oidc_session').select('revoked').where('id', '=', session.id).executeTakeFirstOrThrow()).toEqual({ revoked: 1 });
  });

  it('accepts a logout token once: a replay is refused (400, OIDC_LOGOUT_REPLAY)', async () => {
    const tokens = (await webSignIn('sub-bob')).json() as Tokens;
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: op.issuer, aud: CLIENT_ID, iat: now, exp: now + 120, jti: `jti-${now}`, sub: 'sub-bob', events: { 'http://schemas.openid.net/event/backchannel-logout': {} } };
    const logoutToken = await op.sign(claims);
    const post = (token: string) =>
      d.inject({ method: 'POST', url: '/api/v1/auth/oidc/backchannel-logout', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ logout_token: token }).toString() });
    const first = await post(logoutToken);
    expect(first.statusCode).toBe(200);
    expect((await d.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refreshToken: tokens.refreshToken } })).statusCode).toBe(400);
    const again = await post(logoutToken);
    expect(again.statusCode).toBe(400);
    await expect(handleLogoutToken(oidcDeps(d.ctx), logoutToken)).rejects.toMatchObject({ code: 'OIDC_LOGOUT_REPLAY', message: 'Logout token has already been processed' });
    await expect(handleLogoutToken(oidcDeps(d.ctx), logoutToken)).rejects.toBeInstanceOf(OidcError);
  });

  it('refuses logout tokens that are unsigned by the provider, lack a jti or the logout event, or carry a nonce', async () => {
    const now = Math.floor(Date.now() / 1000);
    const good = { iss: op.issuer, aud: CLIENT_ID, iat: now, sub: 'sub-bob', events: { 'http://schemas.openid.net/event/backchannel-logout': {} } };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...good }, 'OIDC_LOGOUT_MISSING_JTI'],
      [{ ...good, jti: 'j1', events: {} }, 'OIDC_LOGOUT_INVALID'],
      [{ ...good, jti: 'j2', nonce: 'n' }, 'OIDC_LOGOUT_INVALID'],
      [{ ...good, jti: 'j3', aud: 'someone-else' }, 'OIDC_LOGOUT_INVALID'],
      [{ ...good, jti: 'j4', iat: now - 3600 }, 'OIDC_LOGOUT_INVALID'],
    ];
    for (const [claims, code] of cases) {
      await expect(handleLogoutToken(oidcDeps(d.ctx), await op.sign(claims)), JSON.stringify(claims)).rejects.toMatchObject({ code });
    }
    const [header, payload] = (await op.sign({ ...good, jti: 'j5' })).split('.');
    const forged = `${header}.${payload}.${Buffer.from('not a signature').toString('base64url')}`;
    await expect(handleLogoutToken(oidcDeps(d.ctx), forged)).rejects.toMatchObject({ code: 'OIDC_LOGOUT_INVALID' });
    const res = await d.inject({ method: 'POST', url: '/api/v1/auth/oidc/backchannel-logout', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `logout_token=${forged}` });
    expect(res.statusCode).toBe(400);
    expect((await d.inject({ method: 'POST', url: '/api/v1/auth/oidc/backchannel-logout', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' })).statusCode).toBe(400);
  });
});

describe('audit log', () => {
  it('records sign-ins, provisioning, linking, failures, back-channel logouts and mapping changes as Grimmory does', async () => {
    const rows = await d.store.db.selectFrom('audit_log').select(['action', 'username', 'description']).execute();
    const has = (action: string, description: string, username?: string) =>
      expect(rows, `${action} ${description}`).toContainEqual(expect.objectContaining({ action, description, ...(username ? { username } : {}) }));
    has('OIDC_USER_PROVISIONED', 'OIDC auto-provisioned user: alice', 'alice');
    has('OIDC_LOGIN_SUCCESS', 'OIDC login successful for user: alice', 'alice');
    has('LOGIN_SUCCESS', 'Login successful for user: alice', 'alice');
    has('OIDC_ACCOUNT_LINKED', 'Local account linked to OIDC for user: erin', 'erin');
    has('OIDC_LOGIN_FAILED', 'OIDC callback login failed', 'system');
    has('OIDC_LOGIN_FAILED', 'OIDC redirect login failed', 'system');
    has('BACKCHANNEL_LOGOUT', 'Back-channel logout for user: bob', 'bob');
    has('OIDC_GROUP_MAPPING_CREATED', 'Created OIDC group mapping: readers', 'admin');
    has('OIDC_GROUP_MAPPING_DELETED', 'Deleted OIDC group mapping: temp2', 'admin');
    expect(rows.filter((r) => r.action === 'OIDC_ACCOUNT_LINKED').map((r) => r.username)).toEqual(['erin']);
  });
});

describe('switches', () => {
  it('OIDC-only mode refuses password logins of non-admins (403) but not the admin’s', async () => {
    await d.createUser('local-reader');
    await putSettings([{ name: 'OIDC_FORCE_ONLY_MODE', value: true }]);
    try {
      const refused = await d.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'local-reader', password: 'local-reader-password' } });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ message: 'Local login is disabled. Use OIDC to sign in.' });
      expect((await d.inject({ method: 'GET', url: '/api/v1/public-settings' })).json()).toMatchObject({ oidcForceOnlyMode: true });
      expect((await d.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'admin', password: 'admin-password' } })).statusCode).toBe(200);
      expect((await webSignIn('sub-alice')).statusCode).toBe(200);
    } finally {
      await putSettings([{ name: 'OIDC_FORCE_ONLY_MODE', value: false }]);
    }
  });

  it('with OIDC switched off the callback is refused (403) and public settings say so', async () => {
    await putSettings([{ name: 'OIDC_ENABLED', value: false }]);
    try {
      const res = await webSignIn('sub-alice');
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ message: 'OIDC is not enabled' });
      expect((await d.inject({ method: 'GET', url: '/api/v1/public-settings' })).json()).toMatchObject({ oidcEnabled: false });
    } finally {
      await putSettings([{ name: 'OIDC_ENABLED', value: true }]);
    }
  });

  it('other routes still refuse form bodies (415)', async () => {
    const res = await d.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'username=admin&password=admin-password' });
    expect(res.statusCode).toBe(415);
  });
});
