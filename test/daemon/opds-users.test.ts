// OPDS accounts (/api/v2/opds-users, Grimmory's OpdsUserV2Controller): owned by the calling user, bcrypt-hashed,
// `admin | canAccessOpds`, and the accounts a reader app signs in with.
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

let d: TestDaemon;
let owner: { id: number; token: string };
let other: { id: number; token: string };
let admin: { id: number; token: string };
let noFlag: { id: number; token: string };

const BASE = '/api/v2/opds-users';

const api = (token: string | undefined, options: InjectOptions): Promise<LightMyRequestResponse> =>
  d.inject({ ...options, headers: { ...(options.headers ?? {}), ...(token ? { authorization: `Bearer ${token}` } : {}) } });

const create = (token: string, payload: unknown): Promise<LightMyRequestResponse> => api(token, { method: 'POST', url: BASE, payload: payload as Record<string, unknown> });

const signIn = (user: string, password: string): Promise<LightMyRequestResponse> =>
  d.inject({ method: 'GET', url: '/api/v1/opds', headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` } });

beforeAll(async () => {
  d = await startTestDaemon();
  owner = await d.createUser('owner', { canAccessOpds: true });
  other = await d.createUser('other', { canAccessOpds: true });
  admin = await d.createUser('admin', { admin: true });
  noFlag = await d.createUser('noflag', {});
  await d.store.db.insertInto('app_settings').values({ name: 'opds_server_enabled', val: 'true' }).execute();
});

afterAll(async () => {
  await d?.close();
});

describe('creating accounts', () => {
  it('creates an account owned by the caller, with the default order, never showing the password', async () => {
    const res = await create(owner.token, { username: 'kobo', password: 'kobo-password' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ id: expect.any(Number), userId: owner.id, username: 'kobo', sortOrder: 'RECENT' });
    const row = await d.store.db.selectFrom('opds_user_v2').selectAll().where('username', '=', 'kobo').executeTakeFirstOrThrow();
    expect(row.user_id).toBe(owner.id);
    expect(row.password_hash).toMatch(/^\$2[aby]\$10\$/);
    expect(row.password_hash).not.toContain('kobo-password');
  });

  it('keeps the order given', async () => {
    const res = await create(owner.token, { username: 'tablet', password: 'tablet-password', sortOrder: 'TITLE_ASC' });
    expect(res.json()).toMatchObject({ username: 'tablet', sortOrder: 'TITLE_ASC' });
  });

  it('refuses a name already taken by anyone, whatever its letter case', async () => {
    for (const [token, username] of [[owner.token, 'kobo'], [other.token, 'KOBO']] as const) {
      const res = await create(token, { username, password: 'another-password' });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ status: 400, message: `Username '${username}' is already taken` });
    }
    // The catalog refuses it too, on either engine (two requests racing past the check).
    await expect(d.store.db.insertInto('opds_user_v2').values({ user_id: owner.id, username: 'KoBo', password_hash: 'x' }).execute()).rejects.toThrow();
  });

  it('validates every field and reports all problems at once', async () => {
    const res = await create(owner.token, { username: '  ', sortOrder: 'SIDEWAYS' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ status: 400, message: 'Validation error' });
    expect((res.json() as { details: string[] }).details).toEqual([
      'username: must not be blank',
      'password: must not be blank',
      expect.stringMatching(/^sortOrder: must be one of RECENT, TITLE_ASC/),
    ]);
    expect((await create(owner.token, { username: 'a:b', password: 'pw' })).statusCode).toBe(400);
    expect((await create(owner.token, { username: 'long', password: 'x'.repeat(73) })).statusCode).toBe(400);
    expect((await api(owner.token, { method: 'POST', url: BASE, headers: { 'content-type': 'application/json' }, payload: '{"username":' })).statusCode).toBe(400);
  });
});

describe('listing, changing and deleting', () => {
  it('lists only the caller’s own accounts', async () => {
    await create(other.token, { username: 'others-phone', password: 'phone-password' });
    const mine = await api(owner.token, { method: 'GET', url: BASE });
    expect(mine.statusCode).toBe(200);
    expect((mine.json() as { username: string }[]).map((u) => u.username)).toEqual(['kobo', 'tablet']);
    expect(((await api(admin.token, { method: 'GET', url: BASE })).json() as unknown[]).length).toBe(0);
  });

  it('changes the order of an own account; sortOrder is required', async () => {
    const [kobo] = (await api(owner.token, { method: 'GET', url: BASE })).json() as { id: number }[];
    const res = await api(owner.token, { method: 'PATCH', url: `${BASE}/${kobo?.id}`, payload: { sortOrder: 'AUTHOR_DESC' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: kobo?.id, username: 'kobo', sortOrder: 'AUTHOR_DESC' });
    const missing = await api(owner.token, { method: 'PATCH', url: `${BASE}/${kobo?.id}`, payload: {} });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ message: 'Validation error', details: ['sortOrder: must not be null'] });
    expect((await api(owner.token, { method: 'PATCH', url: `${BASE}/${kobo?.id}`, payload: { sortOrder: 'random' } })).statusCode).toBe(400);
  });

  it('refuses to touch someone else’s account (admins included) with 403, and an unknown one with 404', async () => {
    const [phone] = (await api(other.token, { method: 'GET', url: BASE })).json() as { id: number }[];
    for (const token of [owner.token, admin.token]) {
      const patch = await api(token, { method: 'PATCH', url: `${BASE}/${phone?.id}`, payload: { sortOrder: 'TITLE_ASC' } });
      expect(patch.statusCode).toBe(403);
      expect(patch.json()).toMatchObject({ status: 403, message: 'Access denied.' });
      expect((await api(token, { method: 'DELETE', url: `${BASE}/${phone?.id}` })).statusCode).toBe(403);
    }
    expect((await api(owner.token, { method: 'PATCH', url: `${BASE}/99999`, payload: { sortOrder: 'TITLE_ASC' } })).statusCode).toBe(404);
    const gone = await api(owner.token, { method: 'DELETE', url: `${BASE}/99999` });
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toMatchObject({ status: 404, message: 'User not found with ID: 99999' });
  });

  it('deletes an own account with an empty 200', async () => {
    const [, tablet] = (await api(owner.token, { method: 'GET', url: BASE })).json() as { id: number }[];
    const res = await api(owner.token, { method: 'DELETE', url: `${BASE}/${tablet?.id}` });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    expect(((await api(owner.token, { method: 'GET', url: BASE })).json() as unknown[]).length).toBe(1);
  });
});

describe('who may manage accounts', () => {
  it('needs admin or canAccessOpds, and a signed-in caller', async () => {
    for (const options of [{ method: 'GET', url: BASE }, { method: 'POST', url: BASE, payload: { username: 'x', password: 'y' } }, { method: 'PATCH', url: `${BASE}/1`, payload: { sortOrder: 'RECENT' } }, { method: 'DELETE', url: `${BASE}/1` }] as InjectOptions[]) {
      const refused = await api(noFlag.token, options);
      expect(refused.statusCode, `${options.method}`).toBe(403);
      expect(refused.json()).toMatchObject({ status: 403, message: 'Access denied.' });
      expect((await api(undefined, options)).statusCode).toBe(401);
    }
    expect((await create(admin.token, { username: 'admins-reader', password: 'admin-reader-pw' })).statusCode).toBe(200);
  });
});

describe('the accounts are what reader apps sign in with', () => {
  it('signs in with the account, not after it is deleted, and not once its owner is gone', async () => {
    expect((await signIn('kobo', 'kobo-password')).statusCode).toBe(200);
    // The name in any letter case, as under Grimmory's database collation.
    expect((await signIn('KOBO', 'kobo-password')).statusCode).toBe(200);
    expect((await signIn('kobo', 'wrong-password')).statusCode).toBe(401);
    const created = (await create(owner.token, { username: 'short-lived', password: 'short-lived-pw' })).json() as { id: number };
    expect((await signIn('short-lived', 'short-lived-pw')).statusCode).toBe(200);
    await api(owner.token, { method: 'DELETE', url: `${BASE}/${created.id}` });
    expect((await signIn('short-lived', 'short-lived-pw')).statusCode).toBe(401);

    await d.store.db.deleteFrom('users').where('id', '=', other.id).execute();
    expect(await d.store.db.selectFrom('opds_user_v2').select('id').where('username', '=', 'others-phone').executeTakeFirst()).toBeUndefined();
    expect((await signIn('others-phone', 'phone-password')).statusCode).toBe(401);
  });

  it('sees a changed password on the next request, although verified credentials are remembered', async () => {
    const { hashPassword } = await import('../../src/core/users/users.ts');
    expect((await signIn('kobo', 'kobo-password')).statusCode).toBe(200);
    await d.store.db.updateTable('opds_user_v2').set({ password_hash: await hashPassword('new-kobo-password') }).where('username', '=', 'kobo').execute();
    expect((await signIn('kobo', 'kobo-password')).statusCode).toBe(401);
    expect((await signIn('kobo', 'new-kobo-password')).statusCode).toBe(200);
  });
});
