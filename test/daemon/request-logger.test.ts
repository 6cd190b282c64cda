// Request ids in the logs: each line about a request carries its id, the client's X-Request-Id when it sent one (up to
// 64 characters), else a new id shaped like a random UUID, different for every request and every process. The request's
// logger is made only when a line is written at an enabled level (src/daemon/request-logger.ts).
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { buildApp, type BuiltApp } from '../../src/daemon/app.ts';
import { requestIds } from '../../src/daemon/request-logger.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Line {
  reqId?: string;
  msg?: string;
  level: number;
  err?: { message: string };
}

let temp: TempDir | undefined;
let store: Store | undefined;
let built: BuiltApp | undefined;
afterEach(async () => {
  await built?.app.close();
  await store?.close();
  temp?.remove();
  built = store = temp = undefined;
});

async function daemonLogging(level: 'info' | 'warn'): Promise<{ app: BuiltApp['app']; lines: Line[] }> {
  temp = makeTempDir('bindery-request-logger-');
  const config = { ...loadConfig({ env: {}, flags: { dataDir: temp.file('data') } }), logLevel: level };
  store = await openStore(temp.file('bindery.sqlite'));
  const lines: Line[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString().split('\n')) if (text.trim() !== '') lines.push(JSON.parse(text) as Line);
      done();
    },
  });
  const routes = [
    { method: 'GET' as const, url: '/api/v1/logger-test/ok', auth: 'public' as const, handler: () => ({ ok: true }) },
    {
      method: 'GET' as const,
      url: '/api/v1/logger-test/fail',
      auth: 'public' as const,
      handler: () => {
        throw new Error('broken on purpose');
      },
    },
  ];
  built = await buildApp({ config, store, routes, logger: { level, stream } });
  await built.app.ready();
  return { app: built.app, lines };
}

describe('request ids and request loggers', () => {
  it('logs each request under an id of its own, the one the client sent when it sent one', async () => {
    const { app, lines } = await daemonLogging('info');
    for (let i = 0; i < 3; i++) expect((await app.inject({ method: 'GET', url: '/api/v1/logger-test/ok' })).statusCode).toBe(200);
    await app.inject({ method: 'GET', url: '/api/v1/logger-test/ok', headers: { 'x-request-id': 'from-the-proxy-42' } });
    await app.inject({ method: 'GET', url: '/api/v1/logger-test/ok', headers: { 'x-request-id': 'x'.repeat(100) } });
    const about = lines.filter((line) => line.reqId !== undefined);
    // Fastify's two lines per request at info, both under the request's id.
    expect(about.map((line) => line.msg)).toEqual(Array.from({ length: 5 }, () => ['incoming request', 'request completed']).flat());
    const ids = about.filter((_, i) => i % 2 === 0).map((line) => line.reqId);
    expect(about.filter((_, i) => i % 2 === 1).map((line) => line.reqId)).toEqual(ids);
    expect(ids.slice(0, 3).every((id) => UUID.test(id as string))).toBe(true);
    expect(new Set(ids.slice(0, 3)).size).toBe(3);
    expect(ids.slice(3)).toEqual(['from-the-proxy-42', 'x'.repeat(64)]);
  });

  it('at warn, writes nothing for a request that goes well and the error with its id for one that fails', async () => {
    const { app, lines } = await daemonLogging('warn');
    await app.inject({ method: 'GET', url: '/api/v1/logger-test/ok' });
    expect(lines.filter((line) => line.reqId !== undefined)).toEqual([]);
    const failed = await app.inject({ method: 'GET', url: '/api/v1/logger-test/fail', headers: { 'x-request-id': 'trace-me' } });
    expect(failed.statusCode).toBe(500);
    const errors = lines.filter((line) => line.reqId !== undefined);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ reqId: 'trace-me', msg: 'request failed', level: 50, err: { message: 'broken on purpose' } });
  });

  it('makes ids that differ between processes (each source starts from its own random id)', () => {
    const request = { headers: {} } as Parameters<ReturnType<typeof requestIds>>[0];
    const [one, other] = [requestIds(), requestIds()];
    const ids = [one(request), one(request), other(request), other(request)];
    expect(ids.every((id) => UUID.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(4);
    expect(ids[0]?.slice(0, 24)).toBe(ids[1]?.slice(0, 24));
    expect(ids[0]?.slice(0, 24)).not.toBe(ids[2]?.slice(0, 24));
  });
});
