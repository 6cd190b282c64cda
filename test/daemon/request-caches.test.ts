// What the daemon keeps between requests (verified tokens, principals, counts, whole pages of the book list) must
// never outlive a change: each of these makes a change and checks that the very next request sees it.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { signToken, verifyAccessToken as verifyToken } from '../../src/core/auth/tokens.ts';
import { CatalogBytesCache } from '../../src/core/store/catalog-bytes-cache.ts';
import { CatalogMemo } from '../../src/core/store/snapshot.ts';
import type { SqlExec } from '../../src/core/store/sql-exec.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { writtenElsewhere } from '../helpers/other-process.ts';

let d: TestDaemon;
let admin: { id: number; token: string };
let libraryA: number;
let libraryB: number;
let bookA: number;
let bookB: number;
/** A second connection to the same catalog: what the CLI in another process writes through. */
let other: Store;


const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const get = (url: string, token: string) => d.inject({ method: 'GET', url, headers: bearer(token) });

beforeAll(async () => {
  d = await startTestDaemon();
  admin = await d.createUser('admin', { admin: true });
  libraryA = await seedLibrary(d.store.db, d.dir, 'A');
  libraryB = await seedLibrary(d.store.db, d.dir, 'B');
  bookA = (await seedBook(d.store.db, libraryA, { title: 'Alpha', authors: ['Ann'] })).bookId;
  bookB = (await seedBook(d.store.db, libraryB, { title: 'Beta', authors: ['Bob'] })).bookId;
  other = await openStore(d.store.path);
});

afterAll(async () => {
  await other.close();
  await d.close();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('cached principals', () => {
  it('see permission and library changes made through the API on the next request', async () => {
    const reader = await d.createUser('reader-api', {}, [libraryA]);
    expect((await get(`/api/v1/books/${bookB}`, reader.token)).statusCode).toBe(403);
    expect((await get('/api/v1/users', reader.token)).statusCode).toBe(403);

    const put = (payload: object) => d.inject({ method: 'PUT', url: `/api/v1/users/${reader.id}`, headers: bearer(admin.token), payload });
    expect((await put({ assignedLibraries: [libraryA, libraryB] })).statusCode).toBe(200);
    expect((await get(`/api/v1/books/${bookB}`, reader.token)).statusCode).toBe(200);

    expect((await put({ permissions: { admin: true }, assignedLibraries: [libraryA, libraryB] })).statusCode).toBe(200);
    expect((await get('/api/v1/users', reader.token)).statusCode).toBe(200);
    expect((await put({ permissions: { admin: false }, assignedLibraries: [libraryA] })).statusCode).toBe(200);
    // Taking access away also ends the user's sessions (sessions.test.ts); a new sign-in sees the new permissions.
    expect((await get('/api/v1/users', reader.token)).statusCode).toBe(401);
    const again = await d.tokenFor(reader.id);
    expect((await get('/api/v1/users', again)).statusCode).toBe(403);
    expect((await get(`/api/v1/books/${bookB}`, again)).statusCode).toBe(403);
  });

  it('see changes committed by another process on the next request', async () => {
    const reader = await d.createUser('reader-cli', {}, [libraryA, libraryB]);
    expect((await get(`/api/v1/books/${bookB}`, reader.token)).statusCode).toBe(200);

    await writtenElsewhere(d.store, () => other.db.deleteFrom('user_library_mapping').where('user_id', '=', reader.id).where('library_id', '=', libraryB).execute());
    expect((await get(`/api/v1/books/${bookB}`, reader.token)).statusCode).toBe(403);

    await writtenElsewhere(d.store, () => other.db.insertInto('user_content_restriction').values({ user_id: reader.id, restriction_type: 'CONTENT_RATING', mode: 'ALLOW_ONLY', value: 'everyone' }).execute());
    expect((await get(`/api/v1/books/${bookA}`, reader.token)).statusCode).toBe(403);
    await writtenElsewhere(d.store, () => other.db.deleteFrom('user_content_restriction').where('user_id', '=', reader.id).execute());
    expect((await get(`/api/v1/books/${bookA}`, reader.token)).statusCode).toBe(200);

    await writtenElsewhere(d.store, () => other.db.updateTable('user_permissions').set({ permission_admin: 1 }).where('user_id', '=', reader.id).execute());
    expect((await get('/api/v1/users', reader.token)).statusCode).toBe(200);
  });

  it('are gone with their user: the token stops working at once', async () => {
    const reader = await d.createUser('reader-deleted', {}, [libraryA]);
    expect((await get(`/api/v1/books/${bookA}`, reader.token)).statusCode).toBe(200);
    expect((await d.inject({ method: 'DELETE', url: `/api/v1/users/${reader.id}`, headers: bearer(admin.token) })).statusCode).toBe(200);
    expect((await get(`/api/v1/books/${bookA}`, reader.token)).statusCode).toBe(401);
  });
});

describe('cached counts', () => {
  it('follow books added and shelved: page totals and shelf book counts', async () => {
    const total = async (): Promise<number> => (await get('/api/v1/books/page?size=1', admin.token)).json().page.totalElements as number;
    const before = await total();
    await writtenElsewhere(d.store, () => seedBook(other.db, libraryA, { title: 'Gamma' }));
    expect(await total()).toBe(before + 1);

    const shelf = await d.inject({ method: 'POST', url: '/api/v1/shelves', headers: bearer(admin.token), payload: { name: 'Counted', icon: 'book', iconType: 'LUCIDE' } });
    expect(shelf.statusCode).toBe(201);
    const shelfId = shelf.json().id as number;
    const shelve = (ids: number[]) =>
      d.inject({ method: 'POST', url: '/api/v1/books/shelves', headers: bearer(admin.token), payload: { bookIds: ids, shelvesToAssign: [shelfId], shelvesToUnassign: [] } });
    expect((await shelve([bookA])).statusCode).toBe(200);
    const count = async (): Promise<number> => ((await get(`/api/v1/books/${bookA}`, admin.token)).json().shelves as { bookCount: number }[])[0]?.bookCount ?? -1;
    expect(await count()).toBe(1);
    expect((await shelve([bookB])).statusCode).toBe(200);
    expect(await count()).toBe(2);
    await writtenElsewhere(d.store, () => other.db.deleteFrom('book_shelf_mapping').where('book_id', '=', bookB).execute());
    expect(await count()).toBe(1);
  });
});

describe('cached pages of the book list', () => {
  type Page = { content: { id: number; metadata: { title: string }; shelves?: unknown[] }[]; page: { totalElements: number } };
  const page = async (token: string, query = 'size=50') => {
    const res = await get(`/api/v1/books/page?${query}`, token);
    expect(res.statusCode).toBe(200);
    return { res, body: res.json() as Page, titles: (res.json() as Page).content.map((b) => b.metadata.title) };
  };

  it('are the same bytes, with the same headers, as the page first built', async () => {
    const first = await page(admin.token, 'size=3&sort=metadata.title,desc');
    const again = await page(admin.token, 'size=3&sort=metadata.title,desc');
    expect(again.res.rawPayload.equals(first.res.rawPayload)).toBe(true);
    expect(again.res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(again.res.headers['content-type']).toBe(first.res.headers['content-type']);
    expect(again.res.headers['content-length']).toBe(first.res.headers['content-length']);
    // Another page, size or order is another answer.
    expect((await page(admin.token, 'size=2&sort=metadata.title,desc')).body.content).toHaveLength(2);
    expect((await page(admin.token, 'size=3&sort=metadata.title,asc')).titles).toEqual([...first.titles].sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' })).slice(0, 3));
  });

  it('are never served to a user who may see other books, nor across a change of what a user may see', async () => {
    const readerA = await d.createUser('pages-a', {}, [libraryA]);
    const readerB = await d.createUser('pages-b', {}, [libraryB]);
    const all = (await page(admin.token)).titles;
    expect(all).toEqual(expect.arrayContaining(['Alpha', 'Beta']));
    const seenByA = (await page(readerA.token)).titles;
    const seenByB = (await page(readerB.token)).titles;
    expect(seenByA).toContain('Alpha');
    expect(seenByA).not.toContain('Beta');
    expect(seenByB).toEqual(['Beta']);
    // Again, now from the cache: still each user's own page.
    expect((await page(readerB.token)).titles).toEqual(['Beta']);
    expect((await page(readerA.token)).titles).toEqual(seenByA);

    // The admin gives reader A library B through the API: the next page shows it.
    const put = await d.inject({ method: 'PUT', url: `/api/v1/users/${readerA.id}`, headers: bearer(admin.token), payload: { assignedLibraries: [libraryA, libraryB] } });
    expect(put.statusCode).toBe(200);
    expect((await page(readerA.token)).titles).toContain('Beta');
    // Another process takes it away again.
    await writtenElsewhere(d.store, () => other.db.deleteFrom('user_library_mapping').where('user_id', '=', readerA.id).where('library_id', '=', libraryB).execute());
    expect((await page(readerA.token)).titles).not.toContain('Beta');
  });

  it('follow a write by the daemon and a write by another process on the next request', async () => {
    const before = await page(admin.token);
    // The daemon: the admin shelves a book, and its page entry carries the shelf from the next request on.
    const shelf = await d.inject({ method: 'POST', url: '/api/v1/shelves', headers: bearer(admin.token), payload: { name: 'Paged', icon: 'book', iconType: 'LUCIDE' } });
    expect(shelf.statusCode).toBe(201);
    const shelve = await d.inject({
      method: 'POST',
      url: '/api/v1/books/shelves',
      headers: bearer(admin.token),
      payload: { bookIds: [bookB], shelvesToAssign: [shelf.json().id as number], shelvesToUnassign: [] },
    });
    expect(shelve.statusCode).toBe(200);
    const shelved = await page(admin.token);
    expect(shelved.body.content.find((b) => b.id === bookB)?.shelves).toEqual([expect.objectContaining({ name: 'Paged' })]);
    expect(before.body.content.find((b) => b.id === bookB)?.shelves ?? []).not.toContainEqual(expect.objectContaining({ name: 'Paged' }));

    // Another process (the CLI) renames a book and adds one.
    await writtenElsewhere(d.store, () => other.db.updateTable('book_metadata').set({ title: 'Beta, renamed' }).where('book_id', '=', bookB).execute());
    const renamed = await page(admin.token);
    expect(renamed.titles).toContain('Beta, renamed');
    expect(renamed.titles).not.toContain('Beta');
    await writtenElsewhere(d.store, () => seedBook(other.db, libraryA, { title: 'Delta' }));
    const added = await page(admin.token);
    expect(added.titles).toContain('Delta');
    expect(added.body.page.totalElements).toBe(renamed.body.page.totalElements + 1);
  });
});

describe('CatalogBytesCache', () => {
  it('keeps answers until the catalog changes, and at most its size, dropping the least recently used', async () => {
    const cache = new CatalogBytesCache(3 * 1300, 2000);
    let computed = 0;
    const text = (key: string) => () => {
      computed++;
      return `${key}:${'x'.repeat(1000)}`;
    };
    const get = (key: string) => cache.get(d.store, key, text(key));
    get('a');
    get('b');
    get('c');
    expect(computed).toBe(3);
    expect(get('a').toString()).toMatch(/^a:x+$/);
    expect(computed).toBe(3);
    get('d'); // over the size: 'b', the least recently used, goes
    expect(cache.size.entries).toBe(3);
    expect(cache.size.bytes).toBeLessThanOrEqual(3 * 1300);
    get('a');
    get('c');
    expect(computed).toBe(4);
    get('b');
    expect(computed).toBe(5);
    // Any committed write, here by another connection, empties it.
    await writtenElsewhere(d.store, () => Promise.resolve(other.exec.run("INSERT INTO app_settings (name, val) VALUES ('bytes_cache_test', '1') ON CONFLICT(name) DO UPDATE SET val = app_settings.val || '1'")));
    get('a');
    expect(computed).toBe(6);
    // An answer larger than a single entry may be is sent but not kept.
    const held = cache.size;
    const big = () => cache.get(d.store, 'big', text('y'.repeat(3000)));
    expect(big().length).toBe(3000 + 1 + 1000);
    big();
    expect(computed).toBe(8);
    expect(cache.size).toEqual(held);
  });

  it('drops in the order of last use however often each answer was asked for', () => {
    const cache = new CatalogBytesCache(4 * 1300, 2000);
    const text = (key: string) => () => `${key}:${'x'.repeat(1000)}`;
    const get = (key: string) => cache.get(d.store, key, text(key));
    for (const key of ['a', 'b', 'c', 'd']) get(key);
    // Asked for again and again, in turns: the order is now b, a, d, c from the oldest.
    for (let i = 0; i < 5; i++) for (const key of ['c', 'a', 'd', 'c']) get(key);
    get('b');
    get('a');
    get('d');
    get('c');
    const kept = (key: string): boolean => cache.lookup(d.store, key) !== undefined;
    get('e'); // over the size: 'b' goes
    expect(['a', 'c', 'd', 'e'].every(kept) && !kept('b')).toBe(true);
    get('f'); // then the least recently used of those just looked up: 'a'
    expect(kept('a')).toBe(false);
    expect(cache.size.entries).toBe(4);
  });

  it('counts what an entry holds besides its bytes (its compressed copies) in its size, and stays within it', () => {
    const cache = new CatalogBytesCache(3 * 1300, 2000);
    const [a, b, c] = ['a', 'b', 'c'].map((key) => cache.get(d.store, key, () => `${key}:${'x'.repeat(1000)}`)) as [Buffer, Buffer, Buffer];
    const held = cache.size.bytes;
    cache.grow('b', b, 200);
    expect(cache.size).toEqual({ entries: 3, bytes: held + 200 });
    // Over the size: 'a', the least recently used, goes.
    cache.grow('c', c, 400);
    expect(cache.size.entries).toBe(2);
    expect(cache.size.bytes).toBeLessThanOrEqual(3 * 1300);
    expect(cache.size.bytes).toBe(held + 600 - (held / 3));
    // Bytes of an entry no longer kept, or of other bytes under a kept key, are not counted.
    const now = cache.size;
    cache.grow('a', a, 100);
    cache.grow('b', Buffer.from(b), 100);
    expect(cache.size).toEqual(now);
  });

  it('drops answers when they expire, without waiting for the next request', async () => {
    const expired: number[] = [];
    const cache = new CatalogBytesCache(1 << 20, 1 << 16, 50, (bytes) => expired.push(bytes));
    cache.get(d.store, 'a', () => 'first');
    cache.get(d.store, 'b', () => 'second');
    expect(cache.size.entries).toBe(2);
    const held = cache.size.bytes;
    for (let i = 0; i < 100 && cache.size.entries > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(cache.size).toEqual({ entries: 0, bytes: 0 });
    expect(expired.reduce((a, b) => a + b, 0)).toBe(held);
    // Kept again afterwards, and dropped again in turn.
    expect(cache.get(d.store, 'a', () => 'third').toString()).toBe('third');
    expect(cache.size.entries).toBe(1);
    for (let i = 0; i < 100 && cache.size.entries > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(cache.size.entries).toBe(0);
  });

  it('does not keep what it read while a write transaction was open, which may yet roll back', async () => {
    const cache = new CatalogBytesCache(1 << 20);
    const count = async (exec: SqlExec = d.store.exec): Promise<string> => String((await exec.get('SELECT count(*) AS n FROM book'))?.n);
    const committed = await count();
    let seenInside = '';
    await expect(
      d.store.write(async ({ db, exec }) => {
        await db.insertInto('book').values({ library_id: libraryA }).execute();
        const inside = await count(exec);
        seenInside = cache.get(d.store, 'books', () => inside).toString();
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(Number(seenInside)).toBe(Number(committed) + 1);
    // Not kept: asked again after the rollback, the cache computes the committed count.
    const after = await count();
    expect(cache.get(d.store, 'books', () => after).toString()).toBe(committed);
  });
});

describe('CatalogMemo', () => {
  it('shares one load of a key among the callers asking while it loads, then keeps its value', async () => {
    const memo = new CatalogMemo<string, number>(10);
    let loads = 0;
    const load = async (): Promise<number> => {
      loads++;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return 42;
    };
    expect(await Promise.all([memo.getAsync(d.store, 'shared', load), memo.getAsync(d.store, 'shared', load)])).toEqual([42, 42]);
    expect(loads).toBe(1);
    expect(await memo.getAsync(d.store, 'shared', load)).toBe(42);
    expect(loads).toBe(1);
  });

  it('does not keep what it read while a write transaction was open, which may yet roll back', async () => {
    const memo = new CatalogMemo<string, number>(10);
    const books = async (exec: SqlExec = d.store.exec): Promise<number> => (await exec.get('SELECT count(*) AS n FROM book'))?.n as number;
    const committed = await books();
    let seenInside = 0;
    await expect(
      d.store.write(async ({ db, exec }) => {
        await db.insertInto('book').values({ library_id: libraryA }).execute();
        const inside = await books(exec);
        seenInside = memo.get(d.store, 'books', () => inside);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(seenInside).toBe(committed + 1);
    // Not kept: asked again after the rollback, the memo computes the committed count.
    const after = await books();
    expect(memo.get(d.store, 'books', () => after)).toBe(committed);
  });
});

describe('verified tokens', () => {
  it('are kept only until they expire', async () => {
    const token = await signToken(d.ctx.jwtSecret, { userId: admin.id, username: 'admin', isDefaultPassword: false, sessionVersion: 0 }, 'access', 60);
    expect(await verifyToken(d.ctx.jwtSecret, token)).toEqual({ userId: admin.id, username: 'admin', sessionVersion: 0 });
    expect(await verifyToken(d.ctx.jwtSecret, token)).toEqual({ userId: admin.id, username: 'admin', sessionVersion: 0 });
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61_000 });
    expect(await verifyToken(d.ctx.jwtSecret, token)).toBeUndefined();
    expect((await get(`/api/v1/books/${bookA}`, token)).statusCode).toBe(401);
  });

  it('are kept per signing secret', async () => {
    const token = await signToken(d.ctx.jwtSecret, { userId: admin.id, username: 'admin', isDefaultPassword: false, sessionVersion: 0 }, 'access', 60);
    expect(await verifyToken(d.ctx.jwtSecret, token)).toBeDefined();
    expect(await verifyToken(new Uint8Array(48), token)).toBeUndefined();
  });
});
