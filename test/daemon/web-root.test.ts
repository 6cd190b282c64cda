// --web-root: a single-page app (Grimmory's UI) served from the same origin as the API, as web-ui.md requires:
// history fallback to index.html, API/Komga/websocket paths not swallowed, WASM typed, cross-origin isolation headers.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

const INDEX = '<!doctype html><html><head><base href="/"></head><body><app-root></app-root></body></html>';
const SCRIPT = 'console.log("main");';
const WASM = Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
let web: string;

beforeAll(() => {
  web = mkdtempSync(join(tmpdir(), 'bindery-web-'));
  writeFileSync(join(web, 'index.html'), INDEX);
  writeFileSync(join(web, 'main.abc12345.js'), SCRIPT);
  writeFileSync(join(web, 'x.wasm'), WASM);
  mkdirSync(join(web, 'assets'));
  writeFileSync(join(web, 'assets', 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
});
afterAll(() => rmSync(web, { recursive: true, force: true }));

function expectIsolated(headers: Record<string, unknown>): void {
  expect(headers['cross-origin-opener-policy']).toBe('same-origin');
  expect(headers['cross-origin-embedder-policy']).toBe('credentialless');
}

function expectErrorShape(res: { statusCode: number; headers: Record<string, unknown>; json(): unknown }, status: number): void {
  expect(res.statusCode).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/application\/json/);
  expect(res.json()).toEqual({ status, message: expect.any(String), timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+$/) });
}

describe.each([
  { name: 'at the root', basePath: '' },
  { name: 'under a base path', basePath: '/books' },
])('--web-root $name', ({ basePath }) => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startTestDaemon({ webRoot: web, basePath });
  });
  afterAll(async () => d.close());
  const at = (path: string): string => `${basePath}${path}`;

  it('serves index.html for / and for any deep link, not cached, cross-origin isolated', async () => {
    for (const path of ['/', '/library/5/books', '/book/1', '/ebook-reader/book/1?streaming=true', '/login', '/oauth2-callback?code=x']) {
      const res = await d.inject({ method: 'GET', url: at(path) });
      expect(res.statusCode, path).toBe(200);
      expect(String(res.headers['content-type']), path).toMatch(/text\/html/);
      expect(res.body, path).toBe(INDEX);
      expectIsolated(res.headers);
    }
    const deep = await d.inject({ method: 'GET', url: at('/library/5/books') });
    expect(deep.headers['cache-control']).toBe('no-cache');
    expect((await d.inject({ method: 'HEAD', url: at('/library/5/books') })).statusCode).toBe(200);
  });

  it('serves the files themselves: hashed bundles cached for good, .wasm as application/wasm', async () => {
    const script = await d.inject({ method: 'GET', url: at('/main.abc12345.js') });
    expect(script.statusCode).toBe(200);
    expect(script.body).toBe(SCRIPT);
    expect(String(script.headers['content-type'])).toMatch(/javascript/);
    expect(script.headers['cache-control']).toMatch(/immutable/);
    expectIsolated(script.headers);

    const wasm = await d.inject({ method: 'GET', url: at('/x.wasm') });
    expect(wasm.statusCode).toBe(200);
    expect(wasm.headers['content-type']).toBe('application/wasm');
    expect(wasm.rawPayload.equals(WASM)).toBe(true);
    expectIsolated(wasm.headers);

    const nested = await d.inject({ method: 'GET', url: at('/assets/logo.svg') });
    expect(nested.statusCode).toBe(200);
    expect(String(nested.headers['content-type'])).toMatch(/image\/svg/);
  });

  it('answers unknown API paths with a JSON 404 in the error shape, and API routes as usual', async () => {
    for (const path of ['/api/v1/does-not-exist', '/api/v1/books/xyz/unknown-thing', '/api', '/api/']) {
      const res = await d.inject({ method: 'GET', url: at(path) });
      expectErrorShape(res, 404);
      expectIsolated(res.headers);
    }
    const health = await d.inject({ method: 'GET', url: at('/api/v1/healthcheck') });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toMatchObject({ data: { status: 'UP' } });
    expectIsolated(health.headers);
  });

  it('does not swallow /komga or /ws', async () => {
    for (const path of ['/komga/api/v1/libraries', '/komga', '/ws', '/ws/info']) {
      const res = await d.inject({ method: 'GET', url: at(path) });
      expect(String(res.headers['content-type'] ?? ''), path).not.toMatch(/text\/html/);
      expect(res.body, path).not.toBe(INDEX);
      expect(res.statusCode, path).not.toBe(200);
    }
  });

  it('does not answer other methods or escaping paths with the app', async () => {
    expectErrorShape(await d.inject({ method: 'POST', url: at('/library/5/books') }), 404);
    for (const path of ['/../package.json', '/%2e%2e/package.json', '/assets/../../package.json']) {
      const res = await d.inject({ method: 'GET', url: at(path) });
      expect(res.body, path).not.toContain('"name": "bindery"');
    }
  });

  if (basePath) {
    it('keeps paths outside the base path out of the app', async () => {
      expectErrorShape(await d.inject({ method: 'GET', url: '/library/5/books' }), 404);
      expectErrorShape(await d.inject({ method: 'GET', url: '/api/v1/healthcheck' }), 404);
      expectErrorShape(await d.inject({ method: 'GET', url: '/bookshelf' }), 404);
    });
  }
});

describe('without --web-root', () => {
  it('answers every unknown path with a JSON 404 and still sends the isolation headers', async () => {
    const d = await startTestDaemon();
    try {
      for (const path of ['/', '/library/5/books', '/api/v1/nope', '/komga/api/v1/nope', '/ws']) {
        const res = await d.inject({ method: 'GET', url: path });
        expectErrorShape(res, 404);
        expectIsolated(res.headers);
      }
    } finally {
      await d.close();
    }
  });
});
