// The device and app feeds keep whole pages until the catalog changes (src/daemon/page-cache.ts). Each test makes
// sure a kept page is only ever given to the caller it was built for, and never after a change.
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/core/users/users.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { pageCacheSize } from '../../src/daemon/page-cache.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { writtenElsewhere } from '../helpers/other-process.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

let d: TestDaemon;
let other: Store;
let libraryA: number;
let libraryB: number;
let bookA: number;
let owner: { id: number; token: string };
let member: { id: number; token: string };

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const opds = (url: string, authorization: string, accept?: string) => d.inject({ method: 'GET', url, headers: { authorization, ...(accept ? { accept } : {}) } });
const app = (url: string, token: string) => d.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });

beforeAll(async () => {
  d = await startTestDaemon();
  libraryA = await seedLibrary(d.store.db, d.dir, 'A');
  libraryB = await seedLibrary(d.store.db, d.dir, 'B');
  bookA = (await seedBook(d.store.db, libraryA, { title: 'Alpha', authors: ['Ann'] })).bookId;
  await seedBook(d.store.db, libraryB, { title: 'Beta', authors: ['Bob'] });
  owner = await d.createUser('owner', { admin: true });
  member = await d.createUser('member', { canAccessOpds: true }, [libraryA]);
  for (const [userId, name] of [[owner.id, 'own'], [member.id, 'mem']] as const) {
    await d.store.db.insertInto('opds_user_v2').values({ user_id: userId, username: name, password_hash: await hashPassword(`${name}-password`) }).execute();
  }
  await d.store.db.insertInto('app_settings').values({ name: 'opds_server_enabled', val: 'true' }).execute();
  other = await openStore(d.store.path);
});

afterAll(async () => {
  await other.close();
  await d.close();
});

describe('kept feed pages', () => {
  it('answers the same page with the same bytes and headers, and keeps it', async () => {
    const first = await opds('/api/v1/opds/catalog', basic('own', 'own-password'));
    expect(first.statusCode).toBe(200);
    const { entries: kept, hits } = pageCacheSize(d.ctx);
    expect(kept).toBeGreaterThan(0);
    const second = await opds('/api/v1/opds/catalog', basic('own', 'own-password'));
    expect(second.statusCode).toBe(200);
    expect(second.body).toBe(first.body);
    expect(second.headers['content-type']).toBe(first.headers['content-type']);
    expect(second.headers['cache-control']).toBe(first.headers['cache-control']);
    expect(pageCacheSize(d.ctx)).toMatchObject({ entries: kept, hits: hits + 1 });
  });

  it('keeps a page as built and encodes it for each client: compressed for one, plain for the next', async () => {
    const url = '/api/v1/opds/catalog?page=1&size=7';
    const get = (acceptEncoding?: string) =>
      d.inject({ method: 'GET', url, headers: { authorization: basic('own', 'own-password'), ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}) } });
    const gzipped = await get('gzip');
    expect(gzipped.statusCode).toBe(200);
    const { hits } = pageCacheSize(d.ctx);
    const plain = await get();
    expect(pageCacheSize(d.ctx).hits).toBe(hits + 1);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toContain('<feed');
    const again = await get('gzip');
    expect(again.headers['content-encoding'] ?? 'identity').toBe(gzipped.headers['content-encoding'] ?? 'identity');
    if (again.headers['content-encoding'] === 'gzip') expect(gunzipSync(again.rawPayload).toString()).toBe(plain.body);
  });

  it('counts the compressed copies of a kept page in the cache size (its 32 MB budget)', async () => {
    const url = '/api/v1/opds/catalog?page=1&size=9';
    const get = (acceptEncoding?: string) =>
      d.inject({ method: 'GET', url, headers: { authorization: basic('own', 'own-password'), ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}) } });
    const plain = await get();
    expect(plain.rawPayload.length).toBeGreaterThan(1024); // long enough to be compressed
    const kept = pageCacheSize(d.ctx).bytes;
    const gzipped = await get('gzip');
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(pageCacheSize(d.ctx).bytes).toBe(kept + gzipped.rawPayload.length);
    const brotli = await get('br');
    expect(pageCacheSize(d.ctx).bytes).toBe(kept + gzipped.rawPayload.length + brotli.rawPayload.length);
    // Asked for a third time, the gzip copy is made again at the live level: the cache counts that one instead.
    await get('gzip');
    await get('gzip');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const better = await get('gzip');
    expect(gunzipSync(better.rawPayload).toString()).toBe(plain.body);
    expect(pageCacheSize(d.ctx).bytes).toBe(kept + better.rawPayload.length + brotli.rawPayload.length);
  });

  it('never gives one account the page kept for another', async () => {
    const own = await opds('/api/v1/opds/catalog', basic('own', 'own-password'));
    const mem = await opds('/api/v1/opds/catalog', basic('mem', 'mem-password'));
    expect(own.body).toContain('Beta');
    expect(mem.statusCode).toBe(200);
    expect(mem.body).toContain('Alpha');
    expect(mem.body).not.toContain('Beta');
  });

  it('refuses wrong credentials even when the page is kept for the right ones', async () => {
    expect((await opds('/api/v1/opds/catalog', basic('own', 'own-password'))).statusCode).toBe(200);
    expect((await opds('/api/v1/opds/catalog', basic('own', 'wrong-password'))).statusCode).toBe(401);
    expect((await opds('/api/v1/opds/catalog', '')).statusCode).toBe(401);
  });

  it('keeps OPDS 1 and OPDS 2 answers apart by what the client accepts', async () => {
    // The unversioned address negotiates (the versioned ones always answer their own version).
    const atom = await opds('/api/opds/catalog', basic('own', 'own-password'));
    const json = await opds('/api/opds/catalog', basic('own', 'own-password'), 'application/opds+json');
    expect(atom.headers['content-type']).toMatch(/atom\+xml/);
    expect(json.headers['content-type']).toMatch(/json/);
  });

  it('shows a change made by another process on the next request', async () => {
    const before = await opds('/api/v1/opds/catalog', basic('mem', 'mem-password'));
    expect(before.body).toContain('Alpha');
    await writtenElsewhere(d.store, () => other.db.updateTable('book_metadata').set({ title: 'Alpha Renamed' }).where('book_id', '=', bookA).execute());
    const after = await opds('/api/v1/opds/catalog', basic('mem', 'mem-password'));
    expect(after.body).toContain('Alpha Renamed');
  });

  it('stops answering an account whose password changed, or a switched-off server', async () => {
    expect((await opds('/api/v1/opds/catalog', basic('mem', 'mem-password'))).statusCode).toBe(200);
    const newHash = await hashPassword('new-password');
    await writtenElsewhere(d.store, () => other.db.updateTable('opds_user_v2').set({ password_hash: newHash }).where('username', '=', 'mem').execute());
    expect((await opds('/api/v1/opds/catalog', basic('mem', 'mem-password'))).statusCode).toBe(401);
    expect((await opds('/api/v1/opds/catalog', basic('mem', 'new-password'))).statusCode).toBe(200);
    await writtenElsewhere(d.store, () => other.db.updateTable('app_settings').set({ val: 'false' }).where('name', '=', 'opds_server_enabled').execute());
    expect((await opds('/api/v1/opds/catalog', basic('mem', 'new-password'))).statusCode).toBe(403);
    await writtenElsewhere(d.store, () => other.db.updateTable('app_settings').set({ val: 'true' }).where('name', '=', 'opds_server_enabled').execute());
  });

  it('builds many pages asked for at once, each once, and answers them all', async () => {
    const urls = Array.from({ length: 24 }, (_, i) => `/api/v1/opds/catalog?page=${(i % 6) + 1}`);
    const answers = await Promise.all(urls.map((url) => opds(url, basic('own', 'own-password'))));
    expect(answers.map((a) => a.statusCode)).toEqual(urls.map(() => 200));
    // Same page, same bytes, whether it was built or waited for the build ahead of it.
    expect(new Set(answers.filter((_, i) => i % 6 === 0).map((a) => a.body)).size).toBe(1);
    const after = await opds('/api/v1/opds/catalog?page=1', basic('own', 'own-password'));
    expect(after.body).toBe(answers[0]!.body);
  });

  it('keeps app API pages per user, and shows a library taken away at once', async () => {
    const own = await app('/api/v1/app/books?page=0&size=20', owner.token);
    const mem = await app('/api/v1/app/books?page=0&size=20', member.token);
    expect(own.statusCode).toBe(200);
    expect(mem.statusCode).toBe(200);
    expect(own.body).toContain('Beta');
    expect(mem.body).not.toContain('Beta');
    const hits = pageCacheSize(d.ctx).hits;
    expect((await app('/api/v1/app/books?page=0&size=20', member.token)).body).toBe(mem.body);
    expect(pageCacheSize(d.ctx).hits).toBe(hits + 1);
    await writtenElsewhere(d.store, () => other.db.deleteFrom('user_library_mapping').where('user_id', '=', member.id).execute());
    expect((await app('/api/v1/app/books?page=0&size=20', member.token)).body).not.toContain('Alpha');
  });
});
