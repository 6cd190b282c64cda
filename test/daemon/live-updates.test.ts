// Live updates end to end, over real sockets: a STOMP client (@stomp/stompjs over ws, as the Grimmory web UI uses
// it) against `/ws`, and an SSE reader against Komga's `/komga/sse/v1/events`. Every destination is fired by the
// write path that owns it; who receives what follows the REST routes' visibility.
import { mkdirSync, renameSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { hashPassword } from '../../src/core/users/users.ts';
import { existingLiveHub } from '../../src/daemon/live/live-hub.ts';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { runCli } from '../helpers/cli.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.ts';
import { GRIMMORY_UI_DESTINATIONS, sseReader, stompClient, type StompTestClient } from '../helpers/live-clients.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

type Obj = Record<string, unknown>;

let d: TestDaemon;
let site: FakeSite;
let lib: TempLibrary;
let base: string;
let wsUrl: string;
let adminToken: string;
let libraryOne: number;
let libraryTwo: number;
/** A user of library 2 only. */
let other: { id: number; token: string };
/** A user of library 1 who may not see books tagged "secret". */
let restricted: { id: number; token: string };
const clients: StompTestClient[] = [];

function client(token: string | undefined, options: Parameters<typeof stompClient>[2] = {}): StompTestClient {
  const c = stompClient(wsUrl, token, options);
  clients.push(c);
  return c;
}

async function subscribed(token: string, destinations = GRIMMORY_UI_DESTINATIONS): Promise<StompTestClient> {
  const c = client(token);
  await c.connected;
  c.subscribe(...destinations);
  // A RECEIPT for one more SUBSCRIBE: the server has taken every subscription before the test writes anything.
  await new Promise<void>((done) => {
    const receipt = `r-${Math.random()}`;
    c.client.watchForReceipt(receipt, () => done());
    c.client.subscribe('/user/queue/receipt-probe', () => undefined, { receipt });
  });
  return c;
}

async function api(method: string, url: string, token: string, payload?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await d.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}` }, ...(payload !== undefined ? { payload: payload as object } : {}) });
  return { status: res.statusCode, body: res.body ? (JSON.parse(res.body) as unknown) : undefined };
}

/** By file name: edits in these tests replace titles. */
async function bookIdByTitle(title: string): Promise<number> {
  const row = await d.store.db.selectFrom('book_file').select('book_id').where('file_name', '=', `${title}.epub`).executeTakeFirstOrThrow();
  return row.book_id;
}

async function waitForBooks(libraryId: number, count: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const row = await d.store.db.selectFrom('book').select((eb) => eb.fn.countAll<number>().as('n')).where('library_id', '=', libraryId).executeTakeFirstOrThrow();
    if (Number(row.n) >= count) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`library ${libraryId} never reached ${count} books`);
}

beforeAll(async () => {
  site = await startFakeSite();
  site.on('GET', '/volumes', () => ({
    json: { kind: 'books#volumes', totalItems: 1, items: [{ kind: 'books#volume', id: 'vol-emma', volumeInfo: { title: 'Emma', authors: ['Jane Austen'], publisher: 'John Murray', description: 'A novel.', industryIdentifiers: [{ type: 'ISBN_13', identifier: '9780141439587' }], pageCount: 474, language: 'en' } }] },
  }));
  d = await startTestDaemon({ outgoingAllowPrivateHosts: '127.0.0.1', metadataProviderBaseUrls: JSON.stringify({ Google: site.url }) });
  lib = makeTempLibrary();
  await d.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = d.app.server.address() as { port: number };
  base = `http://127.0.0.1:${port}`;
  wsUrl = `ws://127.0.0.1:${port}/ws`;
  adminToken = await d.setupAdmin();
  mkdirSync(lib.path('one'));
  mkdirSync(lib.path('two'));
  await writeSimpleEpub(lib.path('one', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], series: 'Dune', seriesIndex: 1, cover: '#2a6' });
  await writeSimpleEpub(lib.path('one', 'Emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
  await writeSimpleEpub(lib.path('two', 'Walden.epub'), { title: 'Walden', authors: ['Henry Thoreau'] });
  const one = await api('POST', '/api/v1/libraries', adminToken, { name: 'One', paths: [{ path: lib.path('one') }] });
  libraryOne = (one.body as Obj).id as number;
  await waitForBooks(libraryOne, 2);
  const two = await api('POST', '/api/v1/libraries', adminToken, { name: 'Two', paths: [{ path: lib.path('two') }] });
  libraryTwo = (two.body as Obj).id as number;
  await waitForBooks(libraryTwo, 1);
  other = await d.createUser('other', {}, [libraryTwo]);
  restricted = await d.createUser('restricted', {}, [libraryOne]);
  await d.store.db.insertInto('user_content_restriction').values({ user_id: restricted.id, restriction_type: 'TAG', mode: 'EXCLUDE', value: 'secret' }).execute();
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.stop().catch(() => undefined)));
  await d?.close();
  await site?.close();
  lib?.cleanup();
});

describe('CONNECT', () => {
  it('refuses a CONNECT without a token, or with a bad one, with an ERROR frame and closes the socket', async () => {
    for (const [token, message] of [[undefined, 'Missing Authorization header'], ['not-a-jwt', 'Invalid or expired token']] as const) {
      const c = client(token);
      expect(await c.error).toBe(message);
      expect(await c.closed).toBe(1008);
      await expect(c.connected).rejects.toThrow();
    }
  });

  it('answers CONNECTED with STOMP 1.2 and the heart-beats the client asked for, and sends them', async () => {
    const c = client(adminToken, { heartBeat: 1000 });
    const frame = await c.connected;
    expect(frame.headers.version).toBe('1.2');
    expect(frame.headers['heart-beat']).toBe('1000,1000');
    expect(frame.headers['user-name']).toBe('admin');
    // stompjs closes a connection that stays silent past its tolerance: still open after three intervals.
    await new Promise((r) => setTimeout(r, 3500));
    expect(c.client.connected).toBe(true);
    await c.stop();
  });

  it('refuses subscriptions outside /topic/ and /user/queue/, and any SEND', async () => {
    const bad = client(adminToken);
    await bad.connected;
    bad.client.subscribe('/app/anything', () => undefined);
    expect(await bad.error).toBe("Destination '/app/anything' is not allowed");
    const traversal = client(adminToken);
    await traversal.connected;
    traversal.client.subscribe('/user/queue/../topic/x', () => undefined);
    expect(await traversal.error).toBe('Invalid subscription destination');
    const sender = client(adminToken);
    await sender.connected;
    sender.client.publish({ destination: '/app/x', body: 'hi' });
    expect(await sender.error).toBe('Client SEND is not permitted');
    expect(await sender.closed).toBe(1008);
  });
});

describe('destinations fired by their write paths', () => {
  it('book-add and log from a library scan', async () => {
    const admin = await subscribed(adminToken);
    await writeSimpleEpub(lib.path('one', 'Persuasion.epub'), { title: 'Persuasion', authors: ['Jane Austen'] });
    expect((await api('PUT', `/api/v1/libraries/${libraryOne}/refresh`, adminToken)).status).toBe(204);
    const added = await admin.next('/user/queue/book-add', (b) => ((b as Obj).metadata as Obj | undefined)?.title === 'Persuasion');
    expect((added.body as Obj).libraryId).toBe(libraryOne);
    expect((added.body as Obj).id).toBe(await bookIdByTitle('Persuasion'));
    await admin.next('/user/queue/log', (b) => /Finished scanning library: One/.test((b as Obj).message as string));
    const log = admin.messages.find((m) => m.destination === '/user/queue/log')?.body as Obj;
    expect(log.severity).toBe('INFO');
    expect(new Date(log.timestamp as string).toISOString()).toBe(log.timestamp);
  });
});

describe('destinations fired by their write paths (continued)', () => {
  it('book-update from a metadata edit and a bulk edit, books-cover-update from a cover change', async () => {
    const admin = await subscribed(adminToken);
    const emma = await bookIdByTitle('Emma');
    expect((await api('PUT', `/api/v1/books/${emma}/metadata`, adminToken, { metadata: { subtitle: 'A Novel' } })).status).toBe(200);
    const updated = await admin.next('/user/queue/book-update', (b) => (b as Obj).id === emma);
    expect(((updated.body as Obj).metadata as Obj).subtitle).toBe('A Novel');
    expect((await api('PUT', '/api/v1/books/bulk-edit-metadata', adminToken, { bookIds: [emma], publisher: 'Penguin' })).status).toBe(204);
    await admin.next('/user/queue/book-update', (b) => ((b as Obj).metadata as Obj).publisher === 'Penguin');
    expect((await api('POST', `/api/v1/books/${emma}/generate-custom-cover`, adminToken)).status).toBe(200);
    const covers = await admin.next('/user/queue/books-cover-update');
    expect(covers.body).toEqual([{ id: emma, coverUpdatedOn: expect.stringMatching(/Z$/) }]);
  });

  it('book-update from a file move; books-remove from a delete', async () => {
    const admin = await subscribed(adminToken);
    const persuasion = await bookIdByTitle('Persuasion');
    const target = (await api('GET', `/api/v1/libraries/${libraryTwo}`, adminToken)).body as { paths: { id: number }[] };
    const moved = await api('POST', '/api/v1/files/move', adminToken, { moves: [{ bookId: persuasion, targetLibraryId: libraryTwo, targetLibraryPathId: target.paths[0]?.id }] });
    expect(moved.status).toBe(200);
    // Into another library: gone from the first library's users' view, added to the second's.
    expect((await admin.next('/user/queue/books-remove')).body).toEqual([persuasion]);
    expect(((await admin.next('/user/queue/book-add', (b) => (b as Obj).id === persuasion)).body as Obj).libraryId).toBe(libraryTwo);
    expect((await api('DELETE', `/api/v1/books?ids=${persuasion}`, adminToken)).status).toBe(200);
    await admin.next('/user/queue/books-remove', (b) => (b as number[]).length === 1 && admin.messages.filter((m) => m.destination === '/user/queue/books-remove').length === 2);
  });

  it('bookdrop-file from bookdrop intake and import, book-add from the import', async () => {
    const admin = await subscribed(adminToken);
    const manager = await d.createUser('manager', { canManageLibrary: true, canAccessBookdrop: true }, [libraryOne]);
    const reader = await d.createUser('reader', {}, [libraryOne]);
    const managerClient = await subscribed(manager.token);
    const readerClient = await subscribed(reader.token);
    mkdirSync(d.config.bookdropDir, { recursive: true });
    await writeSimpleEpub(`${d.config.bookdropDir}/Middlemarch.epub`, { title: 'Middlemarch', authors: ['George Eliot'] });
    // The bookdrop takes a file once it has not changed for two seconds.
    await new Promise((r) => setTimeout(r, 2100));
    expect((await api('POST', '/api/v1/bookdrop/rescan', adminToken)).status).toBe(200);
    const pending = await admin.next('/user/queue/bookdrop-file', (b) => (b as Obj).pendingCount === 1);
    expect(pending.body).toEqual({ pendingCount: 1, totalCount: 1, lastUpdatedAt: expect.stringMatching(/Z$/) });
    await managerClient.next('/user/queue/bookdrop-file');
    const target = (await api('GET', `/api/v1/libraries/${libraryOne}`, adminToken)).body as { paths: { id: number }[] };
    const finalized = await api('POST', '/api/v1/bookdrop/imports/finalize', adminToken, { selectAll: true, defaultLibraryId: libraryOne, defaultPathId: target.paths[0]?.id });
    expect((finalized.body as Obj).successfullyImported).toBe(1);
    await admin.next('/user/queue/bookdrop-file', (b) => (b as Obj).pendingCount === 0 && (b as Obj).totalCount === 0);
    await admin.next('/user/queue/book-add', (b) => ((b as Obj).metadata as Obj).title === 'Middlemarch');
    // The reader sees the new book but not the bookdrop (admins and library managers only).
    await readerClient.next('/user/queue/book-add', (b) => ((b as Obj).metadata as Obj).title === 'Middlemarch');
    expect(readerClient.messages.some((m) => m.destination === '/user/queue/bookdrop-file')).toBe(false);
  });

  it('task-progress, book-metadata-batch-progress and book-metadata-update from a metadata fetch task', async () => {
    const admin = await subscribed(adminToken);
    const emma = await bookIdByTitle('Emma');
    await d.store.db.updateTable('book_metadata').set({ isbn_13: '9780141439587', publisher: null, description: null }).where('book_id', '=', emma).execute();
    const settings = await api('PUT', '/api/v1/settings', adminToken, [{ name: 'METADATA_PROVIDER_SETTINGS', value: { google: { enabled: true, apiKey: null } } }]);
    expect(settings.status).toBe(200);
    const fp = (p1: string) => ({ p1, p2: null, p3: null, p4: null });
    const started = await api('POST', '/api/v1/tasks/start', adminToken, {
      taskType: 'REFRESH_METADATA_MANUAL',
      options: { refreshType: 'BOOKS', bookIds: [emma], refreshOptions: { reviewBeforeApply: false, replaceMode: 'REPLACE_MISSING', fieldOptions: { description: fp('Google'), publisher: fp('Google') }, enabledFields: {} } },
    });
    expect(started.status).toBe(202);
    const taskId = (started.body as Obj).taskId as string;
    const done = await admin.next('/user/queue/task-progress', (b) => (b as Obj).taskId === taskId && (b as Obj).taskStatus === 'COMPLETED', 15_000);
    expect(done.body).toEqual({ taskId, taskType: 'REFRESH_METADATA_MANUAL', message: expect.any(String), progress: 100, taskStatus: 'COMPLETED' });
    const progress = admin.messages.filter((m) => m.destination === '/user/queue/book-metadata-batch-progress').map((m) => m.body as Obj);
    expect(progress.at(0)).toMatchObject({ completed: 0, total: 1, status: 'IN_PROGRESS', review: false });
    expect(progress.at(-1)).toMatchObject({ completed: 1, total: 1, status: 'COMPLETED', review: false });
    const metadata = await admin.next('/user/queue/book-metadata-update', (b) => (b as Obj).id === emma);
    expect(((metadata.body as Obj).metadata as Obj).publisher).toBe('John Murray');
  });

  it('/topic/library-health when a library is added or its folder disappears', async () => {
    const admin = await subscribed(adminToken);
    mkdirSync(lib.path('three'));
    const three = await api('POST', '/api/v1/libraries', adminToken, { name: 'Three', paths: [{ path: lib.path('three') }] });
    const id = (three.body as Obj).id as number;
    const health = await admin.next('/topic/library-health', (b) => String(id) in ((b as Obj).libraryHealth as Obj));
    expect(((health.body as Obj).libraryHealth as Obj)[String(id)]).toBe(true);
    // The folders are looked at every 30 s; sooner here.
    const hub = existingLiveHub(d.ctx);
    if (!hub) throw new Error('no hub');
    hub.limits.healthEveryMs = 200;
    renameSync(lib.path('three'), lib.path('three-gone'));
    const gone = await admin.next('/topic/library-health', (b) => ((b as Obj).libraryHealth as Obj)[String(id)] === false);
    expect(gone.body).toMatchObject({ libraryHealth: { [String(libraryOne)]: true } });
    renameSync(lib.path('three-gone'), lib.path('three'));
    hub.limits.healthEveryMs = 30_000;
  });
});

describe('who gets what', () => {
  it('a user of library 2 gets nothing about library 1; a content restriction hides a book', async () => {
    const otherClient = await subscribed(other.token);
    const restrictedClient = await subscribed(restricted.token);
    const dune = await bookIdByTitle('Dune');
    const emma = await bookIdByTitle('Emma');
    const walden = await bookIdByTitle('Walden');
    expect((await api('PUT', `/api/v1/books/${dune}/metadata`, adminToken, { metadata: { tags: ['secret'] } })).status).toBe(200);
    expect((await api('PUT', `/api/v1/books/${emma}/metadata`, adminToken, { metadata: { subtitle: 'Volume One' } })).status).toBe(200);
    expect((await api('PUT', `/api/v1/books/${walden}/metadata`, adminToken, { metadata: { subtitle: 'Life in the Woods' } })).status).toBe(200);
    await otherClient.next('/user/queue/book-update', (b) => (b as Obj).id === walden);
    await restrictedClient.next('/user/queue/book-update', (b) => (b as Obj).id === emma);
    // Everything up to Walden's update has been delivered (one stream, in order): nothing about library 1 came.
    expect(otherClient.messages.filter((m) => m.destination.startsWith('/user/queue/book')).map((m) => (m.body as Obj).id)).toEqual([walden]);
    expect(restrictedClient.messages.some((m) => (m.body as Obj).id === dune)).toBe(false);
    expect(restrictedClient.messages.some((m) => (m.body as Obj).id === walden)).toBe(false);
  });

  it('session-revoked goes to the user whose account ended, and their socket closes', async () => {
    const gone = await d.createUser('leaving', {}, [libraryOne]);
    const leaving = await subscribed(gone.token);
    const bystander = await subscribed(other.token);
    expect((await api('DELETE', `/api/v1/users/${gone.id}`, adminToken)).status).toBe(200);
    const revoked = await leaving.next('/user/queue/session-revoked');
    expect(revoked.body).toEqual({ reason: 'user_deleted' });
    expect(await leaving.closed).toBe(1008);
    expect(bystander.messages.some((m) => m.destination === '/user/queue/session-revoked')).toBe(false);
    expect(bystander.client.connected).toBe(true);
    // The same token cannot connect again.
    const again = client(gone.token);
    expect(await again.error).toBe('Invalid or expired token');
  });
});

describe('from another process', () => {
  it('a `bindery scan` run from the command line reaches a subscriber within 2 s of each commit', async () => {
    const admin = await subscribed(adminToken);
    mkdirSync(lib.path('cli'));
    for (let i = 0; i < 6; i++) await writeSimpleEpub(lib.path('cli', `Tale ${i}.epub`), { title: `Tale ${i}`, authors: ['Someone'], body: `tale ${i}` });
    await createLibrary(d.store.db, { name: 'Cli', paths: [lib.path('cli')] });
    const result = await runCli(['--data-dir', d.config.dataDir, 'scan', 'Cli'], { env: { BINDERY_FROM_SOURCE: '1' } });
    expect(result.code, result.stderr).toBe(0);
    for (let i = 0; i < 6; i++) await admin.next('/user/queue/book-add', (b) => ((b as Obj).metadata as Obj).title === `Tale ${i}`, 5000);
    const rows = await d.store.db.selectFrom('event_outbox').select(['payload', 'created_at_ms']).where('kind', '=', 'books-added').execute();
    const committedAt = new Map<number, number>();
    for (const row of rows) for (const id of (JSON.parse(row.payload) as { bookIds: number[] }).bookIds) committedAt.set(id, row.created_at_ms);
    for (const m of admin.messages.filter((x) => x.destination === '/user/queue/book-add' && /^Tale /.test(((x.body as Obj).metadata as Obj).title as string))) {
      expect(m.at - (committedAt.get((m.body as Obj).id as number) as number)).toBeLessThan(2000);
    }
  }, 60_000);
});

describe('limits', () => {
  it('refuses a connection past the per-user cap with an ERROR frame, and one past the total cap with 503', async () => {
    const hub = existingLiveHub(d.ctx);
    if (!hub) throw new Error('no hub');
    const limits = { ...hub.limits };
    try {
      const capped = await d.createUser('capped', {}, [libraryOne]);
      hub.limits.maxPerUser = 2;
      await subscribed(capped.token);
      await subscribed(capped.token);
      const third = client(capped.token);
      expect(await third.error).toBe('Too many live connections for this user (at most 2).');
      hub.limits.maxConnections = hub.connectionCount;
      const refused = await new Promise<number>((resolve) => {
        const ws = new WebSocket(wsUrl);
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('open', () => resolve(101));
      });
      expect(refused).toBe(503);
    } finally {
      Object.assign(hub.limits, limits);
    }
  });

  it('serves /ws under --base-path, and nothing else answers an upgrade', async () => {
    const prefixed = await startTestDaemon({ basePath: '/books' });
    try {
      await prefixed.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = prefixed.app.server.address() as { port: number };
      const token = await prefixed.setupAdmin();
      const c = stompClient(`ws://127.0.0.1:${port}/books/ws`, token);
      expect((await c.connected).headers.version).toBe('1.2');
      await c.stop();
      for (const path of ['/ws', '/books/api/v1/books', '/books/wsx']) {
        const status = await new Promise<number>((resolve) => {
          const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`);
          ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
          ws.on('open', () => resolve(101));
        });
        expect(status, path).toBe(404);
      }
    } finally {
      await prefixed.close();
    }
  });

  it('checks the Origin of a browser page against allowedOrigins', async () => {
    const strict = await startTestDaemon({ allowedOrigins: 'https://books.example.com' });
    try {
      await strict.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = strict.app.server.address() as { port: number };
      const status = (origin: string): Promise<number> =>
        new Promise((resolve) => {
          const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { origin });
          ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
          ws.on('open', () => {
            ws.close();
            resolve(101);
          });
        });
      expect(await status('https://evil.example.org')).toBe(403);
      expect(await status('https://books.example.com')).toBe(101);
      expect(await status(`http://127.0.0.1:${port}`)).toBe(101);
    } finally {
      await strict.close();
    }
  });
});

describe("Komga's server-sent events", () => {
  it('sends BookChanged, SeriesChanged and BookDeleted with Komga ids to the OPDS account of a user who may see the book, and SessionExpired', async () => {
    await d.store.db.insertInto('app_settings').values({ name: 'komga_api_enabled', val: 'true' }).onConflict((oc) => oc.column('name').doUpdateSet({ val: 'true' })).execute();
    const owner = await d.createUser('komgaowner', {}, [libraryTwo]);
    await d.store.db.insertInto('opds_user_v2').values({ user_id: owner.id, username: 'kreader', password_hash: await hashPassword('kreader-secret') }).execute();
    const admin = await d.store.db.selectFrom('users').select('id').where('username', '=', 'admin').executeTakeFirstOrThrow();
    const adminAccount = await d.store.db.insertInto('opds_user_v2').values({ user_id: admin.id, username: 'kadmin', password_hash: await hashPassword('kadmin-secret') }).returning('id').executeTakeFirstOrThrow();
    const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    expect((await sseReader(`${base}/komga/sse/v1/events`, { Authorization: basic('kreader', 'wrong') })).status).toBe(401);
    const reader = await sseReader(`${base}/komga/sse/v1/events`, { Authorization: basic('kreader', 'kreader-secret') });
    const adminReader = await sseReader(`${base}/komga/sse/v1/events`, { Authorization: basic('kadmin', 'kadmin-secret') });
    expect(reader.status).toBe(200);
    const walden = await bookIdByTitle('Walden');
    const emma = await bookIdByTitle('Emma');
    expect((await api('PUT', `/api/v1/books/${emma}/metadata`, adminToken, { metadata: { subtitle: 'Komga One' } })).status).toBe(200);
    expect((await api('PUT', `/api/v1/books/${walden}/metadata`, adminToken, { metadata: { seriesName: 'Essays' } })).status).toBe(200);
    const changed = await reader.next('BookChanged');
    expect(changed.data).toEqual({ bookId: String(walden), seriesId: `${libraryTwo}-essays`, libraryId: String(libraryTwo) });
    expect((await reader.next('SeriesChanged')).data).toEqual({ seriesId: `${libraryTwo}-essays`, libraryId: String(libraryTwo) });
    expect(reader.events.some((e) => (e.data as Obj).bookId === String(emma))).toBe(false);
    await adminReader.next('BookChanged', (b) => (b as Obj).bookId === String(emma));
    const tasks = await adminReader.next('TaskQueueStatus', () => true, 12_000).catch(() => undefined);
    if (tasks) expect(tasks.data).toEqual({ count: expect.any(Number), countByType: expect.any(Object) });
    expect(reader.events.some((e) => e.name === 'TaskQueueStatus')).toBe(false);
    expect((await api('DELETE', `/api/v1/books?ids=${walden}`, adminToken)).status).toBe(200);
    expect((await reader.next('BookDeleted')).data).toEqual({ bookId: String(walden), seriesId: `${libraryTwo}-essays`, libraryId: String(libraryTwo) });
    expect((await api('DELETE', `/api/v1/users/${owner.id}`, adminToken)).status).toBe(200);
    const account = await d.store.db.selectFrom('opds_user_v2').select('id').where('username', '=', 'kreader').executeTakeFirst();
    expect(account).toBeUndefined();
    expect((await reader.next('SessionExpired')).data).toEqual({ userId: expect.any(String) });
    await reader.ended;
    adminReader.stop();
    expect(adminAccount.id).toBeGreaterThan(0);
  }, 30_000);
});
