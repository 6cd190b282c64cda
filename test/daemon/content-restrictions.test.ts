// Content restrictions over the API: admins manage them, users read their own, and the book list follows at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

let d: TestDaemon;
let admin: string;
let reader: { id: number; token: string };
let other: { id: number; token: string };
const ids: Record<string, number> = {};
let libraryId: number;

async function tag(bookId: number, name: string): Promise<void> {
  const known = await d.store.db.selectFrom('tag').select('id').where('name', '=', name).executeTakeFirst();
  const { id } = known ?? (await d.store.db.insertInto('tag').values({ name }).returning('id').executeTakeFirstOrThrow());
  await d.store.db.insertInto('book_metadata_tag_mapping').values({ book_id: bookId, tag_id: id }).execute();
}

beforeAll(async () => {
  d = await startTestDaemon();
  admin = await d.setupAdmin();
  libraryId = await seedLibrary(d.store.db, d.dir, 'Books');
  for (const title of ['Dracula', 'Emma', 'Dune']) ids[title] = (await seedBook(d.store.db, libraryId, { title })).bookId;
  await tag(ids.Dracula as number, 'Horror');
  reader = await d.createUser('reader', {}, [libraryId]);
  other = await d.createUser('other', {}, [libraryId]);
});
afterAll(() => d.close());

const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, token: string, payload?: unknown) =>
  d.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
const visibleTitles = async (): Promise<number[]> => ((await call('GET', '/api/v1/books', reader.token)).json() as { id: number }[]).map((b) => b.id).sort();

describe('content restrictions', () => {
  it('an admin adds one, it shows in the list, and the user stops seeing the book at once', async () => {
    expect(await visibleTitles()).toHaveLength(3);
    const created = await call('POST', `/api/v1/users/${reader.id}/content-restrictions`, admin, { restrictionType: 'TAG', mode: 'EXCLUDE', value: ' Horror ' });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ id: expect.any(Number), userId: reader.id, restrictionType: 'TAG', mode: 'EXCLUDE', value: 'Horror' });
    expect((created.json() as { createdAt: string }).createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/);
    expect(await visibleTitles()).toEqual([ids.Dune, ids.Emma].sort());
    expect((await call('GET', `/api/v1/books/${ids.Dracula}`, reader.token)).statusCode).toBe(403);

    const own = await call('GET', `/api/v1/users/${reader.id}/content-restrictions`, reader.token);
    expect(own.statusCode).toBe(200);
    expect(own.json()).toEqual([created.json()]);
  });

  it('refuses the same type and value twice, an empty value, and a bad enum', async () => {
    const again = await call('POST', `/api/v1/users/${reader.id}/content-restrictions`, admin, { restrictionType: 'TAG', mode: 'ALLOW_ONLY', value: 'Horror' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ status: 409, message: expect.stringContaining('Horror') });
    expect((await call('POST', `/api/v1/users/${reader.id}/content-restrictions`, admin, { restrictionType: 'TAG', mode: 'EXCLUDE', value: '   ' })).statusCode).toBe(400);
    const badType = await call('POST', `/api/v1/users/${reader.id}/content-restrictions`, admin, { restrictionType: 'GENRE', mode: 'EXCLUDE', value: 'x' });
    expect(badType.statusCode).toBe(400);
    expect(badType.json()).toMatchObject({ status: 400 });
  });

  it('keeps users out of other users\' restrictions and out of changing their own', async () => {
    expect((await call('GET', `/api/v1/users/${reader.id}/content-restrictions`, other.token)).statusCode).toBe(403);
    expect((await call('POST', `/api/v1/users/${reader.id}/content-restrictions`, reader.token, { restrictionType: 'TAG', mode: 'EXCLUDE', value: 'x' })).statusCode).toBe(403);
    expect((await call('DELETE', `/api/v1/users/${reader.id}/content-restrictions`, reader.token)).statusCode).toBe(403);
    expect((await d.inject({ method: 'GET', url: `/api/v1/users/${reader.id}/content-restrictions` })).statusCode).toBe(401);
  });

  it('answers an unknown user as Grimmory does (400) and an unknown restriction with 404', async () => {
    const unknown = await call('GET', '/api/v1/users/9999/content-restrictions', admin);
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ message: 'User not found: 9999' });
    expect((await call('DELETE', `/api/v1/users/${reader.id}/content-restrictions/9999`, admin)).statusCode).toBe(404);
  });

  it('PUT replaces the whole set; DELETE removes one, then all', async () => {
    const replaced = await call('PUT', `/api/v1/users/${reader.id}/content-restrictions`, admin, [
      { restrictionType: 'TAG', mode: 'EXCLUDE', value: 'Horror' },
      { restrictionType: 'AGE_RATING', mode: 'EXCLUDE', value: '16' },
    ]);
    expect(replaced.statusCode).toBe(200);
    const list = replaced.json() as { id: number; restrictionType: string }[];
    expect(list.map((r) => r.restrictionType)).toEqual(['TAG', 'AGE_RATING']);
    expect(await visibleTitles()).toEqual([ids.Dune, ids.Emma].sort());

    const tagRestriction = list[0] as { id: number };
    expect((await call('DELETE', `/api/v1/users/${reader.id}/content-restrictions/${tagRestriction.id}`, admin)).statusCode).toBe(204);
    expect(await visibleTitles()).toHaveLength(3);
    expect(((await call('GET', `/api/v1/users/${reader.id}/content-restrictions`, admin)).json() as unknown[]).length).toBe(1);

    expect((await call('DELETE', `/api/v1/users/${reader.id}/content-restrictions`, admin)).statusCode).toBe(204);
    expect((await call('GET', `/api/v1/users/${reader.id}/content-restrictions`, admin)).json()).toEqual([]);
  });

  it("the app's book list counts only what the reader sees, whole, by library and by shelf", async () => {
    // Tagged Horror too, but not the reader's to see or not listed at all: neither may be taken off their count.
    const elsewhere = await seedLibrary(d.store.db, d.dir, 'Elsewhere');
    await tag((await seedBook(d.store.db, elsewhere, { title: 'Carmilla' })).bookId, 'Horror');
    const removed = (await seedBook(d.store.db, libraryId, { title: 'The Monk' })).bookId;
    await tag(removed, 'Horror');
    await d.store.db.updateTable('book').set({ deleted: 1 }).where('id', '=', removed).execute();
    const shelf = await d.store.db.insertInto('shelf').values({ user_id: reader.id, name: 'Gothic' }).returning('id').executeTakeFirstOrThrow();
    await d.store.db.insertInto('book_shelf_mapping').values([ids.Dracula, ids.Emma].map((bookId) => ({ shelf_id: shelf.id, book_id: bookId as number }))).execute();
    const appList = async (query = ''): Promise<{ total: number; ids: number[] }> => {
      const body = (await call('GET', `/api/v1/app/books?size=50${query}`, reader.token)).json() as { totalElements: number; content: { id: number }[] };
      return { total: body.totalElements, ids: body.content.map((b) => b.id).sort() };
    };
    const restrict = async (restrictions: object[]): Promise<void> => {
      expect((await call('PUT', `/api/v1/users/${reader.id}/content-restrictions`, admin, restrictions)).statusCode).toBe(200);
    };

    await restrict([{ restrictionType: 'TAG', mode: 'EXCLUDE', value: 'Horror' }]);
    const seen = [ids.Dune, ids.Emma].sort();
    expect(await appList()).toEqual({ total: 2, ids: seen });
    expect(await appList(`&libraryId=${libraryId}`)).toEqual({ total: 2, ids: seen });
    expect(await appList(`&shelfId=${shelf.id}`)).toEqual({ total: 1, ids: [ids.Emma] });

    await restrict([{ restrictionType: 'TAG', mode: 'ALLOW_ONLY', value: 'Horror' }]);
    expect(await appList()).toEqual({ total: 1, ids: [ids.Dracula] });
    expect(await appList(`&shelfId=${shelf.id}`)).toEqual({ total: 1, ids: [ids.Dracula] });

    expect((await call('DELETE', `/api/v1/users/${reader.id}/content-restrictions`, admin)).statusCode).toBe(204);
    expect(await appList()).toEqual({ total: 3, ids: [ids.Dracula, ids.Dune, ids.Emma].sort() });
  });
});
