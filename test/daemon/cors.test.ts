// CORS answers, header for header, for each form of BINDERY_ALLOWED_ORIGINS: every origin ("*", the default), a list,
// a list naming "*", and none (""). The daemon answers them from headers worked out once (src/daemon/cors.ts); these
// are the answers @fastify/cors gave, which it replaced.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

const EXPOSED = 'Content-Disposition, Accept-Ranges, Content-Range, Content-Length, ETag, Date, Last-Modified';
const ALLOWED_HEADERS = 'Authorization, Cache-Control, Content-Type, Range, If-None-Match, If-Modified-Since';
const HEALTH = '/api/v1/healthcheck';
/** JSON answers also vary with Accept-Encoding (compression). */
const VARY = 'Origin, Accept-Encoding';

function corsHeaders(res: LightMyRequestResponse): Record<string, unknown> {
  const names = ['access-control-allow-origin', 'access-control-allow-credentials', 'access-control-expose-headers', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-max-age', 'vary'];
  return Object.fromEntries(names.filter((name) => res.headers[name] !== undefined).map((name) => [name, res.headers[name]]));
}

const daemons: Record<string, TestDaemon> = {};
beforeAll(async () => {
  for (const allowedOrigins of ['*', 'https://a.example, https://b.example', 'https://a.example,*', '']) daemons[allowedOrigins] = await startTestDaemon({ allowedOrigins });
});
afterAll(async () => {
  for (const d of Object.values(daemons)) await d.close();
});

describe('CORS', () => {
  it('with every origin allowed: the caller’s origin echoed, Vary: Origin, credentials and exposed headers on every answer', async () => {
    const d = daemons['*'] as TestDaemon;
    const plain = await d.inject({ method: 'GET', url: HEALTH });
    expect(plain.statusCode).toBe(200);
    expect(corsHeaders(plain)).toEqual({ 'access-control-allow-credentials': 'true', 'access-control-expose-headers': EXPOSED, vary: VARY });
    const cross = await d.inject({ method: 'GET', url: HEALTH, headers: { origin: 'https://reader.example' } });
    expect(corsHeaders(cross)).toEqual({ 'access-control-allow-origin': 'https://reader.example', 'access-control-allow-credentials': 'true', 'access-control-expose-headers': EXPOSED, vary: VARY });
    // Refusals and unknown paths carry them too.
    const refused = await d.inject({ method: 'GET', url: '/api/v1/books', headers: { origin: 'https://reader.example' } });
    expect(refused.statusCode).toBe(401);
    expect(corsHeaders(refused)).toEqual(corsHeaders(cross));
    const missing = await d.inject({ method: 'GET', url: '/api/v1/no-such-thing', headers: { origin: 'https://reader.example' } });
    expect(missing.statusCode).toBe(404);
    expect(corsHeaders(missing)).toEqual(corsHeaders(cross));
  });

  it('adds Origin to a Vary the answer sets itself (compression)', async () => {
    const d = daemons['*'] as TestDaemon;
    await d.setupAdmin();
    const token = await d.login('admin', 'admin-password');
    const res = await d.inject({ method: 'GET', url: '/api/v1/settings', headers: { authorization: `Bearer ${token}`, 'accept-encoding': 'gzip', origin: 'https://reader.example' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers.vary).toBe('Origin, Accept-Encoding');
  });

  it('answers a preflight with 204, the methods and headers allowed; a malformed one with 400', async () => {
    const d = daemons['*'] as TestDaemon;
    const preflight = await d.inject({ method: 'OPTIONS', url: '/api/v1/books', headers: { origin: 'https://reader.example', 'access-control-request-method': 'GET' } });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['content-length']).toBe('0');
    expect(preflight.body).toBe('');
    expect(corsHeaders(preflight)).toEqual({
      'access-control-allow-origin': 'https://reader.example',
      'access-control-allow-credentials': 'true',
      'access-control-expose-headers': EXPOSED,
      'access-control-allow-methods': 'GET,HEAD,POST',
      'access-control-allow-headers': ALLOWED_HEADERS,
      vary: 'Origin',
    });
    for (const headers of [{ origin: 'https://reader.example' }, { 'access-control-request-method': 'GET' }, {}]) {
      const bad = await d.inject({ method: 'OPTIONS', url: '/api/v1/books', headers });
      expect(bad.statusCode).toBe(400);
      expect(bad.body).toBe('Invalid Preflight Request');
      expect(bad.headers['content-type']).toMatch(/^text\/plain/);
    }
  });

  it('with a list: only the listed origins are echoed, Vary: Origin always', async () => {
    const d = daemons['https://a.example, https://b.example'] as TestDaemon;
    for (const origin of ['https://a.example', 'https://b.example']) {
      const res = await d.inject({ method: 'GET', url: HEALTH, headers: { origin } });
      expect(corsHeaders(res)).toEqual({ 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true', 'access-control-expose-headers': EXPOSED, vary: VARY });
    }
    const other = await d.inject({ method: 'GET', url: HEALTH, headers: { origin: 'https://c.example' } });
    expect(other.statusCode).toBe(200);
    expect(corsHeaders(other)).toEqual({ 'access-control-allow-credentials': 'true', 'access-control-expose-headers': EXPOSED, vary: VARY });
    const preflight = await d.inject({ method: 'OPTIONS', url: HEALTH, headers: { origin: 'https://c.example', 'access-control-request-method': 'GET' } });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('with "*" in the list: "*" on every answer, no Vary', async () => {
    const d = daemons['https://a.example,*'] as TestDaemon;
    for (const headers of [{}, { origin: 'https://c.example' }]) {
      const res = await d.inject({ method: 'GET', url: HEALTH, headers });
      expect(corsHeaders(res)).toEqual({ 'access-control-allow-origin': '*', 'access-control-allow-credentials': 'true', 'access-control-expose-headers': EXPOSED, vary: 'Accept-Encoding' });
    }
  });

  it('with none: no origin echoed', async () => {
    const d = daemons[''] as TestDaemon;
    const res = await d.inject({ method: 'GET', url: HEALTH, headers: { origin: 'https://a.example' } });
    expect(corsHeaders(res)).toEqual({ 'access-control-allow-credentials': 'true', 'access-control-expose-headers': EXPOSED, vary: VARY });
  });
});
