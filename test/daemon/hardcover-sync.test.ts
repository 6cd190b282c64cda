// Hardcover progress sync end to end, against a fake Hardcover GraphQL API on 127.0.0.1 (test/helpers/fake-hardcover.ts):
// the settings round-trip with the key masked, and progress from the web reader, the app, KOReader and Kobo reaching
// the user's Hardcover library with the user's key, through the push queue and the hardcover-push singleton, never when
// sync is off and never failing the reader. (Several processes on one catalog: hardcover-replicas.test.ts.)
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StopSingleton } from '../../src/core/cluster/singletons.ts';
import { partialMd5 } from '../../src/core/formats/hash.ts';
import { localDate } from '../../src/core/hardcover/progress-pusher.ts';
import { md5Hex } from '../../src/core/koreader/accounts.ts';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { hardcoverGraphqlUrl, startHardcoverPush } from '../../src/daemon/hardcover-sync.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { DUNE_ISBN, startFakeHardcover, type FakeHardcover } from '../helpers/fake-hardcover.ts';
import { DEVICE_HEADERS } from '../helpers/kobo-device.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

type Json = Record<string, unknown>;

const ALICE_KEY = 'alice-hardcover-api-key-0001-wxyz';
/** Each key has its own rate limit (a burst of 10 requests): later tests switch keys rather than wait for refills. */
const ALICE_SECOND_KEY = 'alice-hardcover-api-key-0002-abcd';
const ALICE_THIRD_KEY = 'alice-hardcover-api-key-0003-efgh';
const BOB_KEY = 'bob-hardcover-api-key-000000002';

let d: TestDaemon;
let hc: FakeHardcover;
let stopPush: StopSingleton;
let lib: TempLibrary;
let alice: { id: number; token: string };
let bob: { id: number; token: string };
let plain: { id: number; token: string };
const ids = { dune: 0, duneFile: 0, emma: 0, emmaFile: 0, bare: 0, bareFile: 0 };
let emmaHash: string;

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

async function synced(): Promise<void> {
  while (d.ctx.background.size > 0) await Promise.allSettled([...d.ctx.background]);
}

async function putSettings(token: string, body: unknown) {
  return d.inject({ method: 'PUT', url: '/api/v1/hardcover-sync-settings', headers: auth(token), payload: body as Json });
}

async function webProgress(token: string, bookId: number, fileId: number, percent: number) {
  return d.inject({ method: 'POST', url: '/api/v1/books/progress', headers: auth(token), payload: { bookId, fileProgress: { bookFileId: fileId, progressPercent: percent, positionData: null } } });
}

beforeAll(async () => {
  hc = await startFakeHardcover();
  d = await startTestDaemon({ outgoingAllowPrivateHosts: '127.0.0.1', metadataProviderBaseUrls: JSON.stringify({ Hardcover: hc.url }) });
  lib = makeTempLibrary();
  await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], isbn: DUNE_ISBN });
  await writeSimpleEpub(lib.path('Emma.epub'), { title: 'Emma', authors: ['Jane Austen'], body: 'Emma Woodhouse, handsome, clever, and rich.' });
  await writeSimpleEpub(lib.path('Bare.epub'), { title: 'Untraceable', body: 'Nothing to look it up by.' });
  emmaHash = await partialMd5(lib.path('Emma.epub'));
  const library = await createLibrary(d.store.db, { name: 'Main', paths: [lib.root] });
  await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  const files = await d.store.db.selectFrom('book_file').innerJoin('book_metadata', 'book_metadata.book_id', 'book_file.book_id').select(['book_file.id', 'book_file.book_id', 'book_metadata.title']).execute();
  for (const f of files) {
    if (f.title === 'Dune') Object.assign(ids, { dune: f.book_id, duneFile: f.id });
    if (f.title === 'Emma') Object.assign(ids, { emma: f.book_id, emmaFile: f.id });
    if (f.title === 'Untraceable') Object.assign(ids, { bare: f.book_id, bareFile: f.id });
  }
  // Emma was matched on Hardcover before: its Hardcover book id is stored, its ISBN is not.
  await d.store.db.updateTable('book_metadata').set({ hardcover_book_id: '200', isbn_13: null, isbn_10: null }).where('book_id', '=', ids.emma).execute();
  await d.setupAdmin();
  alice = await d.createUser('alice', { canSyncKoReader: true, canSyncKobo: true }, [library.id]);
  bob = await d.createUser('bob', { canSyncKobo: true }, [library.id]);
  plain = await d.createUser('plain', { canUpload: true }, [library.id]);
  // What `bindery serve` runs in the process holding the hardcover-push lease (this one, alone on its catalog).
  stopPush = startHardcoverPush(d.ctx);
}, 120_000);

afterAll(async () => {
  await stopPush?.();
  await d?.close();
  await hc?.close();
  lib?.cleanup();
});

beforeEach(() => hc.reset());

describe('GET/PUT /api/v1/hardcover-sync-settings', () => {
  it('starts empty, stores the key and answers it masked', async () => {
    const empty = await d.inject({ method: 'GET', url: '/api/v1/hardcover-sync-settings', headers: auth(alice.token) });
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual({ hardcoverApiKey: null, hardcoverSyncEnabled: false });

    const saved = await putSettings(alice.token, { hardcoverApiKey: `  ${ALICE_KEY}  `, hardcoverSyncEnabled: true });
    expect(saved.statusCode).toBe(200);
    expect(saved.json()).toEqual({ hardcoverApiKey: '********wxyz', hardcoverSyncEnabled: true });
    expect(saved.body).not.toContain(ALICE_KEY.slice(0, 12));

    const read = await d.inject({ method: 'GET', url: '/api/v1/hardcover-sync-settings', headers: auth(alice.token) });
    expect(read.json()).toEqual({ hardcoverApiKey: '********wxyz', hardcoverSyncEnabled: true });
    // Stored whole, where Grimmory keeps it; never part of the user's settings object.
    const stored = await d.store.db.selectFrom('user_settings').select('setting_value').where('user_id', '=', alice.id).where('setting_key', '=', 'hardcoverApiKey').executeTakeFirstOrThrow();
    expect(stored.setting_value).toBe(ALICE_KEY);
    const me = await d.inject({ method: 'GET', url: '/api/v1/users/me', headers: auth(alice.token) });
    expect(me.body).not.toContain(ALICE_KEY);
  });

  it('keeps the stored key when the masked form comes back, clears it when emptied', async () => {
    const toggled = await putSettings(alice.token, { hardcoverApiKey: '********wxyz', hardcoverSyncEnabled: false });
    expect(toggled.json()).toEqual({ hardcoverApiKey: '********wxyz', hardcoverSyncEnabled: false });
    const kept = await d.store.db.selectFrom('user_settings').select('setting_value').where('user_id', '=', alice.id).where('setting_key', '=', 'hardcoverApiKey').executeTakeFirstOrThrow();
    expect(kept.setting_value).toBe(ALICE_KEY);

    const cleared = await putSettings(alice.token, { hardcoverApiKey: '', hardcoverSyncEnabled: false });
    expect(cleared.json()).toEqual({ hardcoverApiKey: '', hardcoverSyncEnabled: false });
    const short = await putSettings(alice.token, { hardcoverApiKey: 'short-key', hardcoverSyncEnabled: true });
    expect(short.json()).toEqual({ hardcoverApiKey: '********', hardcoverSyncEnabled: true });

    // Back to the real key for the sync tests below.
    expect((await putSettings(alice.token, { hardcoverApiKey: ALICE_KEY, hardcoverSyncEnabled: true })).statusCode).toBe(200);
    expect((await putSettings(bob.token, { hardcoverApiKey: BOB_KEY, hardcoverSyncEnabled: false })).statusCode).toBe(200);
  });

  it('refuses bad bodies with 400 and callers without a sync permission with 403', async () => {
    expect((await putSettings(alice.token, { hardcoverApiKey: 'a\nb', hardcoverSyncEnabled: true })).statusCode).toBe(400);
    expect((await putSettings(alice.token, { hardcoverApiKey: 'x'.repeat(2049), hardcoverSyncEnabled: true })).statusCode).toBe(400);
    expect((await putSettings(alice.token, { hardcoverApiKey: 'k', hardcoverSyncEnabled: 'maybe' })).statusCode).toBe(400);
    expect((await d.inject({ method: 'GET', url: '/api/v1/hardcover-sync-settings', headers: auth(plain.token) })).statusCode).toBe(403);
    expect((await putSettings(plain.token, { hardcoverApiKey: 'k', hardcoverSyncEnabled: true })).statusCode).toBe(403);
    expect((await d.inject({ method: 'GET', url: '/api/v1/hardcover-sync-settings' })).statusCode).toBe(401);
    // The failed attempts changed nothing.
    const read = await d.inject({ method: 'GET', url: '/api/v1/hardcover-sync-settings', headers: auth(alice.token) });
    expect(read.json()).toEqual({ hardcoverApiKey: '********wxyz', hardcoverSyncEnabled: true });
  });
});

describe('progress pushed to Hardcover', () => {
  it('sends a web-reader change with the user’s key: finds the book by ISBN, shelves it and sets the pages read', async () => {
    const res = await webProgress(alice.token, ids.dune, ids.duneFile, 50);
    expect(res.statusCode).toBe(204);
    await synced();
    expect(hc.calls.map((c) => c.op)).toEqual(['BinderyBookByIsbn', 'BinderyUserBook', 'BinderyAddUserBook', 'BinderyUpdateRead']);
    expect(hc.calls.every((c) => c.authorization === `Bearer ${ALICE_KEY}`)).toBe(true);
    expect(hc.calls[0]?.variables).toEqual({ isbn13: DUNE_ISBN });
    expect(hc.calls[2]?.variables).toEqual({ object: { book_id: 100, edition_id: 101, status_id: 2 } });
    // 50 % of the ISBN's edition (412 pages), on the read Hardcover started when the book was added.
    expect(hc.calls[3]?.variables).toMatchObject({ object: { edition_id: 101, started_at: localDate(), progress_pages: 206 } });
    expect(hc.libraries.get(ALICE_KEY)?.[0]).toMatchObject({ book_id: 100, status_id: 2, user_book_reads: [{ progress_pages: 206, finished_at: null }] });
    expect(hc.libraries.get(BOB_KEY)).toBeUndefined();
  });

  it('finishes the read at 99 % and leaves a book already read alone', async () => {
    expect((await webProgress(alice.token, ids.dune, ids.duneFile, 99.5)).statusCode).toBe(204);
    await synced();
    expect(hc.calls.map((c) => c.op)).toEqual(['BinderyBookByIsbn', 'BinderyUserBook', 'BinderyUpdateRead']);
    expect(hc.calls[2]?.variables).toMatchObject({ object: { progress_pages: 410, finished_at: localDate() } });
    expect(hc.libraries.get(ALICE_KEY)?.[0]).toMatchObject({ status_id: 3 });

    hc.calls = [];
    expect((await webProgress(alice.token, ids.dune, ids.duneFile, 100)).statusCode).toBe(204);
    await synced();
    expect(hc.calls.map((c) => c.op)).toEqual(['BinderyBookByIsbn', 'BinderyUserBook']);
  });

  it('sends nothing for a user whose sync is off, or for a book Hardcover cannot be searched by', async () => {
    expect((await webProgress(bob.token, ids.dune, ids.duneFile, 30)).statusCode).toBe(204);
    expect((await webProgress(alice.token, ids.bare, ids.bareFile, 30)).statusCode).toBe(204);
    await synced();
    expect(hc.calls).toEqual([]);
  });

  it('never fails or slows the progress request: a slow or failing Hardcover only shows in the log', async () => {
    expect((await putSettings(alice.token, { hardcoverApiKey: ALICE_SECOND_KEY, hardcoverSyncEnabled: true })).statusCode).toBe(200);
    hc.delayMs = 1500;
    hc.failWith = 500;
    const started = Date.now();
    const res = await webProgress(alice.token, ids.emma, ids.emmaFile, 40);
    const elapsed = Date.now() - started;
    expect(res.statusCode).toBe(204);
    expect(elapsed).toBeLessThan(1000);
    const row = await d.store.db.selectFrom('user_book_progress').select(['read_status', 'epub_progress_percent']).where('user_id', '=', alice.id).where('book_id', '=', ids.emma).executeTakeFirstOrThrow();
    expect(row).toEqual({ read_status: 'READING', epub_progress_percent: 40 });
    await synced();
    expect(hc.calls).toEqual([]);
    expect(hc.site.requests.at(-1)?.headers.authorization).toBe(`Bearer ${ALICE_SECOND_KEY}`);
    // The change stays queued, to be tried again later.
    const queued = () => d.store.db.selectFrom('hardcover_push').select(['book_id', 'percent', 'attempts', 'last_error']).where('user_id', '=', alice.id).execute();
    expect(await queued()).toEqual([{ book_id: ids.emma, percent: 40, attempts: 1, last_error: expect.stringContaining('answered 500') }]);

    // Once Hardcover answers again, the next change goes through (by the stored Hardcover id this time).
    hc.delayMs = 0;
    hc.failWith = undefined;
    expect((await webProgress(alice.token, ids.emma, ids.emmaFile, 41)).statusCode).toBe(204);
    await synced();
    expect(hc.calls.map((c) => c.op)).toEqual(['BinderyBook', 'BinderyUserBook', 'BinderyAddUserBook', 'BinderyUpdateRead']);
    expect(hc.calls[0]?.variables).toEqual({ bookId: 200 });
    // No ISBN: the default ebook edition (350 pages).
    expect(hc.calls[2]?.variables).toEqual({ object: { book_id: 200, edition_id: 202, status_id: 2 } });
    expect(hc.calls[3]?.variables).toMatchObject({ object: { progress_pages: 144 } });
    expect(await queued()).toEqual([]);
  });

  it('sends KOReader pushes (a 0..1 fraction) once per new position', async () => {
    expect((await d.inject({ method: 'PUT', url: '/api/v1/koreader-users/me', headers: auth(alice.token), payload: { username: 'alice-ko', password: 'ko-secret' } })).statusCode).toBe(200);
    expect((await d.inject({ method: 'PATCH', url: '/api/v1/koreader-users/me/sync?enabled=true', headers: auth(alice.token) })).statusCode).toBe(204);
    const push = (percentage: number) =>
      d.inject({
        method: 'PUT',
        url: '/api/koreader/syncs/progress',
        headers: { accept: 'application/vnd.koreader.v1+json', 'x-auth-user': 'alice-ko', 'x-auth-key': md5Hex('ko-secret') },
        payload: { document: emmaHash, progress: '/body/DocFragment[2]/body/p[1]/text().0', percentage, device: 'Kindle', device_id: 'K1' },
      });
    const res = await push(0.6);
    expect(res.statusCode, res.body).toBe(200);
    await synced();
    expect(hc.calls.map((c) => c.op)).toEqual(['BinderyBook', 'BinderyUserBook', 'BinderyUpdateRead']);
    expect(hc.calls[2]?.variables).toMatchObject({ object: { edition_id: 202, progress_pages: 210 } });

    // The same position again sends nothing; an unknown document sends nothing either.
    hc.calls = [];
    expect((await push(0.6)).statusCode).toBe(200);
    const unknown = await d.inject({
      method: 'PUT',
      url: '/api/koreader/syncs/progress',
      headers: { accept: 'application/vnd.koreader.v1+json', 'x-auth-user': 'alice-ko', 'x-auth-key': md5Hex('ko-secret') },
      payload: { document: '0123456789abcdef0123456789abcdef', progress: 'x', percentage: 0.3, device: 'Kindle' },
    });
    expect(unknown.statusCode).toBe(200);
    await synced();
    expect(hc.calls).toEqual([]);
  });

  it('sends a Kobo bookmark with the device’s percent', async () => {
    expect((await putSettings(alice.token, { hardcoverApiKey: ALICE_THIRD_KEY, hardcoverSyncEnabled: true })).statusCode).toBe(200);
    const settings = await d.inject({ method: 'GET', url: '/api/v1/kobo-settings', headers: auth(alice.token) });
    const token = (settings.json() as { token: string }).token;
    expect((await d.inject({ method: 'PUT', url: '/api/v1/kobo-settings', headers: auth(alice.token), payload: { syncEnabled: true } })).statusCode).toBe(200);
    const at = '2025-03-01T10:00:00.0000000Z';
    const res = await d.inject({
      method: 'PUT',
      url: `/api/kobo/${token}/v1/library/${ids.emma}/state`,
      headers: DEVICE_HEADERS,
      payload: { ReadingStates: [{ EntitlementId: String(ids.emma), LastModified: at, StatusInfo: { LastModified: at, Status: 'Reading' }, CurrentBookmark: { LastModified: at, ProgressPercent: 80 } }] },
    });
    expect(res.statusCode, res.body).toBe(200);
    await synced();
    // A new key is a new Hardcover library: the book is shelved there first.
    expect(hc.calls.map((c) => c.op)).toEqual(['BinderyBook', 'BinderyUserBook', 'BinderyAddUserBook', 'BinderyUpdateRead']);
    expect(hc.calls[3]?.variables).toMatchObject({ object: { edition_id: 202, progress_pages: 280 } });
    expect(hc.calls.every((c) => c.authorization === `Bearer ${ALICE_THIRD_KEY}`)).toBe(true);
  });

  it('takes the GraphQL URL from the Hardcover metadata provider’s base URL', () => {
    expect(hardcoverGraphqlUrl(d.ctx)).toBe(`${hc.url}/graphql`);
    expect(hardcoverGraphqlUrl({ config: { ...d.config, metadataProviderBaseUrls: '' } })).toBe('https://api.hardcover.app/v1/graphql');
  });
});
