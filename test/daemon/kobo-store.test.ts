// Forwarding to the Kobo store (forwardToKoboStore, the default): what the store is sent (token stripped, the
// device's credentials, never our sync token), what comes back (status, body, only x-kobo-* headers), the store's
// entitlements and sync token merged into a sync, and local answers — never a 500 — when the store fails.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { buildApp } from '../../src/daemon/app.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { DEVICE_HEADERS, koboDevice, type KoboDevice } from '../helpers/kobo-device.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

type Mode = 'up' | 'error' | 'garbage' | 'down';

let mode: Mode = 'up';
let seen: Seen[] = [];
let store: Server;
let storePort: number;
let d: TestDaemon;
let lib: TempLibrary;
let device: KoboDevice;
let token: string;
let origin: string;

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}

function fakeStore(req: IncomingMessage, res: ServerResponse, body: string): void {
  if (mode === 'error') return answer(res, 503, { Message: 'maintenance' });
  if (mode === 'garbage') {
    res.writeHead(200, { 'content-type': 'text/html' });
    return void res.end('<html>not json</html>');
  }
  const path = (req.url ?? '').split('?')[0];
  if (path === '/v1/initialization') {
    return answer(res, 200, { Resources: { library_sync: 'https://storeapi.kobo.com/v1/library/sync', image_host: '//cdn.kobo.com/book-images/', store_only_resource: 'https://store.example/only' } }, { 'x-kobo-apitoken': 'e30=' });
  }
  if (path === '/v1/auth/device') return answer(res, 200, { AccessToken: 'store-access', RefreshToken: 'store-refresh', TokenType: 'Bearer', TrackingId: 't', UserKey: JSON.parse(body || '{}').UserKey });
  if (path === '/v1/user/profile') return answer(res, 200, { AffiliateName: 'Kobo', HasPurchased: true }, { 'x-kobo-recent-reads': 'yes', 'x-store-internal': 'secret' });
  if (path === '/v1/library/sync') {
    const more = req.headers['x-kobo-synctoken'] === 'first.round';
    return answer(
      res,
      200,
      [
        { NewEntitlement: { BookEntitlement: { Id: 'store-book-1', IsRemoved: false }, BookMetadata: { Title: 'Bought at Kobo' } } },
        { ChangedReadingState: { ReadingState: { EntitlementId: 'store-book-1' } } },
      ],
      { 'x-kobo-synctoken': more ? 'second.round' : 'first.round', 'x-kobo-sync': more ? 'continue' : '' },
    );
  }
  if (path === '/v1/library/store-book-1/metadata') return answer(res, 200, [{ Title: 'Bought at Kobo', EntitlementId: 'store-book-1' }]);
  if (path === '/v1/nothing') return answer(res, 204, undefined);
  return answer(res, 200, { echoed: req.url, method: req.method });
}

async function listen(): Promise<void> {
  store = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      if (mode === 'down') return req.socket.destroy();
      fakeStore(req, res, body);
    });
  });
  await new Promise<void>((resolve) => store.listen(0, '127.0.0.1', resolve));
  const address = store.address();
  storePort = typeof address === 'object' && address ? address.port : 0;
}

const lastSeen = (path: string): Seen | undefined => [...seen].reverse().find((s) => s.url.split('?')[0] === path);

beforeAll(async () => {
  await listen();
  d = await startTestDaemon({ outgoingAllowPrivateHosts: '127.0.0.1', koboStoreUrl: `http://127.0.0.1:${storePort}` });
  lib = makeTempLibrary();
  for (const title of ['Local One', 'Local Two']) await writeSimpleEpub(lib.path(`${title}.epub`), { title });
  const library = await createLibrary(d.store.db, { name: 'Main', paths: [lib.root] });
  await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  const reader = await d.createUser('reader', { canSyncKobo: true }, [library.id]);
  const settings = (await d.inject({ method: 'GET', url: '/api/v1/kobo-settings', headers: { authorization: `Bearer ${reader.token}` } })).json() as Json;
  token = settings.token as string;
  const shelf = await d.store.db.selectFrom('shelf').select('id').where('user_id', '=', reader.id).where('name', '=', 'Kobo').executeTakeFirstOrThrow();
  const books = await d.store.db.selectFrom('book').select('id').execute();
  await d.store.db.insertInto('book_shelf_mapping').values(books.map((b) => ({ book_id: b.id, shelf_id: shelf.id }))).execute();
  await d.app.listen({ port: 0, host: '127.0.0.1' });
  const address = d.app.server.address();
  origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  device = koboDevice(origin, token);
  device.bearer = 'device-bearer';
}, 120_000);

afterAll(async () => {
  await d?.close();
  await new Promise((resolve) => store?.close(resolve));
  lib?.cleanup();
});

beforeEach(() => {
  mode = 'up';
  seen = [];
});

describe('forwarding to the Kobo store', () => {
  it('initialization starts from the store’s resources and points ours back here', async () => {
    const res = await device.call('GET', '/v1/initialization');
    expect(res.status).toBe(200);
    expect(res.headers['x-kobo-apitoken']).toBe('e30=');
    const { Resources } = res.json() as { Resources: Json };
    expect(Resources.store_only_resource).toBe('https://store.example/only');
    expect(Resources.library_sync).toBe(`${origin}/api/kobo/${token}/v1/library/sync`);
    expect(Resources.image_host).toBe(origin);
    const call = lastSeen('/v1/initialization');
    expect(call?.url).toBe('/v1/initialization');
    expect(call?.headers.authorization).toBe('Bearer device-bearer');
    expect(call?.headers['x-kobo-deviceid']).toBe(DEVICE_HEADERS['x-kobo-deviceid']);
    expect(call?.headers['user-agent']).toBe(DEVICE_HEADERS['user-agent']);
  });

  it('relays device auth and the account calls, with only Kobo headers back', async () => {
    const auth = await device.call('POST', '/v1/auth/device', { body: { UserKey: 'uk', DeviceId: 'dev' } });
    expect(auth.json()).toMatchObject({ AccessToken: 'store-access', UserKey: 'uk' });
    expect(JSON.parse(lastSeen('/v1/auth/device')?.body ?? '{}')).toEqual({ UserKey: 'uk', DeviceId: 'dev' });
    const profile = await device.call('GET', '/v1/user/profile');
    expect(profile.json()).toEqual({ AffiliateName: 'Kobo', HasPurchased: true });
    expect(profile.headers['x-kobo-recent-reads']).toBe('yes');
    expect(profile.headers['x-store-internal']).toBeUndefined();
  });

  it('forwards unknown calls with the token stripped, the query as sent and the body', async () => {
    const get = await device.call('GET', '/v1/user/wishlist?PageSize=100&PageIndex=0&DiffRequests=[1,2]');
    expect(get.status).toBe(200);
    expect(get.json()).toEqual({ echoed: '/v1/user/wishlist?PageSize=100&PageIndex=0&DiffRequests=[1,2]', method: 'GET' });
    const post = await device.call('POST', '/v1/products/books/series/abc', { body: { Ids: ['x'] } });
    expect(post.json()).toMatchObject({ method: 'POST' });
    expect(JSON.parse(lastSeen('/v1/products/books/series/abc')?.body ?? '')).toEqual({ Ids: ['x'] });
    for (const s of seen) expect(s.url).not.toContain(token);
    const none = await device.call('DELETE', '/v1/nothing');
    expect(none.status).toBe(204);
    // Store books' metadata and state come from the store; ours never go there.
    expect((await device.call('GET', '/v1/library/store-book-1/metadata')).json()).toEqual([{ Title: 'Bought at Kobo', EntitlementId: 'store-book-1' }]);
    seen = [];
    const ours = await d.store.db.selectFrom('book').select('id').executeTakeFirstOrThrow();
    expect((await device.call('GET', `/v1/library/${ours.id}/metadata`)).status).toBe(200);
    expect(seen).toEqual([]);
  });

  it('sends covers of store books to Kobo’s CDN', async () => {
    const res = await device.call('GET', '/v1/books/00a1b2c3-store-image/thumbnail/150/200/85/true/image.jpg');
    expect(res.status).toBe(307);
    expect(res.headers.location).toBe('https://cdn.kobo.com/book-images/00a1b2c3-store-image/150/200/true/image.jpg');
  });

  it('merges the store’s entitlements into the last page and keeps the store’s sync token inside ours', async () => {
    const first = await device.call('GET', '/v1/library/sync');
    const items = first.json() as Json[];
    const ids = items.filter((i) => 'NewEntitlement' in i).map((i) => i.NewEntitlement.BookEntitlement.Id as string);
    expect(ids).toHaveLength(3);
    expect(ids).toContain('store-book-1');
    // Only entitlements are taken from the store.
    expect(items.filter((i) => 'ChangedReadingState' in i && i.ChangedReadingState.ReadingState.EntitlementId === 'store-book-1')).toEqual([]);
    expect(lastSeen('/v1/library/sync')?.headers['x-kobo-synctoken']).toBeUndefined();
    const token1 = first.headers['x-kobo-synctoken'] as string;
    const decoded = JSON.parse(Buffer.from(token1.slice('BOOKLORE.'.length), 'base64').toString('utf8')) as Json;
    expect(decoded.rawKoboSyncToken).toBe('first.round');
    expect(first.headers['x-kobo-sync']).toBe('');

    // The store has more: the device is told to continue, and the store gets its own token back.
    const second = await device.call('GET', '/v1/library/sync', { syncToken: token1 });
    expect(lastSeen('/v1/library/sync')?.headers['x-kobo-synctoken']).toBe('first.round');
    expect(second.headers['x-kobo-sync']).toBe('continue');
    const token2 = JSON.parse(Buffer.from((second.headers['x-kobo-synctoken'] as string).slice(9), 'base64').toString('utf8')) as Json;
    expect(token2).toMatchObject({ rawKoboSyncToken: 'second.round', ongoingSyncPointId: expect.any(String) });
  });

  it('answers locally, never with a 500, when the store is down, failing or talking nonsense', async () => {
    const lines: string[] = [];
    const built = await buildApp({ config: d.config, store: d.store, logger: { level: 'warn', stream: { write: (line: string) => void lines.push(line) } } });
    await built.app.ready();
    const call = (method: string, path: string, payload?: unknown) =>
      built.app.inject({ method: method as 'GET', url: `/api/kobo/${token}${path}`, headers: { ...DEVICE_HEADERS }, ...(payload === undefined ? {} : { payload: payload as Json }) });
    try {
      for (const failure of ['down', 'error', 'garbage'] as const) {
        mode = failure;
        const init = await call('GET', '/v1/initialization');
        expect(init.statusCode, failure).toBe(200);
        expect((init.json() as { Resources: Json }).Resources.library_sync).toMatch(new RegExp(`/api/kobo/${token}/v1/library/sync$`));
        expect(Object.keys((init.json() as { Resources: Json }).Resources).length).toBeGreaterThanOrEqual(185);
        const sync = await call('GET', '/v1/library/sync');
        expect(sync.statusCode, failure).toBe(200);
        expect((sync.json() as Json[]).filter((i) => 'NewEntitlement' in i)).toHaveLength(2);
        expect(sync.headers['x-kobo-sync']).toBe('');
        const auth = await call('POST', '/v1/auth/device', { UserKey: 'uk' });
        expect(auth.statusCode, failure).toBe(200);
        expect(auth.json()).toMatchObject({ TokenType: 'Bearer', UserKey: 'uk', AccessToken: expect.stringMatching(/^[A-Za-z0-9]{24}$/) });
        const profile = await call('GET', '/v1/user/profile');
        expect(profile.statusCode, failure).toBe(200);
        expect(profile.json()).toMatchObject({ PlatformId: '00000000-0000-0000-0000-000000000001' });
        expect((await call('GET', '/v1/deals')).json()).toEqual({ Deals: [] });
        expect((await call('GET', '/v1/library/store-book-1/metadata')).statusCode, failure).toBe(404);
        const other = await call('GET', '/v1/user/recommendations');
        expect([other.statusCode, other.body], failure).toEqual([200, '']);
      }
    } finally {
      await built.app.close();
    }
    expect(lines.some((line) => line.includes('Kobo store did not answer'))).toBe(true);
    expect(lines.join('\n')).not.toContain(token);
  });
});
