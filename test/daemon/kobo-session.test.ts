// A whole Kobo device session over real HTTP, in the order a device makes its calls (kobo-wire-reference.json):
// initialization, device auth, account calls, paged library sync, metadata, reading state both ways, download,
// covers, removal; and every response's status, headers and shape.
import { gunzipSync, gzipSync } from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { FIRST_LEVELS } from '../../src/daemon/compression.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { koboDevice, propertyNames, type DeviceResponse, type KoboDevice } from '../helpers/kobo-device.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const SHELF_BOOKS = 130;
const KOBO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let d: TestDaemon;
let lib: TempLibrary;
let origin: string;
let adminToken: string;
let reader: { id: number; token: string };
let koboToken: string;
let device: KoboDevice;
/** Book ids of the main library in title order (Book 0, Book 1, ...). */
let mainBooks: number[] = [];
let sideBooks: number[] = [];
let hiddenBook: number;
let koboShelf: number;
let lastToken: string;

const api = async (token: string, method: string, url: string, payload?: unknown): Promise<Json> => {
  const res = await d.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload: payload as Json }) });
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  return res.body ? (res.json() as Json) : {};
};

/** Every property name is UpperCamelCase, as in Kobo's store API. */
function expectKoboCasing(value: unknown): void {
  const wrong = [...propertyNames(value)].filter((name) => !/^[A-Z]/.test(name));
  expect(wrong).toEqual([]);
}

function decodeToken(header: string | string[] | undefined): Json {
  expect(typeof header).toBe('string');
  const value = header as string;
  expect(value.startsWith('BOOKLORE.')).toBe(true);
  expect(value).not.toMatch(/=$/);
  return JSON.parse(Buffer.from(value.slice('BOOKLORE.'.length), 'base64').toString('utf8')) as Json;
}

async function sync(token?: string): Promise<{ res: DeviceResponse; items: Json[]; token: string; more: boolean }> {
  const res = await device.call('GET', '/v1/library/sync?Filter=ALL&DownloadUrlFilter=Generic,Android&PrioritizeRecentReads=true', token ? { syncToken: token } : {});
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['x-kobo-sync']).toBeDefined();
  const items = res.json() as Json[];
  expect(Array.isArray(items)).toBe(true);
  expectKoboCasing(items);
  return { res, items, token: res.headers['x-kobo-synctoken'] as string, more: res.headers['x-kobo-sync'] === 'continue' };
}

/** Syncs until the server stops saying `continue`; every page holds at most 100 books. */
async function syncAll(token?: string): Promise<{ pages: Json[][]; token: string }> {
  const pages: Json[][] = [];
  let current = token;
  for (let i = 0; i < 20; i++) {
    const page = await sync(current);
    const books = page.items.filter((item) => 'NewEntitlement' in item || 'ChangedEntitlement' in item || 'ChangedProductMetadata' in item);
    expect(books.length).toBeLessThanOrEqual(100);
    pages.push(page.items);
    current = page.token;
    if (!page.more) {
      expect(page.res.headers['x-kobo-sync']).toBe('');
      return { pages, token: current };
    }
  }
  throw new Error('sync never finished');
}

const kinds = (items: Json[], kind: string): Json[] => items.filter((item) => kind in item).map((item) => item[kind] as Json);

function unzipEntries(data: Buffer): Promise<{ names: string[]; read(name: string): Promise<string> }> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(data, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('no zip'));
      const entries: yauzl.Entry[] = [];
      zip.on('entry', (e: yauzl.Entry) => {
        entries.push(e);
        zip.readEntry();
      });
      zip.on('end', () =>
        resolve({
          names: entries.map((e) => e.fileName),
          read: (name) =>
            new Promise((res, rej) => {
              const entry = entries.find((e) => e.fileName === name);
              if (!entry) return rej(new Error(`no ${name}`));
              zip.openReadStream(entry, (e2, stream) => {
                if (e2 || !stream) return rej(e2 ?? new Error('no stream'));
                const chunks: Buffer[] = [];
                stream.on('data', (c: Buffer) => chunks.push(c));
                stream.on('end', () => res(Buffer.concat(chunks).toString('utf8')));
              });
            }),
        }),
      );
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

beforeAll(async () => {
  d = await startTestDaemon();
  lib = makeTempLibrary();
  for (let i = 0; i < SHELF_BOOKS; i++) {
    await writeSimpleEpub(lib.path('main', `book-${String(i).padStart(3, '0')}.epub`), {
      title: `Book ${i}`,
      authors: [`Author ${i % 7}`],
      cover: i < 3 ? '#8a4' : undefined,
      body: `Chapter text of book ${i}. It has two sentences! And a third?`,
      ...(i === 0 ? { series: 'Saga', seriesIndex: 2 } : {}),
    });
  }
  for (const name of ['side-a', 'side-b']) await writeSimpleEpub(lib.path('side', `${name}.epub`), { title: name });
  await writeSimpleEpub(lib.path('private', 'secret.epub'), { title: 'Secret' });
  const main = await createLibrary(d.store.db, { name: 'Main', paths: [lib.path('main')] });
  const side = await createLibrary(d.store.db, { name: 'Side', paths: [lib.path('side')] });
  const priv = await createLibrary(d.store.db, { name: 'Private', paths: [lib.path('private')] });
  for (const library of [main, side, priv]) await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  const ids = async (libraryId: number): Promise<number[]> => (await d.store.db.selectFrom('book').select('id').where('library_id', '=', libraryId).orderBy('id').execute()).map((r) => r.id);
  const titled = await d.store.db.selectFrom('book').innerJoin('book_metadata', 'book_metadata.book_id', 'book.id').select(['book.id', 'book_metadata.title']).where('book.library_id', '=', main.id).execute();
  mainBooks = titled.sort((a, b) => Number(a.title?.slice(5)) - Number(b.title?.slice(5))).map((r) => r.id);
  expect(mainBooks).toHaveLength(SHELF_BOOKS);
  sideBooks = await ids(side.id);
  [hiddenBook] = (await ids(priv.id)) as [number];

  adminToken = await d.setupAdmin();
  reader = await d.createUser('reader', { canSyncKobo: true }, [main.id, side.id]);
  await api(adminToken, 'PUT', '/api/v1/settings', [{ name: 'KOBO_SETTINGS', value: { convertToKepub: true, conversionLimitInMb: 100, convertCbxToEpub: false, conversionLimitInMbForCbx: 100, forceEnableHyphenation: false, conversionImageCompressionPercentage: 85, forwardToKoboStore: false } }]);
  await d.app.listen({ port: 0, host: '127.0.0.1' });
  const address = d.app.server.address();
  origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}, 180_000);

afterAll(async () => {
  await d?.close();
  lib?.cleanup();
});

describe('Kobo settings (web UI)', () => {
  it('creates the settings, a device token and the Kobo shelf on first read', async () => {
    const settings = await api(reader.token, 'GET', '/api/v1/kobo-settings');
    expect(Object.keys(settings).sort()).toEqual(
      ['autoAddToShelf', 'hardcoverApiKey', 'hardcoverSyncEnabled', 'id', 'progressMarkAsFinishedThreshold', 'progressMarkAsReadingThreshold', 'syncEnabled', 'token', 'twoWayProgressSync', 'userId'].sort(),
    );
    expect(settings).toMatchObject({ userId: String(reader.id), syncEnabled: false, progressMarkAsReadingThreshold: 1, progressMarkAsFinishedThreshold: 99, autoAddToShelf: false, twoWayProgressSync: false, hardcoverSyncEnabled: false });
    expect(settings.token).toMatch(UUID);
    const shelves = (await api(reader.token, 'GET', '/api/v1/shelves')) as unknown as Json[];
    const shelf = shelves.find((s) => s.name === 'Kobo');
    expect(shelf).toMatchObject({ icon: 'tablet', iconType: 'LUCIDE' });
    koboShelf = shelf?.id as number;
  });

  it('renews the token and saves the switches and thresholds', async () => {
    const before = await api(reader.token, 'GET', '/api/v1/kobo-settings');
    const renewed = await api(reader.token, 'PUT', '/api/v1/kobo-settings/token');
    expect(renewed.token).toMatch(UUID);
    expect(renewed.token).not.toBe(before.token);
    const saved = await api(reader.token, 'PUT', '/api/v1/kobo-settings', { syncEnabled: true, twoWayProgressSync: true, progressMarkAsReadingThreshold: 5, progressMarkAsFinishedThreshold: 95 });
    expect(saved).toMatchObject({ syncEnabled: true, twoWayProgressSync: true, progressMarkAsReadingThreshold: 5, progressMarkAsFinishedThreshold: 95, token: renewed.token });
    koboToken = saved.token as string;
    device = koboDevice(origin, koboToken);
    const bad = await d.inject({ method: 'PUT', url: '/api/v1/kobo-settings', headers: { authorization: `Bearer ${reader.token}` }, payload: { syncEnabled: 'yes' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ status: 400, message: 'Validation error' });
  });

  it('puts the books on the Kobo shelf and another shelf', async () => {
    await api(reader.token, 'POST', '/api/v1/books/shelves', { bookIds: [...mainBooks, ...sideBooks], shelvesToAssign: [koboShelf], shelvesToUnassign: [] });
    const other = await api(reader.token, 'POST', '/api/v1/shelves', { name: 'Favourites', icon: 'heart', iconType: 'LUCIDE' });
    await api(reader.token, 'POST', '/api/v1/books/shelves', { bookIds: mainBooks.slice(0, 2), shelvesToAssign: [other.id], shelvesToUnassign: [] });
    // A book the reader cannot see, put on their shelf behind their back: it must never reach the device.
    await d.store.db.insertInto('book_shelf_mapping').values({ book_id: hiddenBook, shelf_id: koboShelf }).execute();
  });
});

describe('a device session', () => {
  it('initialization points the resources this server serves back at it', async () => {
    const res = await device.call('GET', '/v1/initialization');
    expect(res.status).toBe(200);
    expect(res.headers['x-kobo-apitoken']).toBe('e30=');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const { Resources } = res.json() as { Resources: Json };
    expect(Object.keys(Resources).length).toBeGreaterThanOrEqual(185);
    const koboBase = `${origin}/api/kobo/${koboToken}`;
    expect(Resources).toMatchObject({
      library_sync: `${koboBase}/v1/library/sync`,
      library_metadata: `${koboBase}/v1/library/{Ids}/metadata`,
      reading_state: `${koboBase}/v1/library/{Ids}/state`,
      delete_entitlement: `${koboBase}/v1/library/{Ids}`,
      get_tests_request: `${koboBase}/v1/analytics/gettests`,
      post_analytics_event: `${koboBase}/v1/analytics/event`,
      user_profile: `${koboBase}/v1/user/profile`,
      user_ratings: `${koboBase}/v1/products/{ProductId}/rating/{Rating}`,
      deals: `${koboBase}/v1/deals`,
      library_book: `${koboBase}/v1/user/library/books/{LibraryItemId}`,
      library_search: `${koboBase}/v1/library/search`,
      image_host: origin,
      image_url_template: `${koboBase}/v1/books/{ImageId}/thumbnail/{Width}/{Height}/false/image.jpg`,
      image_url_quality_template: `${koboBase}/v1/books/{ImageId}/thumbnail/{Width}/{Height}/{Quality}/{IsGreyscale}/image.jpg`,
    });
    // Store resources nobody here serves stay the store's.
    expect(Resources.store_home).toBe('www.kobo.com/{region}/{language}');
    expect(Resources.reading_services_host).toBe('https://readingservices.kobo.com');
  });

  it('initialization honours a trusted reverse proxy', async () => {
    const behind = await startTestDaemon({ trustProxy: true, basePath: '/books' });
    try {
      const settings = await behind.store.db.insertInto('users').values({ username: 'k', password_hash: 'x', name: 'k' }).returning('id').executeTakeFirstOrThrow();
      await behind.store.db.insertInto('user_permissions').values({ user_id: settings.id, permission_sync_kobo: 1 }).execute();
      await behind.store.db.insertInto('kobo_user_settings').values({ user_id: settings.id, token: 'proxy-token', sync_enabled: 1 }).execute();
      const res = await behind.inject({ method: 'GET', url: '/books/api/kobo/proxy-token/v1/initialization', headers: { host: 'internal:6060', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'books.example.org', 'x-forwarded-port': '8443' } });
      expect(res.statusCode).toBe(200);
      const { Resources } = res.json() as { Resources: Json };
      expect(Resources.image_host).toBe('https://books.example.org:8443');
      expect(Resources.library_sync).toBe('https://books.example.org:8443/books/api/kobo/proxy-token/v1/library/sync');
    } finally {
      await behind.close();
    }
  });

  it('device auth answers tokens and echoes the user key; without one it is a bad request', async () => {
    const res = await device.call('POST', '/v1/auth/device', { body: { AffiliateName: 'Kobo', AppVersion: '4.38.21908', ClientKey: 'abc', DeviceId: 'dev', PlatformId: '00000000-0000-0000-0000-000000000388', SerialNumber: 'N1', UserKey: 'user-key-1' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const auth = res.json() as Json;
    expect(Object.keys(auth)).toEqual(['AccessToken', 'RefreshToken', 'TokenType', 'TrackingId', 'UserKey']);
    expect(auth).toMatchObject({ AccessToken: expect.stringMatching(/^[A-Za-z0-9]{24}$/), RefreshToken: expect.stringMatching(/^[A-Za-z0-9]{24}$/), TokenType: 'Bearer', TrackingId: expect.stringMatching(UUID), UserKey: 'user-key-1' });
    device.bearer = auth.AccessToken as string;
    const bad = await device.call('POST', '/v1/auth/device', { body: { DeviceId: 'dev' } });
    expect(bad.status).toBe(400);
  });

  it('answers the account calls locally', async () => {
    const profile = await device.call('GET', '/v1/user/profile');
    expect(profile.status).toBe(200);
    expect(profile.json()).toMatchObject({ AffiliateName: expect.any(String), PlatformId: '00000000-0000-0000-0000-000000000001', PrivatePermissions: [], LinkedAccounts: [] });
    expectKoboCasing(profile.json());
    const loyalty = await device.call('GET', '/v1/user/loyalty/benefits');
    expect([loyalty.status, loyalty.body.length]).toEqual([200, 0]);
    const deals = await device.call('GET', '/v1/deals');
    expect(deals.json()).toEqual({ Deals: [] });
    // The firmware's raw brackets in a query string.
    const assets = await device.call('GET', '/v1/assets?DiffRequests=[{"Key":"x","LastModified":"2020-01-01T00:00:00Z"}]');
    expect(assets.status).toBe(200);
    const tests = await device.call('POST', '/v1/analytics/gettests', { body: { TestKey: 'k' } });
    expect(tests.status).toBe(200);
    expect(tests.json()).toMatchObject({ Result: 'Success', TestKey: expect.stringMatching(/^[A-Za-z0-9]{24}$/) });
  });

  it('syncs the shelf in pages of at most 100 with continue, a sync token and shelf tags at the end', async () => {
    const first = await sync();
    expect(first.more).toBe(true);
    expect(first.res.headers['x-kobo-sync']).toBe('continue');
    const t1 = decodeToken(first.token);
    // Mid-session the token also says how far the device has come (the last book id of the first page).
    expect(t1).toEqual({ ongoingSyncPointId: expect.stringMatching(UUID), lastSuccessfulSyncPointId: null, rawKoboSyncToken: null, position: expect.stringMatching(/^A\d+$/) });
    const firstBooks = kinds(first.items, 'NewEntitlement');
    expect(firstBooks).toHaveLength(100);
    // No states or tags before the last page.
    expect(kinds(first.items, 'ChangedTag')).toHaveLength(0);

    const second = await sync(first.token);
    expect(second.more).toBe(false);
    expect(second.res.headers['x-kobo-sync']).toBe('');
    // The device retries the second page (its answer lost): the same books again, gzip-compressed at the fast level
    // as real devices ask (Accept-Encoding: gzip).
    const retried = await device.call('GET', '/v1/library/sync?Filter=ALL&DownloadUrlFilter=Generic,Android&PrioritizeRecentReads=true', { syncToken: first.token, headers: { 'accept-encoding': 'gzip, deflate' } });
    expect(retried.headers['content-encoding']).toBe('gzip');
    const unzipped = gunzipSync(retried.body);
    expect(retried.body).toEqual(gzipSync(unzipped, FIRST_LEVELS.gzip));
    const ids = (items: Json[]): string[] => kinds(items, 'NewEntitlement').map((e) => e.BookEntitlement.Id as string);
    expect(ids(JSON.parse(unzipped.toString('utf8')) as Json[])).toEqual(ids(second.items));
    const t2 = decodeToken(second.token);
    // A finished session's token has exactly Grimmory's three fields.
    expect(t2).toEqual({ ongoingSyncPointId: null, lastSuccessfulSyncPointId: t1.ongoingSyncPointId, rawKoboSyncToken: null });
    const secondBooks = kinds(second.items, 'NewEntitlement');
    expect(secondBooks).toHaveLength(SHELF_BOOKS + sideBooks.length - 100);
    const synced = new Set([...firstBooks, ...secondBooks].map((e) => Number(e.BookEntitlement.Id)));
    expect(synced).toEqual(new Set([...mainBooks, ...sideBooks]));
    expect(synced.has(hiddenBook)).toBe(false);
    const entitlement = [...firstBooks, ...secondBooks].find((e) => Number(e.BookEntitlement.Id) === mainBooks[0]) as Json;
    expect(Object.keys(entitlement)).toEqual(['BookEntitlement', 'BookMetadata', 'ReadingState']);
    const id = entitlement.BookEntitlement.Id as string;
    expect(entitlement.BookEntitlement).toEqual({
      ActivePeriod: { From: expect.stringMatching(KOBO_TIME) },
      IsRemoved: false,
      Status: 'Active',
      Accessibility: 'Full',
      CrossRevisionId: id,
      RevisionId: id,
      IsHiddenFromArchive: false,
      Id: id,
      Created: expect.stringMatching(KOBO_TIME),
      LastModified: expect.stringMatching(KOBO_TIME),
      IsLocked: false,
      OriginCategory: 'Imported',
    });
    const meta = entitlement.BookMetadata as Json;
    expect(Object.keys(meta)).toEqual([
      'CrossRevisionId', 'RevisionId', 'Publisher', 'PublicationDate', 'Language', 'Isbn', 'Genre', 'Slug', 'CoverImageId', 'IsSocialEnabled', 'WorkId',
      'ExternalIds', 'IsPreOrder', 'ContributorRoles', 'IsInternetArchive', 'EntitlementId', 'Title', 'Description', 'Categories', 'DownloadUrls',
      'Contributors', 'Series', 'CurrentDisplayPrice', 'CurrentLoveDisplayPrice', 'IsEligibleForKoboLove', 'PhoneticPronunciations',
    ]);
    expect(meta).toMatchObject({ EntitlementId: id, WorkId: id, Title: 'Book 0', Language: 'en', Contributors: ['Author 0'], Categories: ['00000000-0000-0000-0000-000000000001'], CurrentDisplayPrice: { TotalAmount: 0, CurrencyCode: 'USD' }, IsEligibleForKoboLove: false });
    expect(meta.Series).toMatchObject({ Name: 'Saga', Number: '2', NumberFloat: 2, Id: expect.stringMatching(/^series_-?\d+$/) });
    expect(meta.CoverImageId).toMatch(/^BL-[0-9A-Z]{13}$/);
    expect(meta.DownloadUrls).toEqual([{ DrmType: 'None', Format: 'KEPUB', Url: `${origin}/api/kobo/${koboToken}/v1/books/${id}/download`, Size: expect.any(Number), Platform: 'Generic' }]);
    // The size announced is that of the KEPUB the download sends, not of the source EPUB.
    const sent = await device.call('GET', `/v1/books/${id}/download`);
    expect(sent.status).toBe(200);
    expect((meta.DownloadUrls as Json[])[0]?.Size).toBe(sent.body.length);
    expect(Object.keys(entitlement.ReadingState as Json)).toEqual(['EntitlementId', 'Created', 'LastModified', 'StatusInfo', 'Statistics', 'CurrentBookmark', 'PriorityTimestamp']);
    expect(entitlement.ReadingState).toMatchObject({ EntitlementId: id, StatusInfo: { Status: 'ReadyToRead', TimesStartedReading: 0 }, CurrentBookmark: { LastModified: expect.stringMatching(KOBO_TIME) } });

    // The empty default shelf is deleted from the device, the other one holds its books.
    expect(kinds(second.items, 'DeletedTag')).toEqual([{ Tag: { Id: expect.stringMatching(/^BL-S-\d+$/) } }]);
    const tags = kinds(second.items, 'ChangedTag').map((t) => t.Tag as Json);
    expect(tags).toEqual([{ Id: expect.stringMatching(/^BL-S-\d+$/), Name: 'Favourites', Type: 'UserTag', Items: mainBooks.slice(0, 2).sort((a, b) => a - b).map((b) => ({ RevisionId: String(b), Type: 'ProductRevisionTagItem' })) }]);

    const again = await sync(second.token);
    expect(again.items.map((item) => Object.keys(item)[0])).toEqual(['DeletedTag', 'ChangedTag']);
    expect(decodeToken(again.token).lastSuccessfulSyncPointId).toEqual(expect.stringMatching(UUID));
    lastToken = again.token;
  });

  it('unreadable tokens mean a full sync', async () => {
    const res = await device.call('GET', '/v1/library/sync', { syncToken: 'not a token' });
    expect(res.status).toBe(200);
    expect(res.headers['x-kobo-sync']).toBe('continue');
    expect(kinds(res.json() as Json[], 'NewEntitlement')).toHaveLength(100);
  });

  it('metadata is a one-element array; unknown, hidden and store ids are refused', async () => {
    const id = mainBooks[5] as number;
    const res = await device.call('GET', `/v1/library/${id}/metadata`);
    expect(res.status).toBe(200);
    const list = res.json() as Json[];
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ EntitlementId: String(id), Title: 'Book 5' });
    expect((await device.call('GET', '/v1/library/999999/metadata')).status).toBe(404);
    expect((await device.call('GET', `/v1/library/${hiddenBook}/metadata`)).status).toBe(403);
    expect((await device.call('GET', '/v1/library/a1b2-store-book/metadata')).status).toBe(404);
  });

  it('takes reading state from the device: progress, location and status with the user thresholds', async () => {
    const id = mainBooks[10] as number;
    expect((await device.call('GET', `/v1/library/${id}/state`)).json()).toEqual([]);
    const put = (percent: number, at: string): Promise<DeviceResponse> =>
      device.call('PUT', `/v1/library/${id}/state`, {
        body: {
          ReadingStates: [
            {
              EntitlementId: String(id),
              Created: '2025-01-01T00:00:00.0000000Z',
              LastModified: at,
              PriorityTimestamp: at,
              StatusInfo: { LastModified: at, Status: 'Reading', TimesStartedReading: 1, LastTimeStartedReading: '2025-01-02T09:00:00.0000000Z' },
              Statistics: { LastModified: at, SpentReadingMinutes: 12, RemainingTimeMinutes: 300 },
              CurrentBookmark: { LastModified: at, ProgressPercent: percent, ContentSourceProgressPercent: 40, Location: { Value: 'kobo.12.3', Type: 'KoboSpan', Source: 'OEBPS/ch1.xhtml' } },
            },
          ],
        },
      });
    const res = await put(50, '2025-01-02T10:00:00.0000000Z');
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ RequestResult: 'Success', UpdateResults: [{ EntitlementId: String(id), CurrentBookmarkResult: { Result: 'Success' }, StatisticsResult: { Result: 'Success' }, StatusInfoResult: { Result: 'Success' } }] });
    let book = await api(reader.token, 'GET', `/api/v1/books/${id}`);
    expect(book.koboProgress).toEqual({ percentage: 50 });
    expect(book.readStatus).toBe('READING');

    const state = (await device.call('GET', `/v1/library/${id}/state`)).json() as Json[];
    expect(state).toHaveLength(1);
    expect(state[0]).toMatchObject({ EntitlementId: String(id), CurrentBookmark: { ProgressPercent: 50, Location: { Value: 'kobo.12.3', Type: 'KoboSpan', Source: 'OEBPS/ch1.xhtml' } }, StatusInfo: { Status: 'Reading' } });
    expectKoboCasing(state);

    // An older bookmark does not replace a newer one.
    await put(20, '2025-01-01T10:00:00.0000000Z');
    expect(((await device.call('GET', `/v1/library/${id}/state`)).json() as Json[])[0]?.CurrentBookmark.ProgressPercent).toBe(50);

    // 95 % is "finished" for this user (default would be 99).
    await put(96, '2025-01-03T10:00:00.0000000Z');
    book = await api(reader.token, 'GET', `/api/v1/books/${id}`);
    expect(book.readStatus).toBe('READ');
    expect(book.dateFinished).toEqual(expect.any(String));

    // Partial bodies and a zero percent are accepted.
    const partial = await device.call('PUT', `/v1/library/${mainBooks[11]}/state`, { body: { ReadingStates: [{ EntitlementId: `"${mainBooks[11]}"`, StatusInfo: { Status: 'ReadyToRead' } }] } });
    expect(partial.status).toBe(200);
    const zero = await device.call('PUT', `/v1/library/${mainBooks[11]}/state`, { body: { ReadingStates: [{ EntitlementId: String(mainBooks[11]), CurrentBookmark: { ProgressPercent: 0, LastModified: '2025-02-01T00:00:00Z' } }] } });
    expect(zero.status).toBe(200);
    expect((await api(reader.token, 'GET', `/api/v1/books/${mainBooks[11]}`)).koboProgress).toEqual({ percentage: 0 });
    // A hidden book is refused as the metadata and download routes refuse it, and nothing is written.
    const hidden = await device.call('PUT', `/v1/library/${hiddenBook}/state`, { body: { ReadingStates: [{ EntitlementId: String(hiddenBook), CurrentBookmark: { ProgressPercent: 70 } }] } });
    expect(hidden.status).toBe(403);
    expect((await device.call('GET', `/v1/library/${hiddenBook}/metadata`)).status).toBe(403);
    // Also when the hidden book is named in the body of a visible book's path.
    const smuggled = await device.call('PUT', `/v1/library/${mainBooks[11]}/state`, { body: { ReadingStates: [{ EntitlementId: String(hiddenBook), CurrentBookmark: { ProgressPercent: 70 } }] } });
    expect(smuggled.status).toBe(403);
    expect(await d.store.db.selectFrom('user_book_progress').select('id').where('book_id', '=', hiddenBook).executeTakeFirst()).toBeUndefined();
    expect((await device.call('PUT', `/v1/library/${id}/state`, { body: [] })).status).toBe(400);
  });

  it('takes a device’s Finished as read on its date, ReadyToRead as unread, and ignores the first-resource bookmark of a finished book', async () => {
    const id = mainBooks[12] as number;
    const state = (status: string, at: string, bookmark: Json, extra: Json = {}): Promise<DeviceResponse> =>
      device.call('PUT', `/v1/library/${id}/state`, {
        body: { ReadingStates: [{ EntitlementId: String(id), LastModified: at, StatusInfo: { LastModified: at, Status: status, ...extra }, CurrentBookmark: { LastModified: at, ...bookmark } }] },
      });
    await state('Reading', '2025-03-01T10:00:00.0000000Z', { ProgressPercent: 60, ContentSourceProgressPercent: 30, Location: { Value: 'kobo.40.2', Type: 'KoboSpan', Source: 'OEBPS/ch1.xhtml' } });
    expect((await api(reader.token, 'GET', `/api/v1/books/${id}`)).readStatus).toBe('READING');
    // What a Kobo sends when the reader reaches the end: status Finished, the bookmark back at the first resource.
    const finished = await state('Finished', '2025-03-02T21:30:00.0000000Z', { ProgressPercent: 0, ContentSourceProgressPercent: 0, Location: { Value: 'kobo.1.1', Type: 'KoboSpan', Source: 'OEBPS/cover.xhtml' } }, {
      TimesStartedReading: 1,
      LastTimeFinished: '2025-03-02T21:30:00.0000000Z',
    });
    expect(finished.status).toBe(200);
    let book = await api(reader.token, 'GET', `/api/v1/books/${id}`);
    expect(book.readStatus).toBe('READ');
    expect(book.dateFinished).toBe('2025-03-02T21:30:00.000Z');
    expect(book.koboProgress).toEqual({ percentage: 100 });
    const progress = await d.store.db.selectFrom('user_book_progress').select(['kobo_location', 'kobo_location_source']).where('book_id', '=', id).executeTakeFirstOrThrow();
    expect(progress).toEqual({ kobo_location: 'kobo.40.2', kobo_location_source: 'OEBPS/ch1.xhtml' });
    // "Mark as unread" on the device.
    await state('ReadyToRead', '2025-03-05T08:00:00.0000000Z', { ProgressPercent: 0 }, { TimesStartedReading: 0 });
    book = await api(reader.token, 'GET', `/api/v1/books/${id}`);
    expect(book.readStatus).toBe('UNREAD');
  });

  it('sends web reading progress and status changes in the next sync', async () => {
    const web = mainBooks[20] as number;
    const marked = mainBooks[21] as number;
    const res = await d.inject({ method: 'POST', url: '/api/v1/books/progress', headers: { authorization: `Bearer ${reader.token}` }, payload: { bookId: web, epubProgress: { cfi: 'epubcfi(/6/2!/4/2/1:0)', href: 'OEBPS/ch1.xhtml', percentage: 42 } } });
    expect(res.statusCode).toBe(204);
    await api(reader.token, 'POST', '/api/v1/books/status', { bookIds: [marked], status: 'READ' });
    const { pages, token } = await syncAll(lastToken);
    const states = pages.flatMap((items) => kinds(items, 'ChangedReadingState')).map((s) => s.ReadingState as Json);
    const byId = new Map(states.map((s) => [s.EntitlementId as string, s]));
    expect(byId.get(String(web))).toMatchObject({ CurrentBookmark: { ProgressPercent: 42 }, StatusInfo: { Status: 'Reading', TimesStartedReading: 1 } });
    expect(byId.get(String(marked))).toMatchObject({ StatusInfo: { Status: 'Finished', LastTimeFinished: expect.stringMatching(KOBO_TIME) } });
    // The device's own report comes back once, as Kobo's store echoes it.
    expect(byId.get(String(mainBooks[10]))).toMatchObject({ CurrentBookmark: { ProgressPercent: 96 }, StatusInfo: { Status: 'Finished' } });
    for (const state of states) expect(state).toMatchObject({ Created: expect.stringMatching(KOBO_TIME), LastModified: expect.stringMatching(KOBO_TIME), PriorityTimestamp: expect.stringMatching(KOBO_TIME) });
    // Sent once only.
    const again = await sync(token);
    expect(kinds(again.items, 'ChangedReadingState')).toHaveLength(0);
    lastToken = again.token;
  });

  it('downloads a KEPUB, after checking the book is the user’s', async () => {
    const id = mainBooks[1] as number;
    const res = await device.call('GET', `/v1/books/${id}/download`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(Number(res.headers['content-length'])).toBe(res.body.length);
    expect(res.headers['content-disposition']).toMatch(/\.kepub\.epub"$/);
    const zip = await unzipEntries(res.body);
    expect(zip.names[0]).toBe('mimetype');
    expect(await zip.read('mimetype')).toBe('application/epub+zip');
    const chapter = await zip.read('OEBPS/ch1.xhtml');
    expect(chapter).toContain('<span class="koboSpan" id="kobo.1.1">Chapter text of book 1. </span>');
    expect(chapter).toContain('<div id="book-columns"><div id="book-inner">');
    const [metadata] = (await device.call('GET', `/v1/library/${id}/metadata`)).json() as Json[];
    expect((metadata?.DownloadUrls as Json[])[0]?.Size).toBe(res.body.length);
    expect((await device.call('GET', `/v1/books/${hiddenBook}/download`)).status).toBe(403);
    expect((await device.call('GET', '/v1/books/999999/download')).status).toBe(404);
    expect((await device.call('GET', '/v1/books/store-book/download')).status).toBe(404);
  });

  it('places a web-reader position at a sentence of the downloaded KEPUB (two-way sync)', async () => {
    const id = mainBooks[1] as number;
    const file = await d.store.db.selectFrom('book_file').select('id').where('book_id', '=', id).executeTakeFirstOrThrow();
    const res = await d.inject({
      method: 'POST',
      url: '/api/v1/books/progress',
      headers: { authorization: `Bearer ${reader.token}` },
      payload: { bookId: id, fileProgress: { bookFileId: file.id, positionData: 'epubcfi(/6/2!/4/2/1:40)', positionHref: 'ch1.xhtml', progressPercent: 90, contentSourceProgressPercent: 90 } },
    });
    expect(res.statusCode).toBe(204);
    const { pages, token } = await syncAll(lastToken);
    const state = pages.flatMap((items) => kinds(items, 'ChangedReadingState')).map((s) => s.ReadingState as Json).find((s) => s.EntitlementId === String(id));
    expect(state?.CurrentBookmark).toEqual({ LastModified: expect.stringMatching(KOBO_TIME), ProgressPercent: 90, ContentSourceProgressPercent: 90, Location: { Value: 'kobo.1.3', Type: 'KoboSpan', Source: 'OEBPS/ch1.xhtml' } });
    const direct = (await device.call('GET', `/v1/library/${id}/state`)).json() as Json[];
    expect(direct[0]?.CurrentBookmark.Location).toEqual({ Value: 'kobo.1.3', Type: 'KoboSpan', Source: 'OEBPS/ch1.xhtml' });
    lastToken = token;
  });

  it('serves covers at the requested size, greyscale when asked', async () => {
    const meta = ((await device.call('GET', `/v1/library/${mainBooks[0]}/metadata`)).json() as Json[])[0] as Json;
    const imageId = meta.CoverImageId as string;
    const colour = await device.call('GET', `/v1/books/${imageId}/thumbnail/120/180/false/image.jpg`);
    expect(colour.status).toBe(200);
    expect(colour.headers['content-type']).toBe('image/jpeg');
    const info = await sharp(colour.body).metadata();
    expect(info.width).toBeLessThanOrEqual(120);
    expect(info.height).toBeLessThanOrEqual(180);
    expect(Math.max(info.width ?? 0, info.height ?? 0)).toBeGreaterThanOrEqual(119);
    const grey = await device.call('GET', `/v1/books/${imageId}/thumbnail/120/180/85/true/image.jpg`);
    expect(grey.status).toBe(200);
    expect((await sharp(grey.body).metadata()).channels).toBe(1);
    const versioned = await device.call('GET', `/v1/books/${imageId}/v2/thumbnail/60/90/false/image.jpg`);
    expect((await sharp(versioned.body).metadata()).height).toBeLessThanOrEqual(90);
    expect((await device.call('GET', `/v1/books/${imageId}/v2/thumbnail/60/90/85/true/image.jpg`)).status).toBe(200);
    expect((await device.call('GET', '/v1/books/BL-0000000000000/thumbnail/60/90/false/image.jpg')).status).toBe(404);
    expect((await device.call('GET', '/v1/books/store-image-id/thumbnail/60/90/false/image.jpg')).status).toBe(404);
  });

  it('rates, and answers the small calls', async () => {
    const id = mainBooks[3] as number;
    const rated = await device.call('POST', `/v1/products/${id}/rating/4`);
    expect([rated.status, rated.body.length]).toEqual([200, 0]);
    expect((await api(reader.token, 'GET', `/api/v1/books/${id}`)).personalRating).toBe(8);
    expect((await device.call('POST', `/v1/products/${hiddenBook}/rating/4`)).status).toBe(404);
    expect((await device.call('POST', `/v1/products/${id}/nextread`)).status).toBe(200);
    const event = await device.call('POST', '/v1/analytics/event', { body: { Events: [] } });
    expect([event.status, event.body.length]).toEqual([200, 0]);
  });

  it('removes books deleted on the device, taken off the shelf or no longer visible', async () => {
    const deletedOnDevice = mainBooks[30] as number;
    const unshelved = mainBooks[31] as number;
    const del = await device.call('DELETE', `/v1/library/${deletedOnDevice}`);
    expect([del.status, del.body.length]).toEqual([200, 0]);
    const onShelf = (await d.store.db.selectFrom('book_shelf_mapping').select('book_id').where('shelf_id', '=', koboShelf).execute()).map((r) => r.book_id);
    expect(onShelf).not.toContain(deletedOnDevice);
    await api(reader.token, 'POST', '/api/v1/books/shelves', { bookIds: [unshelved], shelvesToAssign: [], shelvesToUnassign: [koboShelf] });
    // The reader loses the Side library.
    const side = await d.store.db.selectFrom('book').select('library_id').where('id', '=', sideBooks[0] as number).executeTakeFirstOrThrow();
    await d.store.db.deleteFrom('user_library_mapping').where('user_id', '=', reader.id).where('library_id', '=', side.library_id).execute();

    const { pages, token } = await syncAll(lastToken);
    const removed = pages.flatMap((items) => kinds(items, 'ChangedEntitlement'));
    expect(removed.map((r) => Number(r.BookEntitlement.Id)).sort((a, b) => a - b)).toEqual([deletedOnDevice, unshelved, ...sideBooks].sort((a, b) => a - b));
    for (const r of removed) {
      expect(r.BookEntitlement.IsRemoved).toBe(true);
      expect(r.BookMetadata).toMatchObject({ Title: r.BookEntitlement.Id, EntitlementId: r.BookEntitlement.Id, DownloadUrls: [] });
    }
    expect(pages.flatMap((items) => kinds(items, 'NewEntitlement'))).toHaveLength(0);
    // Nothing is removed twice.
    expect(kinds((await sync(token)).items, 'ChangedEntitlement')).toHaveLength(0);
    // The side book is gone for the device, and its state and download with it.
    expect((await device.call('GET', `/v1/books/${sideBooks[0]}/download`)).status).toBe(403);
  });

  it('refuses tokens that name nobody, and users without the Kobo sync permission', async () => {
    const unknown = await koboDevice(origin, 'not-a-token').call('GET', '/v1/library/sync');
    expect(unknown.status).toBe(401);
    expect(unknown.json()).toEqual({ timestamp: expect.any(String), status: 401, error: 'Unauthorized', path: '/api/kobo/not-a-token/v1/library/sync' });
    const revoked = await d.createUser('revoked', { canSyncKobo: true }, []);
    const settings = await api(revoked.token, 'GET', '/api/v1/kobo-settings');
    await d.store.db.updateTable('user_permissions').set({ permission_sync_kobo: 0 }).where('user_id', '=', revoked.id).execute();
    const refused = await koboDevice(origin, settings.token as string).call('GET', '/v1/initialization');
    expect(refused.status).toBe(403);
    expect(refused.json()).toMatchObject({ status: 403, error: 'Forbidden' });
    // The JWT side refuses them too.
    expect((await d.inject({ method: 'GET', url: '/api/v1/kobo-settings', headers: { authorization: `Bearer ${revoked.token}` } })).statusCode).toBe(403);
  });
});
