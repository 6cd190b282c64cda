import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { TRASH_FOLDER } from '../../src/core/books/book-delete.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coverDir } from '../../src/core/covers/cover-store.ts';
import { comicInfoXml, jpeg, writeZip } from '../helpers/comic-fixtures.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';
import { buildPdf } from '../helpers/pdf-fixtures.ts';

type Book = Record<string, unknown> & { id: number; metadata: Record<string, unknown> };

let d: TestDaemon;
let lib: TempLibrary;
let admin: { id: number; token: string };
let libraryId: number;
let otherLibraryId: number;
const ids: Record<string, number> = {};

const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const get = (url: string, token = admin.token) => d.inject({ method: 'GET', url, headers: auth(token) });

async function scansDone(): Promise<void> {
  while (d.ctx.background.size > 0) await Promise.allSettled([...d.ctx.background]);
}

beforeAll(async () => {
  d = await startTestDaemon();
  lib = makeTempLibrary();
  admin = await d.createUser('admin', { admin: true });
  await writeSimpleEpub(lib.path('main', 'Herbert', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], series: 'Dune Chronicles', seriesIndex: 1, isbn: '9780441013593', cover: '#2a6' });
  await writeSimpleEpub(lib.path('main', 'Austen', 'Emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
  const { writeFileSync, mkdirSync } = await import('node:fs');
  writeFileSync(lib.path('main', 'Manual.pdf'), await buildPdf({ title: 'The Manual', author: 'Tech Writer', pages: 3 }));
  await writeZip(lib.path('main', 'Saga 01.cbz'), [
    { name: 'ComicInfo.xml', data: comicInfoXml({ Title: 'Saga One', Series: 'Saga', Number: '1', Writer: 'Brian K. Vaughan', Penciller: 'Fiona Staples', Characters: 'Alana, Marko', Genre: 'Space Opera' }) },
    { name: 'p001.jpg', data: await jpeg('#c33', 40, 60) },
    { name: 'p002.jpg', data: await jpeg('#33c', 40, 60) },
  ]);
  mkdirSync(lib.path('other'), { recursive: true });
  await writeSimpleEpub(lib.path('other', 'Secret.epub'), { title: 'Secret Diary', authors: ['Someone'] });

  const create = async (name: string, path: string): Promise<number> => {
    const res = await d.inject({ method: 'POST', url: '/api/v1/libraries', headers: auth(admin.token), payload: { name, paths: [{ path }] } });
    expect(res.statusCode).toBe(200);
    return res.json().id as number;
  };
  libraryId = await create('Main', lib.path('main'));
  otherLibraryId = await create('Other', lib.path('other'));
  await scansDone();
  for (const row of await d.store.db.selectFrom('book_metadata').select(['book_id', 'title']).execute()) ids[row.title as string] = row.book_id;
  await d.store.db.updateTable('book_metadata').set({ description: 'A desert planet.' }).where('book_id', '=', ids.Dune as number).execute();
});

afterAll(async () => {
  await d.close();
  lib.cleanup();
});

describe('GET /api/v1/books', () => {
  it('returns every visible book in list view by default: no locks, ids, library path or description', async () => {
    const res = await get('/api/v1/books');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const books = res.json() as Book[];
    expect(books.map((b) => b.id)).toEqual(Object.values(ids).sort((a, b) => a - b));
    const dune = books.find((b) => b.id === ids.Dune) as Book;
    expect(dune).toMatchObject({
      libraryId,
      libraryName: 'Main',
      isPhysical: false,
      addedOn: expect.stringMatching(/Z$/),
      primaryFile: { id: expect.any(Number), bookId: ids.Dune, bookType: 'EPUB', extension: 'epub', fileName: 'Dune.epub', book: true },
      metadata: { bookId: ids.Dune, title: 'Dune', authors: ['Frank Herbert'], seriesName: 'Dune Chronicles', seriesNumber: 1, isbn13: '9780441013593', allMetadataLocked: false, coverUpdatedOn: expect.stringMatching(/Z$/) },
    });
    expect(dune).not.toHaveProperty('libraryPath');
    expect(dune).not.toHaveProperty('alternativeFormats');
    expect(dune).not.toHaveProperty('shelves');
    expect(dune).not.toHaveProperty('readStatus');
    expect(dune.metadata).not.toHaveProperty('titleLocked');
    expect(dune.metadata).not.toHaveProperty('description');
    expect(dune.metadata).not.toHaveProperty('tags');
    const comic = books.find((b) => b.id === ids['Saga One']) as Book;
    expect(comic.metadata.comicMetadata).toEqual({ pencillers: ['Fiona Staples'], characters: ['Alana', 'Marko'] });
    expect(comic.primaryFile).toMatchObject({ bookType: 'CBX', archiveType: 'ZIP', extension: 'cbz' });
  });

  it('returns full metadata with stripForListView=false and the description when asked', async () => {
    const books = (await get('/api/v1/books?stripForListView=false&withDescription=true')).json() as Book[];
    const dune = books.find((b) => b.id === ids.Dune) as Book;
    expect(dune).toMatchObject({ libraryPath: { id: expect.any(Number) }, alternativeFormats: [], supplementaryFiles: [], shelves: [] });
    expect(dune.metadata).toMatchObject({ titleLocked: false, coverLocked: false, authorsLocked: false, description: 'A desert planet.', tags: [], moods: [] });
    const comic = books.find((b) => b.id === ids['Saga One']) as Book;
    expect(comic.metadata.comicMetadata).toMatchObject({ issueNumber: '1', pencillers: ['Fiona Staples'], issueNumberLocked: false });
    const withoutDescription = (await get('/api/v1/books?stripForListView=false')).json() as Book[];
    expect(withoutDescription.find((b) => b.id === ids.Dune)?.metadata).not.toHaveProperty('description');
  });

  it('leaves soft-deleted books out of lists and pages', async () => {
    await d.store.db.updateTable('book').set({ deleted: 1 }).where('id', '=', ids.Emma as number).execute();
    expect(((await get('/api/v1/books')).json() as Book[]).map((b) => b.id)).not.toContain(ids.Emma);
    expect(((await get('/api/v1/books/page')).json() as { page: { totalElements: number } }).page.totalElements).toBe(4);
    await d.store.db.updateTable('book').set({ deleted: 0 }).where('id', '=', ids.Emma as number).execute();
    expect(((await get('/api/v1/books')).json() as Book[]).map((b) => b.id)).toContain(ids.Emma);
  });

  it('reports allMetadataLocked in list view only when every field lock is set', async () => {
    const emmaLocked = async (): Promise<unknown> => ((await get('/api/v1/books')).json() as Book[]).find((b) => b.id === ids.Emma)?.metadata.allMetadataLocked;
    const { BOOK_METADATA_LOCKS } = await import('../../src/core/store/migrations/001-initial.ts');
    const locks = Object.fromEntries(BOOK_METADATA_LOCKS.filter((f) => f !== 'title').map((f) => [`${f}_locked`, 1]));
    await d.store.db.updateTable('book_metadata').set(locks).where('book_id', '=', ids.Emma as number).execute();
    expect(await emmaLocked()).toBe(false);
    await d.store.db.updateTable('book_metadata').set({ title_locked: 1 }).where('book_id', '=', ids.Emma as number).execute();
    expect(await emmaLocked()).toBe(true);
    const unlocked = Object.fromEntries(Object.keys(locks).map((k) => [k, 0]));
    await d.store.db.updateTable('book_metadata').set({ ...unlocked, title_locked: 0, all_fields_locked: 1 }).where('book_id', '=', ids.Emma as number).execute();
    expect(await emmaLocked()).toBe(true);
    await d.store.db.updateTable('book_metadata').set({ all_fields_locked: 0 }).where('book_id', '=', ids.Emma as number).execute();
    expect(await emmaLocked()).toBe(false);
  });

  it("adds the caller's own status, progress, rating and visible shelves", async () => {
    const reader = await d.createUser('progress-reader', {}, [libraryId]);
    const db = d.store.db;
    await db.insertInto('user_book_progress').values({ user_id: reader.id, book_id: ids.Dune as number, read_status: 'READING', epub_progress: 'epubcfi(/6/4)', epub_progress_href: 'ch1.xhtml', epub_progress_percent: 42.06, last_read_time: '2025-01-02T03:04:05.000Z', personal_rating: 8, koreader_progress_percent: 0.5 }).execute();
    await db.insertInto('user_book_progress').values({ user_id: admin.id, book_id: ids.Emma as number, read_status: 'READ', date_finished: '2025-02-01T00:00:00.000Z' }).execute();
    const pdfFile = await db.selectFrom('book_file').select('id').where('book_id', '=', ids['The Manual'] as number).executeTakeFirstOrThrow();
    await db.insertInto('user_book_file_progress').values({ user_id: reader.id, book_file_id: pdfFile.id, position_data: '2', progress_percent: 66.66, last_read_time: '2025-03-01T00:00:00.000Z' }).execute();
    const own = await db.insertInto('shelf').values({ user_id: reader.id, name: 'To read', sort: 'title,ASCENDING' }).returning('id').executeTakeFirstOrThrow();
    const foreign = await db.insertInto('shelf').values({ user_id: admin.id, name: 'Admin private' }).returning('id').executeTakeFirstOrThrow();
    const shared = await db.insertInto('shelf').values({ user_id: admin.id, name: 'Shared', is_public: 1 }).returning('id').executeTakeFirstOrThrow();
    for (const shelf of [own.id, foreign.id, shared.id]) await db.insertInto('book_shelf_mapping').values({ book_id: ids.Dune as number, shelf_id: shelf }).execute();
    await db.insertInto('book_shelf_mapping').values({ book_id: ids.Emma as number, shelf_id: own.id }).execute();

    const books = (await get('/api/v1/books', reader.token)).json() as Book[];
    const dune = books.find((b) => b.id === ids.Dune) as Book;
    expect(dune).toMatchObject({
      readStatus: 'READING',
      personalRating: 8,
      lastReadTime: '2025-01-02T03:04:05.000Z',
      epubProgress: { cfi: 'epubcfi(/6/4)', href: 'ch1.xhtml', percentage: 42.1 },
      koreaderProgress: { percentage: 50 },
    });
    expect((dune.shelves as { name: string }[]).map((s) => s.name)).toEqual(['To read', 'Shared']);
    expect((dune.shelves as unknown[])[0]).toEqual({ id: own.id, name: 'To read', sort: { field: 'title', direction: 'ASCENDING' }, userId: reader.id, publicShelf: false, bookCount: 2 });
    const manual = books.find((b) => b.id === ids['The Manual']) as Book;
    expect(manual).toMatchObject({ pdfProgress: { page: 2, percentage: 66.7 }, lastReadTime: '2025-03-01T00:00:00.000Z' });
    expect(manual).not.toHaveProperty('readStatus');
    expect(books.find((b) => b.id === ids.Emma)).not.toHaveProperty('readStatus');

    const single = (await get(`/api/v1/books/${ids.Emma}`, reader.token)).json() as Book;
    expect(single).toMatchObject({ readStatus: 'UNSET', shelves: [{ name: 'To read' }] });
    const adminEmma = (await get(`/api/v1/books/${ids.Emma}`)).json() as Book;
    expect(adminEmma).toMatchObject({ readStatus: 'READ', dateFinished: '2025-02-01T00:00:00.000Z' });
  });

  it('shows a non-admin only the books of their libraries that pass their content restrictions', async () => {
    const reader = await d.createUser('restricted', {}, [libraryId]);
    let books = (await get('/api/v1/books', reader.token)).json() as Book[];
    expect(books.map((b) => b.id).sort()).toEqual([ids.Dune, ids.Emma, ids['The Manual'], ids['Saga One']].sort());
    await d.store.db.insertInto('user_content_restriction').values({ user_id: reader.id, restriction_type: 'CATEGORY', mode: 'EXCLUDE', value: 'space opera' }).execute();
    books = (await get('/api/v1/books', reader.token)).json() as Book[];
    expect(books.map((b) => b.id)).not.toContain(ids['Saga One']);
    expect((await get(`/api/v1/books/${ids['Saga One']}`, reader.token)).statusCode).toBe(403);
    expect((await get(`/api/v1/books/${ids['Secret Diary']}`, reader.token)).json()).toMatchObject({ status: 403, message: 'You are not authorized to access this book.' });
    // Grimmory's rules: an age limit (EXCLUDE n) hides books rated n or more, ALLOW_ONLY ages are ignored, and an
    // ALLOW_ONLY content rating hides unrated books.
    await d.store.db.updateTable('book_metadata').set({ age_rating: 18, content_rating: 'MATURE' }).where('book_id', '=', ids.Emma as number).execute();
    await d.store.db.updateTable('book_metadata').set({ age_rating: 12, content_rating: 'Teen' }).where('book_id', '=', ids.Dune as number).execute();
    const aged = await d.createUser('aged', {}, [libraryId]);
    await d.store.db.insertInto('user_content_restriction').values([
      { user_id: aged.id, restriction_type: 'AGE_RATING', mode: 'EXCLUDE', value: '16' },
      { user_id: aged.id, restriction_type: 'AGE_RATING', mode: 'ALLOW_ONLY', value: '3' },
    ]).execute();
    const agedIds = ((await get('/api/v1/books', aged.token)).json() as Book[]).map((b) => b.id);
    expect(agedIds).toContain(ids.Dune);
    expect(agedIds).toContain(ids['The Manual']);
    expect(agedIds).not.toContain(ids.Emma);
    const rated = await d.createUser('rated', {}, [libraryId]);
    await d.store.db.insertInto('user_content_restriction').values({ user_id: rated.id, restriction_type: 'CONTENT_RATING', mode: 'ALLOW_ONLY', value: 'TEEN' }).execute();
    expect(((await get('/api/v1/books', rated.token)).json() as Book[]).map((b) => b.id)).toEqual([ids.Dune]);
    await d.store.db.updateTable('book_metadata').set({ age_rating: null, content_rating: null }).execute();

    const nobody = await d.createUser('nobody', {});
    expect((await get('/api/v1/books', nobody.token)).json()).toEqual([]);
    expect((await d.inject({ method: 'GET', url: '/api/v1/books' })).statusCode).toBe(401);
  });
});

describe('single books, batches and pages', () => {
  it('returns one book in full with the description only when asked', async () => {
    const plain = await get(`/api/v1/books/${ids.Dune}`);
    expect(plain.statusCode).toBe(200);
    expect(plain.json()).toMatchObject({ id: ids.Dune, libraryPath: { id: expect.any(Number) }, metadata: { title: 'Dune', titleLocked: false } });
    expect(plain.json().metadata).not.toHaveProperty('description');
    expect((await get(`/api/v1/books/${ids.Dune}?withDescription=true`)).json().metadata.description).toBe('A desert planet.');
    expect((await get('/api/v1/books/987654')).json()).toMatchObject({ status: 404, message: 'Book not found with ID: 987654' });
    expect((await get('/api/v1/books/dune')).statusCode).toBe(400);
    expect((await d.inject({ method: 'GET', url: `/api/v1/books/${ids.Dune}` })).statusCode).toBe(401);
  });

  it('returns a batch of the visible books among the ids, in both parameter spellings', async () => {
    const res = await get(`/api/v1/books/batch?ids=${ids.Dune},${ids.Emma}&ids=${ids['Secret Diary']}&ids=424242`);
    expect(res.statusCode).toBe(200);
    expect((res.json() as Book[]).map((b) => b.id)).toEqual([ids.Dune, ids.Emma, ids['Secret Diary']].sort((a, b) => (a ?? 0) - (b ?? 0)));
    const reader = await d.createUser('batch-reader', {}, [libraryId]);
    const limited = await get(`/api/v1/books/batch?ids=${ids.Dune},${ids['Secret Diary']}`, reader.token);
    expect((limited.json() as Book[]).map((b) => b.id)).toEqual([ids.Dune]);
    expect((await get('/api/v1/books/batch?ids=1,x')).statusCode).toBe(400);
    expect((await get('/api/v1/books/batch')).statusCode).toBe(400);
  });

  it('pages in Spring shape with sorting by metadata fields', async () => {
    const res = await get('/api/v1/books/page?page=0&size=2&sort=metadata.title,desc');
    expect(res.statusCode).toBe(200);
    const page = res.json() as { content: Book[]; page: Record<string, number> };
    expect(page.page).toEqual({ size: 2, number: 0, totalElements: 5, totalPages: 3 });
    expect(page.content.map((b) => b.metadata.title)).toEqual(['The Manual', 'Secret Diary']);
    expect(page.content[0]).not.toHaveProperty('libraryPath');
    const last = (await get('/api/v1/books/page?page=2&size=2&sort=metadata.title')).json() as { content: Book[] };
    expect(last.content.map((b) => b.metadata.title)).toEqual(['The Manual']);
    const defaults = (await get('/api/v1/books/page?size=500&page=-3')).json() as { page: Record<string, number> };
    expect(defaults.page).toMatchObject({ size: 100, number: 0 });
    expect((await get('/api/v1/books/page?sort=password,asc')).statusCode).toBe(400);
  });
});

describe('physical books and deletion', () => {
  it('creates a physical book without files and toggles the flag', async () => {
    const librarian = await d.createUser('librarian', { canManageLibrary: true }, [libraryId]);
    const payload = { libraryId, title: 'Paper Copy', authors: ['Ink Author'], isbn: '978-0-441-01359-3', publishedDate: '1965', categories: ['Classics'], pageCount: 412 };
    const res = await d.inject({ method: 'POST', url: '/api/v1/books/physical', headers: auth(librarian.token), payload });
    expect(res.statusCode).toBe(201);
    const book = res.json() as Book;
    expect(book).toMatchObject({ isPhysical: true, libraryId, shelves: [], metadata: { title: 'Paper Copy', authors: ['Ink Author'], isbn13: '9780441013593', publishedDate: '1965-01-01', categories: ['Classics'], pageCount: 412 } });
    expect(book).not.toHaveProperty('primaryFile');

    const toggled = await d.inject({ method: 'PATCH', url: `/api/v1/books/${book.id}/physical?physical=false`, headers: auth(librarian.token) });
    expect(toggled.json()).toMatchObject({ id: book.id, isPhysical: false });
    expect((await d.inject({ method: 'PATCH', url: `/api/v1/books/${book.id}/physical`, headers: auth(librarian.token) })).statusCode).toBe(400);
    expect((await d.inject({ method: 'POST', url: '/api/v1/books/physical', headers: auth(librarian.token), payload: { title: 'x' } })).statusCode).toBe(400);
    expect((await d.inject({ method: 'POST', url: '/api/v1/books/physical', headers: auth(admin.token), payload: { libraryId: 999 } })).json()).toMatchObject({ status: 404 });
    expect((await d.inject({ method: 'POST', url: '/api/v1/books/physical', headers: auth(librarian.token), payload: { libraryId: otherLibraryId } })).statusCode).toBe(403);
    const reader = await d.createUser('plain-reader', {}, [libraryId]);
    expect((await d.inject({ method: 'POST', url: '/api/v1/books/physical', headers: auth(reader.token), payload })).statusCode).toBe(403);
    await d.inject({ method: 'DELETE', url: `/api/v1/books?ids=${book.id}`, headers: auth(admin.token) });
  });

  it('deletes books: files move to the library trash (nothing erased), rows and covers leave the catalog', async () => {
    const victim = ids.Dune as number;
    const original = readFileSync(lib.path('main', 'Herbert', 'Dune.epub'));
    expect(existsSync(coverDir(d.ctx.paths.covers, victim))).toBe(true);
    const reader = await d.createUser('no-delete', {}, [libraryId]);
    expect((await d.inject({ method: 'DELETE', url: `/api/v1/books?ids=${victim}`, headers: auth(reader.token) })).statusCode).toBe(403);
    const deleter = await d.createUser('deleter', { canDeleteBook: true }, [libraryId]);
    const res = await d.inject({ method: 'DELETE', url: `/api/v1/books?ids=${victim},${ids['Secret Diary']}`, headers: auth(deleter.token) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ deleted: [victim], failedFileDeletions: [] });
    expect((await get(`/api/v1/books/${victim}`)).statusCode).toBe(404);
    expect((await get(`/api/v1/books/${ids['Secret Diary']}`)).statusCode).toBe(200);
    expect(existsSync(coverDir(d.ctx.paths.covers, victim))).toBe(false);
    expect(existsSync(lib.path('main', 'Herbert', 'Dune.epub'))).toBe(false);
    const [stamp] = readdirSync(lib.path('main', TRASH_FOLDER));
    expect(readFileSync(lib.path('main', TRASH_FOLDER, stamp as string, 'Herbert', 'Dune.epub')).equals(original)).toBe(true);
  });
});

describe('file metadata', () => {
  it('reads the metadata embedded in the primary file, and ComicInfo of a comic', async () => {
    const pdf = await get(`/api/v1/books/${ids['The Manual']}/file-metadata`);
    expect(pdf.statusCode).toBe(200);
    expect(pdf.json()).toMatchObject({ title: 'The Manual', authors: ['Tech Writer'] });
    const comic = await get(`/api/v1/books/${ids['Saga One']}/cbx/metadata/comicinfo`);
    expect(comic.json()).toMatchObject({ title: 'Saga One', seriesName: 'Saga', comicMetadata: { issueNumber: '1', pencillers: ['Fiona Staples'], characters: ['Alana', 'Marko'] } });
    const notComic = await get(`/api/v1/books/${ids.Emma}/cbx/metadata/comicinfo`);
    expect(notComic.statusCode).toBe(200);
    expect(notComic.body).toBe('');
    const reader = await d.createUser('meta-reader', {}, [libraryId]);
    expect((await get(`/api/v1/books/${ids['Secret Diary']}/file-metadata`, reader.token)).statusCode).toBe(403);
  });
});
