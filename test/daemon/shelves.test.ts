import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { writeFileSync } from 'node:fs';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let d: TestDaemon;
let lib: TempLibrary;
let sharedLibrary: number;
let visibleBooks: number[];
let hiddenBook: number;
let reader: { id: number; token: string };
let other: { id: number; token: string };
let admin: { id: number; token: string };

beforeEach(async () => {
  d = await startTestDaemon();
  lib = makeTempLibrary();
  await writeSimpleEpub(lib.path('a', 'dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
  await writeSimpleEpub(lib.path('b', 'emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
  writeFileSync(lib.path('notes.txt'), 'not a book');
  const library = await createLibrary(d.store.db, { name: 'Shared', paths: [lib.root] });
  await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  sharedLibrary = library.id;
  visibleBooks = (await d.store.db.selectFrom('book').select('id').where('library_id', '=', library.id).orderBy('id').execute()).map((b) => b.id);
  const secret = await seedLibrary(d.store.db, lib.root + '-private', 'Private');
  hiddenBook = (await seedBook(d.store.db, secret, { title: 'Secret diary' })).bookId;
  reader = await d.createUser('reader', {}, [sharedLibrary]);
  other = await d.createUser('other', {}, [sharedLibrary]);
  admin = await d.createUser('admin', { admin: true });
});
afterEach(async () => {
  await d.close();
  lib.cleanup();
});

const call = (token: string | undefined, options: InjectOptions) =>
  d.inject({ ...options, headers: { ...(options.headers ?? {}), ...(token ? { authorization: `Bearer ${token}` } : {}) } });
const favoritesOf = async (userId: number): Promise<number> =>
  (await d.store.db.selectFrom('shelf').select('id').where('user_id', '=', userId).where('name', '=', 'Favorites').executeTakeFirstOrThrow()).id;
const create = (token: string, body: Record<string, unknown>) => call(token, { method: 'POST', url: '/api/v1/shelves', payload: body });
const assign = (token: string, body: Record<string, unknown>) => call(token, { method: 'POST', url: '/api/v1/books/shelves', payload: body });

describe('shelf CRUD', () => {
  it('lists the caller\'s own shelves and public ones, never another user\'s private shelf', async () => {
    expect(visibleBooks).toHaveLength(2);
    await create(other.token, { name: 'Other private' });
    const pub = (await create(admin.token, { name: 'Staff picks', icon: 'star', iconType: 'LUCIDE', publicShelf: true })).json() as { id: number };

    const res = await call(reader.token, { method: 'GET', url: '/api/v1/shelves' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([
      { id: await favoritesOf(reader.id), name: 'Favorites', icon: 'heart', iconType: 'LUCIDE', userId: reader.id, publicShelf: false, bookCount: 0 },
      { id: pub.id, name: 'Staff picks', icon: 'star', iconType: 'LUCIDE', userId: admin.id, publicShelf: true, bookCount: 0 },
    ]);
    expect((await call(undefined, { method: 'GET', url: '/api/v1/shelves' })).statusCode).toBe(401);
  });

  it('creates (201), reads, renames and deletes a shelf of one\'s own', async () => {
    const created = await create(reader.token, { name: 'To read', icon: 'book', iconType: 'LUCIDE', publicShelf: false });
    expect(created.statusCode).toBe(201);
    const shelf = created.json() as { id: number };
    expect(shelf).toEqual({ id: expect.any(Number), name: 'To read', icon: 'book', iconType: 'LUCIDE', userId: reader.id, publicShelf: false, bookCount: 0 });

    expect((await call(reader.token, { method: 'GET', url: `/api/v1/shelves/${shelf.id}` })).json()).toEqual(shelf);
    const renamed = await call(reader.token, { method: 'PUT', url: `/api/v1/shelves/${shelf.id}`, payload: { name: 'Next up', icon: null } });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toEqual({ id: shelf.id, name: 'Next up', userId: reader.id, publicShelf: false, bookCount: 0 });

    const gone = await call(reader.token, { method: 'DELETE', url: `/api/v1/shelves/${shelf.id}` });
    expect(gone.statusCode).toBe(204);
    expect(await d.store.db.selectFrom('shelf').select('id').where('id', '=', shelf.id).executeTakeFirst()).toBeUndefined();
    expect((await call(reader.token, { method: 'GET', url: `/api/v1/shelves/${shelf.id}` })).statusCode).toBe(403);
  });

  it('refuses duplicates (409), public shelves from non-admins (403), blank names and ids (400)', async () => {
    const dup = await create(reader.token, { name: 'favorites' });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toMatchObject({ status: 409, message: 'Shelf already exists: favorites' });
    const pub = await create(reader.token, { name: 'Mine for all', publicShelf: true });
    expect(pub.statusCode).toBe(403);
    expect(pub.json()).toMatchObject({ message: 'Access denied.' });
    expect((await create(reader.token, { name: '   ' })).statusCode).toBe(400);
    expect((await create(reader.token, {})).statusCode).toBe(400);
    expect((await create(reader.token, { id: 5, name: 'With id' })).statusCode).toBe(400);
    expect((await create(reader.token, { name: 'Odd icon', iconType: 'EMOJI' })).statusCode).toBe(400);

    const second = (await create(reader.token, { name: 'Second' })).json() as { id: number };
    const clash = await call(reader.token, { method: 'PUT', url: `/api/v1/shelves/${second.id}`, payload: { name: 'Favorites' } });
    expect(clash.statusCode).toBe(400);
    expect((await call(reader.token, { method: 'PUT', url: `/api/v1/shelves/${second.id}`, payload: { name: 'Second', publicShelf: true } })).statusCode).toBe(403);
  });

  it('keeps other users out: private shelves unreadable, no one but the owner edits or deletes', async () => {
    const mine = (await create(reader.token, { name: 'Private' })).json() as { id: number };
    const pub = (await create(admin.token, { name: 'Public', publicShelf: true })).json() as { id: number };
    expect((await call(other.token, { method: 'GET', url: `/api/v1/shelves/${mine.id}` })).statusCode).toBe(403);
    expect((await call(other.token, { method: 'GET', url: `/api/v1/shelves/${mine.id}/books` })).statusCode).toBe(403);
    expect((await call(other.token, { method: 'PUT', url: `/api/v1/shelves/${mine.id}`, payload: { name: 'Mine now' } })).statusCode).toBe(403);
    expect((await call(other.token, { method: 'DELETE', url: `/api/v1/shelves/${mine.id}` })).statusCode).toBe(403);
    expect((await call(admin.token, { method: 'DELETE', url: `/api/v1/shelves/${mine.id}` })).statusCode).toBe(403);
    expect((await call(other.token, { method: 'GET', url: `/api/v1/shelves/${pub.id}` })).statusCode).toBe(200);
    expect((await call(other.token, { method: 'DELETE', url: `/api/v1/shelves/${pub.id}` })).statusCode).toBe(403);
    expect((await call(other.token, { method: 'GET', url: '/api/v1/shelves/987654' })).statusCode).toBe(403);
    expect((await call(other.token, { method: 'GET', url: '/api/v1/shelves/abc' })).statusCode).toBe(400);
    expect((await call(reader.token, { method: 'GET', url: `/api/v1/shelves/${mine.id}` })).statusCode).toBe(200);
  });
});

describe('books on shelves', () => {
  it('assigns and unassigns books, answering the books with their shelves', async () => {
    const favorites = await favoritesOf(reader.id);
    const later = (await create(reader.token, { name: 'Later' })).json() as { id: number };
    const res = await assign(reader.token, { bookIds: visibleBooks, shelvesToAssign: [favorites, later.id] });
    expect(res.statusCode).toBe(200);
    const books = res.json() as { id: number; metadata: { title: string }; shelves: { id: number; name: string; bookCount: number }[]; primaryFile: { bookType: string } }[];
    expect(books.map((b) => b.id)).toEqual(visibleBooks);
    expect(books.map((b) => b.metadata.title).sort()).toEqual(['Dune', 'Emma']);
    expect(books[0]?.primaryFile.bookType).toBe('EPUB');
    expect(books[0]?.shelves.map((s) => [s.name, s.bookCount])).toEqual([['Favorites', 2], ['Later', 2]]);

    const after = await assign(reader.token, { bookIds: [visibleBooks[0]], shelvesToUnassign: [later.id] });
    expect((after.json() as { shelves: { name: string }[] }[])[0]?.shelves.map((s) => s.name)).toEqual(['Favorites']);
    expect((await call(reader.token, { method: 'GET', url: `/api/v1/shelves/${later.id}` })).json()).toMatchObject({ bookCount: 1 });

    const onFavorites = (await call(reader.token, { method: 'GET', url: `/api/v1/shelves/${favorites}/books` })).json() as { id: number; shelves: { id: number }[] }[];
    expect(onFavorites.map((b) => b.id)).toEqual(visibleBooks);
    expect(onFavorites[1]?.shelves.map((s) => s.id)).toEqual([favorites, later.id]);
  });

  it('shows a book\'s shelves per user: one\'s own and public ones only', async () => {
    const pub = (await create(admin.token, { name: 'Public', publicShelf: true })).json() as { id: number };
    await assign(admin.token, { bookIds: [visibleBooks[0]], shelvesToAssign: [pub.id] });
    await assign(other.token, { bookIds: [visibleBooks[0]], shelvesToAssign: [await favoritesOf(other.id)] });
    const mine = await assign(reader.token, { bookIds: [visibleBooks[0]], shelvesToAssign: [await favoritesOf(reader.id)] });
    const shelves = (mine.json() as { shelves: { name: string; userId: number }[] }[])[0]?.shelves;
    // Other's Favorites is left out; the reader's own (created with the account, so first) and the public one stay.
    expect(shelves?.map((s) => [s.name, s.userId])).toEqual([['Favorites', reader.id], ['Public', admin.id]]);
  });

  it('filters a public shelf\'s books and count by what the caller may see', async () => {
    const pub = (await create(admin.token, { name: 'Everything', publicShelf: true })).json() as { id: number };
    expect((await assign(admin.token, { bookIds: [...visibleBooks, hiddenBook], shelvesToAssign: [pub.id] })).statusCode).toBe(200);
    expect((await call(admin.token, { method: 'GET', url: `/api/v1/shelves/${pub.id}` })).json()).toMatchObject({ bookCount: 3 });
    expect((await call(reader.token, { method: 'GET', url: `/api/v1/shelves/${pub.id}` })).json()).toMatchObject({ bookCount: 2 });
    const books = (await call(reader.token, { method: 'GET', url: `/api/v1/shelves/${pub.id}/books` })).json() as { id: number }[];
    expect(books.map((b) => b.id)).toEqual(visibleBooks);
  });

  it('refuses other users\' shelves (401, as Grimmory), hidden books (403) and unknown books (404)', async () => {
    const pub = (await create(admin.token, { name: 'Public', publicShelf: true })).json() as { id: number };
    const foreign = await assign(reader.token, { bookIds: visibleBooks, shelvesToAssign: [pub.id] });
    expect(foreign.statusCode).toBe(401);
    expect(foreign.json()).toMatchObject({ status: 401, message: 'Cannot assign shelves that do not belong to the user.' });
    expect((await assign(reader.token, { bookIds: visibleBooks, shelvesToUnassign: [await favoritesOf(other.id)] })).json()).toMatchObject({ message: 'Cannot unassign shelves that do not belong to the user.' });
    const favorites = await favoritesOf(reader.id);
    expect((await assign(reader.token, { bookIds: [hiddenBook], shelvesToAssign: [favorites] })).statusCode).toBe(403);
    expect((await assign(reader.token, { bookIds: [visibleBooks[0], 55555], shelvesToAssign: [favorites] })).statusCode).toBe(404);
    expect(await d.store.db.selectFrom('book_shelf_mapping').selectAll().execute()).toEqual([]);
    expect((await assign(reader.token, { bookIds: null, shelvesToAssign: null })).json()).toEqual([]);
    expect((await assign(reader.token, { bookIds: ['x'] })).statusCode).toBe(400);
  });

  it('drops a deleted shelf from its books', async () => {
    const temp = (await create(reader.token, { name: 'Temp' })).json() as { id: number };
    await assign(reader.token, { bookIds: visibleBooks, shelvesToAssign: [temp.id] });
    await call(reader.token, { method: 'DELETE', url: `/api/v1/shelves/${temp.id}` });
    expect(await d.store.db.selectFrom('book_shelf_mapping').selectAll().execute()).toEqual([]);
  });
});
