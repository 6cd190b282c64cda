// The sidecar routes over real HTTP handling, a real catalog and real files: shapes, permissions, errors, and the
// library-wide runs.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { createPhysicalBook } from '../../src/core/books/physical-books.ts';
import { createLibrary, type Library } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let d: TestDaemon;
let lib: TempLibrary;
let library: Library;
let admin: string;
let dune: number;
let emma: number;

const call = (token: string | undefined, method: 'GET' | 'POST', url: string) =>
  d.inject({ method, url, headers: token ? { authorization: `Bearer ${token}` } : {}, ...(method === 'POST' ? { payload: {} } : {}) } as InjectOptions);

async function enableSidecars(extra: Record<string, boolean> = {}): Promise<void> {
  const value = { saveToOriginalFile: null, convertCbrCb7ToCbz: false, moveFilesToLibraryPattern: false, sidecarSettings: { enabled: true, writeOnUpdate: false, writeOnScan: false, includeCoverFile: false, ...extra } };
  const res = await d.inject({ method: 'PUT', url: '/api/v1/settings', headers: { authorization: `Bearer ${admin}` }, payload: [{ name: 'METADATA_PERSISTENCE_SETTINGS', value }] });
  expect(res.statusCode, res.body).toBe(200);
}

async function titleOf(id: number): Promise<unknown> {
  const res = await call(admin, 'GET', `/api/v1/books/${id}`);
  return (res.json() as { metadata: { title?: string } }).metadata.title;
}

beforeEach(async () => {
  d = await startTestDaemon();
  lib = makeTempLibrary();
  await writeSimpleEpub(lib.path('Herbert', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], cover: '#2a6' });
  await writeSimpleEpub(lib.path('Austen', 'Emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
  library = await createLibrary(d.store.db, { name: 'Books', paths: [lib.root] });
  await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  const ids = await d.store.db.selectFrom('book_metadata').select(['book_id', 'title']).execute();
  dune = ids.find((r) => r.title === 'Dune')!.book_id;
  emma = ids.find((r) => r.title === 'Emma')!.book_id;
  admin = (await d.createUser('admin', { admin: true })).token;
});

afterEach(async () => {
  await d.close();
  lib.cleanup();
});

describe('one book', () => {
  it('reports MISSING and a bare 404 before any export, then exports, reads back and is IN_SYNC', async () => {
    expect((await call(admin, 'GET', `/api/v1/books/${dune}/sidecar/status`)).json()).toEqual({ status: 'MISSING' });
    const none = await call(admin, 'GET', `/api/v1/books/${dune}/sidecar`);
    expect(none.statusCode).toBe(404);
    expect(none.body).toBe('');

    await enableSidecars({ includeCoverFile: true });
    const exported = await call(admin, 'POST', `/api/v1/books/${dune}/sidecar/export`);
    expect(exported.statusCode).toBe(200);
    expect(exported.json()).toEqual({ message: 'Sidecar metadata exported successfully' });
    expect(existsSync(lib.path('Herbert', 'Dune.cover.jpg'))).toBe(true);

    const content = await call(admin, 'GET', `/api/v1/books/${dune}/sidecar`);
    expect(content.statusCode).toBe(200);
    expect(content.json()).toMatchObject({
      version: '1.0',
      generatedAt: expect.stringMatching(/Z$/),
      generatedBy: 'bindery',
      metadata: { title: 'Dune', authors: ['Frank Herbert'], language: 'en' },
      cover: { source: 'external', path: 'Dune.cover.jpg' },
    });
    expect((await call(admin, 'GET', `/api/v1/books/${dune}/sidecar/status`)).json()).toEqual({ status: 'IN_SYNC' });
  });

  it('imports an edited file, keeping locked fields', async () => {
    await enableSidecars();
    await call(admin, 'POST', `/api/v1/books/${dune}/sidecar/export`);
    const path = lib.path('Herbert', 'Dune.metadata.json');
    const json = JSON.parse(readFileSync(path, 'utf8')) as { metadata: Record<string, unknown> };
    json.metadata.title = 'Dune (1965)';
    json.metadata.publisher = 'Chilton Books';
    json.metadata.authors = ['F. Herbert'];
    writeFileSync(path, JSON.stringify(json));
    await d.store.db.updateTable('book_metadata').set({ authors_locked: 1 }).where('book_id', '=', dune).execute();

    const res = await call(admin, 'POST', `/api/v1/books/${dune}/sidecar/import`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ message: 'Sidecar metadata imported successfully' });
    const book = (await call(admin, 'GET', `/api/v1/books/${dune}`)).json() as { metadata: Record<string, unknown> };
    expect(book.metadata).toMatchObject({ title: 'Dune (1965)', publisher: 'Chilton Books', authors: ['Frank Herbert'], authorsLocked: true });
  });

  it('answers a malformed sidecar with 400 and the reason, and changes nothing', async () => {
    writeFileSync(lib.path('Herbert', 'Dune.metadata.json'), '{"metadata": {"title": ["not", "a", "string"]}}');
    const imported = await call(admin, 'POST', `/api/v1/books/${dune}/sidecar/import`);
    expect(imported.statusCode).toBe(400);
    expect(imported.json()).toEqual({ status: 400, message: 'Dune.metadata.json is not a valid sidecar file: metadata.title: expected a string', timestamp: expect.any(String) });
    const read = await call(admin, 'GET', `/api/v1/books/${dune}/sidecar`);
    expect(read.statusCode).toBe(400);
    expect(read.json()).toMatchObject({ status: 400, message: expect.stringContaining('metadata.title') });
    expect((await call(admin, 'GET', `/api/v1/books/${dune}/sidecar/status`)).json()).toEqual({ status: 'CONFLICT' });
    expect(await titleOf(dune)).toBe('Dune');
  });

  it('refuses what cannot be done: export while off, import without a file, a book without a file, an unknown book', async () => {
    const off = await call(admin, 'POST', `/api/v1/books/${dune}/sidecar/export`);
    expect(off.statusCode).toBe(400);
    expect(off.json()).toMatchObject({ status: 400, message: expect.stringMatching(/turned off/) });
    expect(existsSync(lib.path('Herbert', 'Dune.metadata.json'))).toBe(false);

    const noFile = await call(admin, 'POST', `/api/v1/books/${dune}/sidecar/import`);
    expect(noFile.statusCode).toBe(404);
    expect(noFile.json()).toMatchObject({ status: 404, message: 'File not found: No sidecar file found for book' });

    await enableSidecars();
    const physical = await createPhysicalBook(d.store.db, { libraryId: library.id, title: 'Paper' });
    expect((await call(admin, 'GET', `/api/v1/books/${physical}/sidecar/status`)).json()).toEqual({ status: 'NOT_APPLICABLE' });
    expect((await call(admin, 'POST', `/api/v1/books/${physical}/sidecar/export`)).statusCode).toBe(404);
    const unknown = await call(admin, 'GET', `/api/v1/books/987654/sidecar/status`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ message: 'Book not found with ID: 987654' });
  });
});

describe('permissions', () => {
  it('lets readers of the library see status and content, and only metadata editors export or import', async () => {
    await enableSidecars();
    const reader = (await d.createUser('reader', {}, [library.id])).token;
    const editor = (await d.createUser('editor', { canEditMetadata: true }, [library.id])).token;
    const outsider = (await d.createUser('outsider', { canEditMetadata: true }, [])).token;
    expect((await call(undefined, 'GET', `/api/v1/books/${dune}/sidecar/status`)).statusCode).toBe(401);
    expect((await call(reader, 'GET', `/api/v1/books/${dune}/sidecar/status`)).statusCode).toBe(200);
    for (const url of [`/api/v1/books/${dune}/sidecar/export`, `/api/v1/books/${dune}/sidecar/import`, `/api/v1/libraries/${library.id}/sidecar/export-all`, `/api/v1/libraries/${library.id}/sidecar/import-all`]) {
      const denied = await call(reader, 'POST', url);
      expect(denied.statusCode, url).toBe(403);
      expect(denied.json()).toMatchObject({ status: 403, message: 'Access denied.' });
    }
    expect((await call(editor, 'POST', `/api/v1/books/${dune}/sidecar/export`)).statusCode).toBe(200);
    expect((await call(outsider, 'GET', `/api/v1/books/${dune}/sidecar`)).statusCode).toBe(403);
    expect((await call(outsider, 'POST', `/api/v1/books/${dune}/sidecar/export`)).statusCode).toBe(403);
    expect((await call(outsider, 'POST', `/api/v1/libraries/${library.id}/sidecar/export-all`)).statusCode).toBe(403);
  });
});

describe('a whole library', () => {
  it('exports and imports every book, reporting the one that failed', async () => {
    await enableSidecars();
    mkdirSync(lib.path('Austen', 'Emma.metadata.json', 'blocker'), { recursive: true });
    const exported = await call(admin, 'POST', `/api/v1/libraries/${library.id}/sidecar/export-all`);
    expect(exported.statusCode).toBe(200);
    expect(exported.json()).toEqual({
      message: 'Bulk export completed',
      exported: 1,
      skipped: 0,
      failed: 1,
      failures: [{ bookId: emma, code: 'IO', message: expect.stringContaining('Emma.metadata.json') }],
    });

    const path = lib.path('Herbert', 'Dune.metadata.json');
    const json = JSON.parse(readFileSync(path, 'utf8')) as { metadata: Record<string, unknown> };
    json.metadata.title = 'Dune Deluxe';
    writeFileSync(path, JSON.stringify(json));
    const imported = await call(admin, 'POST', `/api/v1/libraries/${library.id}/sidecar/import-all`);
    expect(imported.statusCode).toBe(200);
    expect(imported.json()).toEqual({
      message: 'Bulk import completed',
      imported: 1,
      changed: 1,
      skipped: 0,
      failed: 1,
      failures: [{ bookId: emma, code: 'SIDECAR_INVALID', message: 'Emma.metadata.json is not a regular file' }],
    });
    expect(await titleOf(dune)).toBe('Dune Deluxe');

    const missing = await call(admin, 'POST', '/api/v1/libraries/4242/sidecar/import-all');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ message: 'Library not found with ID: 4242' });
  });
});
