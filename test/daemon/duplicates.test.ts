import { copyFileSync, existsSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLibrary, type Library } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let d: TestDaemon;
let lib: TempLibrary;
let library: Library;
let admin: string;

/** The keys of `book.duplicateMerger.reason` in Grimmory's web UI (frontend/src/i18n/en/book.json). */
const GRIMMORY_UI_REASONS = ['ISBN', 'EXTERNAL_ID', 'TITLE_AUTHOR', 'DIRECTORY', 'FILENAME'];

const ALL = { matchByIsbn: true, matchByExternalId: true, matchByTitleAuthor: true, matchByDirectory: true, matchByFilename: true };

async function idOf(fileName: string): Promise<number> {
  return (await d.store.db.selectFrom('book_file').select('book_id').where('file_name', '=', fileName).executeTakeFirstOrThrow()).book_id;
}

async function fileIdOf(fileName: string): Promise<number> {
  return (await d.store.db.selectFrom('book_file').select('id').where('file_name', '=', fileName).executeTakeFirstOrThrow()).id;
}

function post(url: string, token: string | undefined, payload: unknown) {
  return d.inject({ method: 'POST', url, payload: payload as Record<string, unknown>, headers: token ? { authorization: `Bearer ${token}` } : {} });
}

function get(url: string, token: string) {
  return d.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
}

beforeEach(async () => {
  d = await startTestDaemon();
  lib = makeTempLibrary();
  await writeSimpleEpub(lib.path('a', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], isbn: '9780441013593' });
  copyFileSync(lib.path('a', 'Dune.epub'), lib.path('Dune copy.epub'));
  await writeSimpleEpub(lib.path('b', 'Dune (retail).epub'), { title: 'Dune: Der Wüstenplanet', authors: ['Herbert, Frank'], body: 'other' });
  await writeSimpleEpub(lib.path('c', 'Emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
  library = await createLibrary(d.store.db, { name: 'Books', paths: [lib.root], organizationMode: 'BOOK_PER_FILE' });
  await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  admin = await d.setupAdmin();
});

afterEach(async () => {
  await d.close();
  lib.cleanup();
});

describe('POST /api/v1/books/duplicates', () => {
  it('returns DuplicateGroup objects with full books, identical content first', async () => {
    const res = await post('/api/v1/books/duplicates', admin, { libraryId: library.id, ...ALL });
    expect(res.statusCode).toBe(200);
    const groups = res.json() as { suggestedTargetBookId: number; matchReason: string; books: { id: number; metadata: { title: string } }[] }[];
    const copies = [await idOf('Dune.epub'), await idOf('Dune copy.epub')].sort((a, b) => a - b);
    expect(groups).toHaveLength(1);
    // Copies of one file: labelled with a reason the web UI has a text for, content identity flagged beside it.
    expect(groups[0]).toMatchObject({ matchReason: 'ISBN', identicalContent: true, suggestedTargetBookId: copies[0] });
    expect(groups[0]!.books.map((b) => b.id)).toEqual(copies);
    expect(groups[0]!.books[0]).toMatchObject({ libraryId: library.id, metadata: { title: 'Dune', authors: ['Frank Herbert'] }, primaryFile: { bookType: 'EPUB' } });
    expect(Object.keys(groups[0]!).sort()).toEqual(['books', 'identicalContent', 'matchReason', 'suggestedTargetBookId']);
    expect(GRIMMORY_UI_REASONS).toContain(groups[0]!.matchReason);
  });

  it('labels copies of one file that share no metadata as EXTERNAL_ID (the content hash), never with a raw key', async () => {
    const copy = await idOf('Dune copy.epub');
    await d.store.db.updateTable('book_metadata').set({ title: 'Untitled scan', isbn_13: null, isbn_10: null }).where('book_id', '=', copy).execute();
    const groups = (await post('/api/v1/books/duplicates', admin, { libraryId: library.id, ...ALL })).json() as { matchReason: string; identicalContent?: boolean; books: { id: number }[] }[];
    const content = groups.find((g) => g.books.some((b) => b.id === copy));
    expect(content).toMatchObject({ matchReason: 'EXTERNAL_ID', identicalContent: true });
    for (const group of groups) expect(GRIMMORY_UI_REASONS).toContain(group.matchReason);
  });

  it('runs only the strategies asked for', async () => {
    const isbn = (await post('/api/v1/books/duplicates', admin, { libraryId: library.id, matchByIsbn: true, matchByContent: false })).json() as { matchReason: string }[];
    expect(isbn.map((g) => g.matchReason)).toEqual(['ISBN']);
    const titles = (await post('/api/v1/books/duplicates', admin, { libraryId: library.id, matchByTitleAuthor: true, matchByContent: false })).json() as { matchReason: string; books: unknown[] }[];
    expect(titles.map((g) => [g.matchReason, g.books.length])).toEqual([['TITLE_AUTHOR', 3]]);
    const none = await post('/api/v1/books/duplicates', admin, { libraryId: library.id });
    expect(none.json()).toEqual([]);
    expect((await post('/api/v1/books/duplicates', admin, { libraryId: 999, ...ALL })).json()).toEqual([]);
  });

  it('wants a token, library management and a libraryId', async () => {
    expect((await post('/api/v1/books/duplicates', undefined, { libraryId: library.id, ...ALL })).statusCode).toBe(401);
    const reader = await d.createUser('reader', {}, [library.id]);
    const denied = await post('/api/v1/books/duplicates', reader.token, { libraryId: library.id, ...ALL });
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toMatchObject({ status: 403, message: 'Access denied.' });
    const missing = await post('/api/v1/books/duplicates', admin, { matchByIsbn: true });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ status: 400, message: 'Validation error', details: [expect.stringContaining('libraryId')] });
  });

  it('never shows a librarian books they cannot see', async () => {
    const outsider = await d.createUser('outsider', { canManageLibrary: true }, []);
    expect((await post('/api/v1/books/duplicates', outsider.token, { libraryId: library.id, ...ALL })).json()).toEqual([]);

    const librarian = await d.createUser('librarian', { canManageLibrary: true }, [library.id]);
    const hidden = await idOf('Dune copy.epub');
    const tag = await d.store.db.insertInto('tag').values({ name: 'Secret' }).returning('id').executeTakeFirstOrThrow();
    await d.store.db.insertInto('book_metadata_tag_mapping').values({ book_id: hidden, tag_id: tag.id }).execute();
    await d.store.db.insertInto('user_content_restriction').values({ user_id: librarian.id, restriction_type: 'TAG', mode: 'EXCLUDE', value: 'Secret' }).execute();
    const groups = (await post('/api/v1/books/duplicates', librarian.token, { libraryId: library.id, ...ALL })).json() as { matchReason: string; books: { id: number }[] }[];
    const ids = groups.flatMap((g) => g.books.map((b) => b.id));
    expect(ids).not.toContain(hidden);
    expect(groups.map((g) => g.matchReason)).toEqual(['TITLE_AUTHOR']);
  });
});

describe('POST /api/v1/books/{targetBookId}/attach-file', () => {
  it('attaches the source file to the target and drops the emptied source', async () => {
    const target = await idOf('Dune.epub');
    const source = await idOf('Dune (retail).epub');
    const res = await post(`/api/v1/books/${target}/attach-file`, admin, { sourceBookIds: [source], moveFiles: false });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { updatedBook: { id: number; primaryFile: { fileName: string }; alternativeFormats: { fileName: string; bookId: number }[] }; deletedSourceBookIds: number[] };
    expect(body.deletedSourceBookIds).toEqual([source]);
    expect(body.updatedBook.id).toBe(target);
    expect(body.updatedBook.primaryFile.fileName).toBe('Dune.epub');
    expect(body.updatedBook.alternativeFormats).toEqual([expect.objectContaining({ fileName: 'Dune (retail).epub', bookId: target })]);
    expect(existsSync(lib.path('b', 'Dune (retail).epub'))).toBe(true);
    const gone = await get(`/api/v1/books/${source}/files`, admin);
    expect(gone.statusCode).toBe(404);
  });

  it('answers 400, 403 and 404 like Grimmory', async () => {
    const target = await idOf('Dune.epub');
    const source = await idOf('Dune (retail).epub');
    const self = await post(`/api/v1/books/${target}/attach-file`, admin, { sourceBookIds: [target] });
    expect(self.statusCode).toBe(400);
    expect(self.json()).toMatchObject({ status: 400, message: 'Cannot attach a book to itself' });
    expect((await post(`/api/v1/books/${target}/attach-file`, admin, { sourceBookIds: [] })).statusCode).toBe(400);
    expect((await post(`/api/v1/books/${target}/attach-file`, admin, {})).statusCode).toBe(400);
    const missing = await post(`/api/v1/books/${target}/attach-file`, admin, { sourceBookIds: [9999] });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ message: 'Book not found with ID: 9999' });
    expect((await post(`/api/v1/books/${target}/attach-file`, undefined, { sourceBookIds: [source] })).statusCode).toBe(401);
    const reader = await d.createUser('reader', {}, [library.id]);
    expect((await post(`/api/v1/books/${target}/attach-file`, reader.token, { sourceBookIds: [source] })).statusCode).toBe(403);
    const outsider = await d.createUser('outsider', { canManageLibrary: true }, []);
    expect((await post(`/api/v1/books/${target}/attach-file`, outsider.token, { sourceBookIds: [source] })).statusCode).toBe(403);
    expect(await idOf('Dune (retail).epub')).toBe(source);
  });
});

describe('GET /api/v1/books/{bookId}/files and detach', () => {
  it('lists files by type and detaches one into a book of its own', async () => {
    const target = await idOf('Dune.epub');
    await post(`/api/v1/books/${target}/attach-file`, admin, { sourceBookIds: [await idOf('Dune (retail).epub')] });
    const all = await get(`/api/v1/books/${target}/files`, admin);
    expect(all.statusCode).toBe(200);
    expect((all.json() as { fileName: string }[]).map((f) => f.fileName)).toEqual(['Dune.epub', 'Dune (retail).epub']);
    expect(all.json()[1]).toEqual({
      id: await fileIdOf('Dune (retail).epub'), bookId: target, fileName: 'Dune (retail).epub', filePath: lib.path('b', 'Dune (retail).epub'),
      fileSubPath: 'b', book: true, folderBased: false, bookType: 'EPUB', archiveType: 'ZIP', fileSizeKb: expect.any(Number), extension: 'epub', addedOn: expect.any(String),
    });
    expect((await get(`/api/v1/books/${target}/files?isBook=true`, admin)).json()).toHaveLength(2);
    expect((await get(`/api/v1/books/${target}/files?isBook=false`, admin)).json()).toEqual([]);

    const fileId = await fileIdOf('Dune (retail).epub');
    const res = await post(`/api/v1/books/${target}/files/${fileId}/detach`, admin, { copyMetadata: false });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { sourceBook: { id: number; alternativeFormats?: unknown[] }; newBook: { id: number; metadata: { title: string }; primaryFile: { id: number } } };
    expect(body.sourceBook.id).toBe(target);
    expect(body.sourceBook.alternativeFormats ?? []).toEqual([]);
    expect(body.newBook).toMatchObject({ metadata: { title: 'Dune (retail)' }, primaryFile: { id: fileId } });
    expect(await idOf('Dune (retail).epub')).toBe(body.newBook.id);
    expect(existsSync(lib.path('b', 'Dune (retail).epub'))).toBe(true);

    const copied = await post(`/api/v1/books/${body.newBook.id}/files/${fileId}/detach`, admin, { copyMetadata: true });
    expect(copied.statusCode).toBe(400);
    expect(copied.json()).toMatchObject({ message: 'Cannot detach the only file from a book' });
  });

  it('checks permissions and book visibility', async () => {
    const target = await idOf('Dune.epub');
    const fileId = await fileIdOf('Dune.epub');
    const reader = await d.createUser('reader', {}, [library.id]);
    expect((await get(`/api/v1/books/${target}/files`, reader.token)).statusCode).toBe(200);
    expect((await post(`/api/v1/books/${target}/files/${fileId}/detach`, reader.token, { copyMetadata: false })).statusCode).toBe(403);
    const stranger = await d.createUser('stranger', { canManageLibrary: true }, []);
    const hidden = await get(`/api/v1/books/${target}/files`, stranger.token);
    expect(hidden.statusCode).toBe(403);
    expect((await post(`/api/v1/books/${target}/files/${fileId}/detach`, stranger.token, { copyMetadata: false })).statusCode).toBe(403);
    expect((await get('/api/v1/books/9999/files', admin)).statusCode).toBe(404);
    expect((await d.inject({ method: 'GET', url: `/api/v1/books/${target}/files` })).statusCode).toBe(401);
    const wrongBook = await post(`/api/v1/books/${await idOf('Emma.epub')}/files/${fileId}/detach`, admin, { copyMetadata: false });
    expect(wrongBook.statusCode).toBe(400);
    expect(wrongBook.json()).toMatchObject({ message: 'File not found on this book' });
  });
});
