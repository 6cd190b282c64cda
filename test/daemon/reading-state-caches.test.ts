// Reading progress is written apart from the catalog (Store.readingState): a device reporting progress must keep the
// feeds' kept lists, counts and name lists, while every answer that shows progress shows the new value at once, also
// when the progress was written by another connection (a second process on the SQLite file, a replica on PostgreSQL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { hashPassword } from '../../src/core/users/users.ts';
import { sameGeneration } from '../../src/core/store/snapshot.ts';
import { pageCacheSize } from '../../src/daemon/page-cache.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

let d: TestDaemon;
let other: Store;
let user: { id: number; token: string };
const books: number[] = [];
/** Statements over the whole catalog (ordered id lists, totals) the daemon read aside: each is a list or count built. */
let listsBuilt = 0;

const basic = `Basic ${Buffer.from('reader:reader-password').toString('base64')}`;
const komga = async (url: string): Promise<Record<string, unknown>> => {
  const response = await d.inject({ method: 'GET', url: `/komga/api/v1${url}`, headers: { authorization: basic } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
};
const app = async (url: string): Promise<Record<string, unknown>> => {
  const response = await d.inject({ method: 'GET', url, headers: { authorization: `Bearer ${user.token}` } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
};
const komgaProgress = (bookId: number, body: object) =>
  d.inject({ method: 'PATCH', url: `/komga/api/v1/books/${bookId}/read-progress`, headers: { authorization: basic, 'content-type': 'application/json' }, payload: body });
const appProgress = (bookId: number, percent: number) =>
  d.inject({ method: 'PUT', url: `/api/v1/app/books/${bookId}/progress`, headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' }, payload: { epubProgress: { cfi: 'epubcfi(/6/2!/4/2)', percentage: percent } } });

/**
 * Waits until another connection's change has reached the daemon (PostgreSQL: its NOTIFY): by default a change of
 * reading state; pass the daemon's store for a change of the catalog.
 */
async function seenByDaemon(before: ReturnType<Store['generation']>, source: { generation(): ReturnType<Store['generation']> } = d.store.readingState): Promise<void> {
  for (let i = 0; i < 200 && sameGeneration(before, source.generation()); i++) await new Promise((r) => setTimeout(r, 10));
  expect(sameGeneration(before, source.generation())).toBe(false);
}

/** Marks the book read for the user through the other connection, and waits until the daemon has seen it. */
async function markReadElsewhere(bookId: number, before: ReturnType<Store['generation']>): Promise<void> {
  await other.readingState.db
    .insertInto('user_book_progress')
    .values({ user_id: user.id, book_id: bookId, read_status: 'READ', last_read_time: new Date().toISOString() })
    .onConflict((oc) => oc.columns(['user_id', 'book_id']).doUpdateSet({ read_status: 'READ' }))
    .execute();
  await seenByDaemon(before);
}

beforeAll(async () => {
  d = await startTestDaemon();
  const library = await seedLibrary(d.store.db, d.dir, 'Shelf');
  for (const [i, title] of ['Alpha', 'Beta', 'Gamma'].entries()) {
    const { bookId } = await seedBook(d.store.db, library, { title });
    await d.store.db.updateTable('book_metadata').set({ series_name: 'Saga', series_number: i + 1 }).where('book_id', '=', bookId).execute();
    books.push(bookId);
  }
  user = await d.createUser('reader', { admin: true });
  await d.store.db.insertInto('opds_user_v2').values({ user_id: user.id, username: 'reader', password_hash: await hashPassword('reader-password') }).execute();
  await d.store.db.insertInto('app_settings').values({ name: 'komga_api_enabled', val: 'true' }).onConflict((oc) => oc.column('name').doUpdateSet({ val: 'true' })).execute();
  const readAside = d.store.readAside.bind(d.store);
  d.store.readAside = (sql, params) => {
    listsBuilt++;
    return readAside(sql, params);
  };
  other = await openStore(d.store.path);
});

afterAll(async () => {
  await other.close();
  await d.close();
});

describe('a progress write', () => {
  it('moves the reading generation and leaves the catalog generation alone', async () => {
    const catalog = d.store.generation();
    const reading = d.store.readingState.generation();
    expect((await appProgress(books[0] as number, 10)).statusCode).toBe(200);
    expect(sameGeneration(catalog, d.store.generation())).toBe(true);
    expect(sameGeneration(reading, d.store.readingState.generation())).toBe(false);
  });

  it('keeps the Komga and app lists and counts, and the pages show the new progress at once', async () => {
    const [alpha, beta] = books as [number, number];
    // Built once, then kept.
    const komgaBooks = async () => (await komga('/books?sort=metadata.numberSort,asc&size=2')).content as { id: string; readProgress: { completed: boolean; page: number } | null }[];
    const appBooks = async () => (await app('/api/v1/app/books?page=0&size=2&sort=title&dir=asc')).content as { id: number; readStatus: string | null; progress?: unknown }[];
    const komgaSeries = async () => (await komga('/series')).content as { name: string; booksReadCount: number }[];
    const webPage = async () => ((await app('/api/v1/books/page?page=0&size=10')) as { content: { id: number; readStatus?: string }[] }).content;
    await Promise.all([komgaBooks(), appBooks(), komgaSeries(), webPage()]);
    const built = listsBuilt;

    expect((await komgaProgress(alpha, { completed: true })).statusCode).toBe(204);
    const afterKomga = await komgaBooks();
    expect(afterKomga.find((b) => b.id === String(alpha))?.readProgress?.completed).toBe(true);
    expect((await app(`/api/v1/app/books/${alpha}`)).readStatus).toBe('READ');
    expect((await appBooks()).find((b) => b.id === alpha)?.readStatus).toBe('READ');
    const series = await komgaSeries();
    expect(series.find((s) => s.name === 'Saga')?.booksReadCount).toBe(1);

    expect((await appProgress(beta, 42)).statusCode).toBe(200);
    expect((await app(`/api/v1/app/books/${beta}`)).readStatus).toBe('READING');
    expect((await webPage()).find((b) => b.id === beta)?.readStatus).toBe('READING');

    // No list, total or name list was built again for any of that: the pages were rebuilt from what was kept.
    expect(listsBuilt).toBe(built);
  });

  it('keeps a kept name list page: only pages that show reading state are built again', async () => {
    await komga('/genres');
    const built = pageCacheSize(d.ctx).builds;
    expect((await appProgress(books[2] as number, 5)).statusCode).toBe(200);
    await komga('/genres');
    expect(pageCacheSize(d.ctx).builds).toBe(built);
    await komga('/books?size=2');
    expect(pageCacheSize(d.ctx).builds).toBe(built + 1);
  });

  it('keeps a name-list page whose route has a path parameter (a library) too', async () => {
    const [library] = (await komga('/libraries')) as unknown as { id: string }[];
    await komga(`/libraries/${library?.id}`);
    const built = pageCacheSize(d.ctx).builds;
    expect((await appProgress(books[1] as number, 7)).statusCode).toBe(200);
    expect(await komga(`/libraries/${library?.id}`)).toMatchObject({ id: library?.id });
    expect(pageCacheSize(d.ctx).builds).toBe(built);
  });

  it('changes at once the lists and totals that filter by read status', async () => {
    const [alpha, , gamma] = books as [number, number, number];
    const komgaRead = async () => (await komga('/books?read_status=READ&size=5')).totalElements;
    const appRead = async () => (await app('/api/v1/app/books?page=0&size=5&status=READ')).totalElements;
    const before = { komga: await komgaRead(), app: await appRead() };
    // Kept: asked again at once, the same.
    expect(await komgaRead()).toBe(before.komga);
    expect((await komgaProgress(gamma, { completed: true })).statusCode).toBe(204);
    expect(await komgaRead()).toBe((before.komga as number) + 1);
    expect(await appRead()).toBe((before.app as number) + 1);
    expect((await d.inject({ method: 'DELETE', url: `/komga/api/v1/books/${alpha}/read-progress`, headers: { authorization: basic } })).statusCode).toBe(204);
    expect(await komgaRead()).toBe(before.komga);
    expect(await appRead()).toBe(before.app);
  });

  it('made by another connection is seen at once, and the lists are still kept', async () => {
    const gamma = books[1] as number;
    await komga('/books?sort=metadata.numberSort,asc&size=5');
    const built = listsBuilt;
    const before = d.store.readingState.generation();
    const catalog = d.store.generation();
    await markReadElsewhere(gamma, before);
    const content = (await komga('/books?sort=metadata.numberSort,asc&size=5')).content as { id: string; readProgress: { completed: boolean } | null }[];
    expect(content.find((b) => b.id === String(gamma))?.readProgress?.completed).toBe(true);
    expect((await app(`/api/v1/app/books/${gamma}`)).readStatus).toBe('READ');
    // PostgreSQL tells reading state apart across replicas; SQLite's data_version does not (the lists are rebuilt).
    if (d.store.engine === 'postgres') {
      expect(sameGeneration(catalog, d.store.generation())).toBe(true);
      expect(listsBuilt).toBe(built);
    }
  });
});

describe('the Unknown Series of Komga (books without a series)', () => {
  const unknown = async () => ((await komga('/series?size=50')).content as { name: string; booksCount: number; booksReadCount: number; booksInProgressCount: number }[]).find((s) => s.name === 'Unknown Series');

  it("counts the reader's read and started books after writes of this process and of another connection, and after the books move", async () => {
    const library = (await d.store.db.selectFrom('library').select('id').where('name', '=', 'Shelf').executeTakeFirstOrThrow()).id;
    const loose: number[] = [];
    for (const title of ['Loose One', 'Loose Two', 'Loose Three']) loose.push((await seedBook(d.store.db, library, { title })).bookId);
    const [one, two, three] = loose as [number, number, number];
    expect(await unknown()).toMatchObject({ booksCount: 3, booksReadCount: 0, booksInProgressCount: 0 });

    // This process: the count read aside and remembered must not outlive a progress write.
    expect((await komgaProgress(one, { completed: true })).statusCode).toBe(204);
    expect(await unknown()).toMatchObject({ booksCount: 3, booksReadCount: 1, booksInProgressCount: 0 });
    expect((await appProgress(two, 30)).statusCode).toBe(200);
    expect(await unknown()).toMatchObject({ booksCount: 3, booksReadCount: 1, booksInProgressCount: 1 });

    // Another connection (a second process, a replica).
    const before = d.store.readingState.generation();
    await markReadElsewhere(three, before);
    expect(await unknown()).toMatchObject({ booksCount: 3, booksReadCount: 2, booksInProgressCount: 1 });

    // A catalog change by another connection: a read book joins a named series and leaves the Unknown Series.
    const catalog = d.store.generation();
    await other.db.updateTable('book_metadata').set({ series_name: 'Saga', series_number: 9 }).where('book_id', '=', three).execute();
    await seenByDaemon(catalog, d.store);
    expect(await unknown()).toMatchObject({ booksCount: 2, booksReadCount: 1, booksInProgressCount: 1 });
  });
});

