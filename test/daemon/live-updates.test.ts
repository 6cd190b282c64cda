// Live updates end to end, over real sockets: a STOMP client (@stomp/stompjs over ws, as the Grimmory web UI uses
// it) against `/ws`, and an SSE reader against Komga's `/komga/sse/v1/events`. Every destination is fired by the
// write path that owns it; who receives what follows the REST routes' visibility.
import { mkdirSync, renameSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { emitEvent } from '../../src/core/events/live-events.ts';
import { hashPassword } from '../../src/core/users/users.ts';
import { existingLiveHub } from '../../src/daemon/live/live-hub.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { GRIMMORY_UI_DESTINATIONS, sseReader, stompClient, type StompTestClient } from '../helpers/live-clients.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

type Obj = Record<string, unknown>;

let d: TestDaemon;
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

async function bookIdByTitle(title: string): Promise<number> {
  const row = await d.store.db.selectFrom('book_metadata').select('book_id').where('title', '=', title).executeTakeFirstOrThrow();
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
  d = await startTestDaemon();
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
