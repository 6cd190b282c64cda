import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

let d: TestDaemon;
beforeEach(async () => {
  d = await startTestDaemon();
});
afterEach(async () => d.close());

describe('daemon basics', () => {
  it('answers the healthcheck and reports setup state', async () => {
    const health = await d.inject({ method: 'GET', url: '/api/v1/healthcheck' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({ status: 200, data: { status: 'UP' } });
    expect((await d.inject({ method: 'GET', url: '/api/v1/setup/status' })).json()).toMatchObject({ status: 200, data: false });
  });

  it('creates the first admin once, then refuses with 403 in the error shape', async () => {
    const body = { username: 'admin', password: 'long-enough', name: 'Admin', email: 'a@example.com' };
    expect((await d.inject({ method: 'POST', url: '/api/v1/setup', payload: body })).statusCode).toBe(200);
    expect((await d.inject({ method: 'GET', url: '/api/v1/setup/status' })).json()).toMatchObject({ data: true });
    const again = await d.inject({ method: 'POST', url: '/api/v1/setup', payload: { ...body, username: 'other', email: 'b@example.com' } });
    expect(again.statusCode).toBe(403);
    expect(again.json()).toEqual({ status: 403, message: expect.any(String), timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+$/) });
  });

  it('creates exactly one first admin when several setups arrive at once', async () => {
    const attempts = await Promise.all(
      [0, 1, 2, 3].map((n) => d.inject({ method: 'POST', url: '/api/v1/setup', payload: { username: `admin${n}`, password: 'long-enough', name: `Admin ${n}`, email: `a${n}@example.com` } })),
    );
    expect(attempts.map((a) => a.statusCode).sort()).toEqual([200, 403, 403, 403]);
    const users = await d.store.db.selectFrom('users').select('username').execute();
    expect(users).toHaveLength(1);
  });

  it('rejects malformed JSON, wrong types and missing fields with 400, never 500', async () => {
    const malformed = await d.inject({ method: 'POST', url: '/api/v1/setup', headers: { 'content-type': 'application/json' }, payload: '{"username":' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ status: 400 });
    const wrong = await d.inject({ method: 'POST', url: '/api/v1/setup', payload: { username: 5, password: 'short' } });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toMatchObject({ status: 400, message: 'Validation error', details: expect.arrayContaining([expect.stringContaining('password')]) });
  });

  it('answers unknown API paths with a 404 in the error shape', async () => {
    const res = await d.inject({ method: 'GET', url: '/api/v1/does-not-exist' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ status: 404, message: 'Resource not found.' });
  });

  it('serves its OpenAPI document', async () => {
    const res = await d.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ openapi: expect.stringMatching(/^3\./), paths: expect.objectContaining({ '/api/v1/setup': expect.any(Object) }) });
  });
});
