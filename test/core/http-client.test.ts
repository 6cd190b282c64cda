// The outgoing client against a real local server: address refusals (also after redirects), caps, types, timeouts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../src/core/net/address-policy.ts';
import { createHttpClient, OutgoingRequestError, type OutgoingErrorCode } from '../../src/core/net/http-client.ts';

let server: Server;
let base: string;
let port: number;
const seen: { method: string; url: string; body: string }[] = [];

function handle(req: IncomingMessage, res: ServerResponse, body: string): void {
  seen.push({ method: req.method ?? '', url: req.url ?? '', body });
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path === '/json') return void res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end('{"ok":true}');
  if (path === '/html') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>captcha</html>');
  if (path === '/image') return void res.writeHead(200, { 'content-type': 'image/jpeg' }).end(Buffer.from([0xff, 0xd8, 0xff]));
  if (path === '/big-declared') return void res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '5000' }).end(Buffer.alloc(5000));
  if (path === '/big-chunked') {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    for (let i = 0; i < 10; i++) res.write(Buffer.alloc(1000));
    return void res.end();
  }
  if (path === '/to-json') return void res.writeHead(302, { location: '/json' }).end();
  if (path === '/see-other') return void res.writeHead(303, { location: '/json' }).end();
  if (path === '/to-localhost') return void res.writeHead(302, { location: `http://localhost:${port}/json` }).end();
  if (path === '/to-metadata') return void res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
  if (path === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
  if (path === '/slow') return void setTimeout(() => res.writeHead(200).end('late'), 2_000);
  if (path === '/forbidden') return void res.writeHead(403, { 'content-type': 'text/plain' }).end('blocked');
  res.writeHead(404).end();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => handle(req, res, Buffer.concat(chunks).toString()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function failure(promise: Promise<unknown>): Promise<OutgoingRequestError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(OutgoingRequestError);
    return error as OutgoingRequestError;
  }
  throw new Error('expected the request to fail');
}

const codeOf = async (promise: Promise<unknown>): Promise<OutgoingErrorCode> => (await failure(promise)).code;

describe('address policy', () => {
  it('accepts public unicast addresses only', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888']) expect(isPublicAddress(address)).toBe(true);
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '255.255.255.255', '224.0.0.1', '::1', '::', 'fe80::1', 'fc00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', 'not-an-ip']) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });
});

describe('a client with the default policy', () => {
  const client = createHttpClient();

  it('refuses loopback, private and link-local targets, by address or by name', async () => {
    expect(await codeOf(client.request({ url: `${base}/json` }))).toBe('BLOCKED_ADDRESS');
    expect(await codeOf(client.request({ url: `http://localhost:${port}/json` }))).toBe('BLOCKED_ADDRESS');
    expect(await codeOf(client.request({ url: `http://[::1]:${port}/json` }))).toBe('BLOCKED_ADDRESS');
    expect(await codeOf(client.request({ url: 'http://169.254.169.254/latest/meta-data/' }))).toBe('BLOCKED_ADDRESS');
    expect(await codeOf(client.request({ url: 'http://10.0.0.1/' }))).toBe('BLOCKED_ADDRESS');
    expect(await codeOf(client.request({ url: 'http://0.0.0.0/' }))).toBe('BLOCKED_ADDRESS');
    expect(seen.length).toBe(0);
  });

  it('refuses schemes other than http(s) and URLs with credentials', async () => {
    expect(await codeOf(client.request({ url: 'file:///etc/passwd' }))).toBe('INVALID_URL');
    expect(await codeOf(client.request({ url: 'ftp://example.com/x' }))).toBe('INVALID_URL');
    expect(await codeOf(client.request({ url: 'not a url' }))).toBe('INVALID_URL');
    expect(await codeOf(client.request({ url: 'http://user:pass@example.com/' }))).toBe('INVALID_URL');
  });
});

describe('a client that allows the test server', () => {
  const client = createHttpClient({ allowPrivateHosts: ['127.0.0.1'] });

  it('fetches, parses JSON and reports the media type', async () => {
    const res = await client.request({ url: `${base}/json`, accept: ['application/json'] });
    expect(res.status).toBe(200);
    expect(res.contentType).toBe('application/json');
    expect(res.json()).toEqual({ ok: true });
    expect(res.headers['content-type']).toContain('charset');
  });

  it('checks the content type of a successful answer', async () => {
    expect(await codeOf(client.request({ url: `${base}/html`, accept: ['application/json'] }))).toBe('BAD_CONTENT_TYPE');
    expect((await client.request({ url: `${base}/image`, accept: ['image/'] })).body.length).toBe(3);
    expect(await codeOf(client.request({ url: `${base}/json`, accept: ['image/'] }))).toBe('BAD_CONTENT_TYPE');
  });

  it('caps the size, whether announced or streamed', async () => {
    expect(await codeOf(client.request({ url: `${base}/big-declared`, maxBytes: 1000 }))).toBe('TOO_LARGE');
    expect(await codeOf(client.request({ url: `${base}/big-chunked`, maxBytes: 5000 }))).toBe('TOO_LARGE');
    expect((await client.request({ url: `${base}/big-chunked`, maxBytes: 10_000 })).body.length).toBe(10_000);
  });

  it('follows redirects, turning a 303 into a GET, and stops at the limit', async () => {
    expect((await client.request({ url: `${base}/to-json` })).url).toBe(`${base}/json`);
    seen.length = 0;
    const res = await client.request({ url: `${base}/see-other`, method: 'POST', body: 'q=1' });
    expect(res.json()).toEqual({ ok: true });
    expect(seen.map((s) => s.method)).toEqual(['POST', 'GET']);
    expect(await codeOf(client.request({ url: `${base}/loop`, maxRedirects: 3 }))).toBe('TOO_MANY_REDIRECTS');
  });

  it('checks every redirect target again', async () => {
    expect(await codeOf(client.request({ url: `${base}/to-localhost` }))).toBe('BLOCKED_ADDRESS');
    expect(await codeOf(client.request({ url: `${base}/to-metadata` }))).toBe('BLOCKED_ADDRESS');
  });

  it('gives up after the time limit', async () => {
    const started = performance.now();
    expect(await codeOf(client.request({ url: `${base}/slow`, timeoutMs: 200 }))).toBe('TIMEOUT');
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('reports a non-2xx status, or returns it when asked', async () => {
    const error = await failure(client.request({ url: `${base}/forbidden` }));
    expect(error.code).toBe('HTTP_STATUS');
    expect(error.status).toBe(403);
    const res = await client.request({ url: `${base}/forbidden`, anyStatus: true, accept: ['application/json'] });
    expect(res.status).toBe(403);
    expect(res.text()).toBe('blocked');
  });

  it('reports a refused connection as a network error', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await codeOf(client.request({ url: `http://127.0.0.1:${freePort}/` }))).toBe('NETWORK');
  });
});
