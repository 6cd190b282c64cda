// What the daemon keeps between requests (verified tokens, principals, counts) must never outlive a change: each of
// these makes a change and checks that the very next request sees it.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { signToken, verifyToken } from '../../src/core/auth/tokens.ts';
import { CatalogMemo } from '../../src/core/store/snapshot.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

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

    expect((await put({ permissions: { admin: true }, assignedLibraries: [libraryA] })).statusCode).toBe(200);
    expect((await get('/api/v1/users', reader.token)).statusCode).toBe(200);
    expect((await put({ permissions: { admin: false }, assignedLibraries: [libraryA] })).statusCode).toBe(200);
    expect((await get('/api/v1/users', reader.token)).statusCode).toBe(403);
    expect((await get(`/api/v1/books/${bookB}`, reader.token)).statusCode).toBe(403);
  });

  it('see changes committed by another process on the next request', async () => {
    const reader = await d.createUser('reader-cli', {}, [libraryA, libraryB]);
    expect((await get(`/api/v1/books/${bookB}`, reader.token)).statusCode).toBe(200);

    await other.db.deleteFrom('user_library_mapping').where('user_id', '=', reader.id).where('library_id', '=', libraryB).execute();
    expect((await get(`/api/v1/books/${bookB}`, reader.token)).statusCode).toBe(403);

    await other.db.insertInto('user_content_restriction').values({ user_id: reader.id, restriction_type: 'CONTENT_RATING', mode: 'ALLOW_ONLY', value: 'everyone' }).execute();
    expect((await get(`/api/v1/books/${bookA}`, reader.token)).statusCode).toBe(403);
    await other.db.deleteFrom('user_content_restriction').where('user_id', '=', reader.id).execute();
    expect((await get(`/api/v1/books/${bookA}`, reader.token)).statusCode).toBe(200);

    await other.db.updateTable('user_permissions').set({ permission_admin: 1 }).where('user_id', '=', reader.id).execute();
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
    await seedBook(other.db, libraryA, { title: 'Gamma' });
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
    await other.db.deleteFrom('book_shelf_mapping').where('book_id', '=', bookB).execute();
    expect(await count()).toBe(1);
  });
});

describe('CatalogMemo', () => {
  it('does not keep what it read while a write transaction was open, which may yet roll back', async () => {
    const memo = new CatalogMemo<string, number>(10);
    const books = (): number => d.store.sqlite.prepare('SELECT count(*) FROM book').pluck().get() as number;
    const committed = memo.get(d.store.sqlite, 'books', books);
    let seenInside = 0;
    await expect(
      d.store.db.transaction().execute(async (trx) => {
        await trx.insertInto('book').values({ library_id: libraryA }).execute();
        seenInside = memo.get(d.store.sqlite, 'books', books);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(seenInside).toBe(committed + 1);
    expect(memo.get(d.store.sqlite, 'books', books)).toBe(committed);
  });
});

describe('verified tokens', () => {
  it('are kept only until they expire', async () => {
    const token = await signToken(d.ctx.jwtSecret, { userId: admin.id, username: 'admin', isDefaultPassword: false }, 60);
    expect(await verifyToken(d.ctx.jwtSecret, token)).toEqual({ userId: admin.id, username: 'admin' });
    expect(await verifyToken(d.ctx.jwtSecret, token)).toEqual({ userId: admin.id, username: 'admin' });
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61_000 });
    expect(await verifyToken(d.ctx.jwtSecret, token)).toBeUndefined();
    expect((await get(`/api/v1/books/${bookA}`, token)).statusCode).toBe(401);
  });

  it('are kept per signing secret', async () => {
    const token = await signToken(d.ctx.jwtSecret, { userId: admin.id, username: 'admin', isDefaultPassword: false }, 60);
    expect(await verifyToken(d.ctx.jwtSecret, token)).toBeDefined();
    expect(await verifyToken(new Uint8Array(48), token)).toBeUndefined();
  });
});
