// The bookdrop and upload API over real requests: listing, rescan, pattern extraction, bulk edit, discard, finalize
// with per-file results, the bookdrop cover, permissions, and multipart uploads (streamed, size-limited, never
// overwriting) over a real socket.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLibrary, type Library } from '../../src/core/libraries/libraries.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let d: TestDaemon;
let lib: TempLibrary;
let library: Library;
let admin: string;
let dropper: string;
let nobody: string;
let base: string;

const bookdrop = (...parts: string[]): string => join(d.config.bookdropDir, ...parts);
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  lib = makeTempLibrary();
  d = await startTestDaemon();
  library = await createLibrary(d.store.db, { name: 'Books', paths: [lib.root] });
  admin = (await d.createUser('boss', { admin: true })).token;
  dropper = (await d.createUser('dropper', { canAccessBookdrop: true, canUpload: true }, [library.id])).token;
  nobody = (await d.createUser('nobody', {}, [library.id])).token;
  await d.app.listen({ port: 0, host: '127.0.0.1' });
  const address = d.app.server.address() as { port: number };
  base = `http://127.0.0.1:${address.port}`;
}, 60_000);

afterAll(async () => {
  await d?.close();
  lib?.cleanup();
});

async function clearQueue(): Promise<void> {
  const { mkdirSync, rmSync } = await import('node:fs');
  rmSync(bookdrop(), { recursive: true, force: true });
  mkdirSync(bookdrop(), { recursive: true });
  await d.store.db.deleteFrom('bookdrop_file').execute();
}

async function rescan(token = dropper): Promise<void> {
  const res = await d.inject({ method: 'POST', url: '/api/v1/bookdrop/rescan', headers: auth(token) });
  expect(res.statusCode).toBe(200);
  expect(res.body).toBe('');
}

async function pending(): Promise<{ id: number; fileName: string }[]> {
  const res = await d.inject({ method: 'GET', url: '/api/v1/bookdrop/files?status=pending&page=0&size=50', headers: auth(dropper) });
  expect(res.statusCode).toBe(200);
  return (res.json() as { content: { id: number; fileName: string }[] }).content;
}

/** Files dropped a moment ago count as still being written; these are old enough to be taken. */
async function drop(name: string, book: Parameters<typeof writeSimpleEpub>[1]): Promise<void> {
  await writeSimpleEpub(bookdrop(name), book);
  const { utimesSync } = await import('node:fs');
  const past = new Date(Date.now() - 60_000);
  utimesSync(bookdrop(name), past, past);
}

describe('the review queue', () => {
  beforeEach(clearQueue);

  it('lists files after a rescan, with their metadata, paged, and the badge agrees', async () => {
    await drop('dune.epub', { title: 'Dune', authors: ['Frank Herbert'], cover: '#a63' });
    await drop('emma.epub', { title: 'Emma', authors: ['Jane Austen'] });
    // Files modified within the last two seconds are left for the next pass; the test does not wait.
    const { syncBookdrop } = await import('../../src/core/bookdrop/intake.ts');
    await syncBookdrop({ store: d.store, bookdropDir: d.config.bookdropDir, dataDir: d.config.dataDir }, { settleMs: 0 });
    await rescan();
    const res = await d.inject({ method: 'GET', url: '/api/v1/bookdrop/files?status=pending&size=1&sort=fileName,asc', headers: auth(dropper) });
    expect(res.json()).toEqual({
      content: [
        {
          id: expect.any(Number),
          fileName: 'dune.epub',
          filePath: bookdrop('dune.epub'),
          fileSize: expect.any(Number),
          originalMetadata: expect.objectContaining({ title: 'Dune', authors: ['Frank Herbert'] }),
          fetchedMetadata: null,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
          status: 'PENDING_REVIEW',
        },
      ],
      page: { size: 1, number: 0, totalElements: 2, totalPages: 2 },
    });
    const badge = await d.inject({ method: 'GET', url: '/api/v1/bookdrop/notification', headers: auth(dropper) });
    expect(badge.json()).toMatchObject({ pendingCount: 2, totalCount: 2 });
    const bad = await d.inject({ method: 'GET', url: '/api/v1/bookdrop/files?sort=bogus,asc', headers: auth(dropper) });
    expect(bad.statusCode).toBe(400);
  });

  it('a rescan takes in a file once it has not changed for two seconds', async () => {
    await drop('later.epub', { title: 'Later' });
    await rescan();
    expect((await pending()).map((f) => f.fileName)).not.toContain('later.epub');
    await new Promise((r) => setTimeout(r, 2_200));
    await rescan();
    expect((await pending()).map((f) => f.fileName)).toContain('later.epub');
  });

  it('serves the cover of a file that has one (also with ?token=) and 204 for one that has none', async () => {
    await drop('covered.epub', { title: 'Covered', cover: '#123' });
    await drop('plain.epub', { title: 'Plain' });
    const { syncBookdrop } = await import('../../src/core/bookdrop/intake.ts');
    await syncBookdrop({ store: d.store, bookdropDir: d.config.bookdropDir, dataDir: d.config.dataDir }, { settleMs: 0 });
    const files = await pending();
    const covered = files.find((f) => f.fileName === 'covered.epub')!;
    const plain = files.find((f) => f.fileName === 'plain.epub')!;
    const res = await d.inject({ method: 'GET', url: `/api/v1/media/bookdrop/${covered.id}/cover?token=${dropper}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/jpeg');
    expect(res.rawPayload.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    expect((await d.inject({ method: 'GET', url: `/api/v1/media/bookdrop/${plain.id}/cover`, headers: auth(nobody) })).statusCode).toBe(204);
    expect((await d.inject({ method: 'GET', url: `/api/v1/media/bookdrop/${covered.id}/cover` })).statusCode).toBe(401);
  });

  it('extracts metadata from file names (preview, then stored) and bulk-edits it', async () => {
    await drop('Saga - Ch 7.epub', { title: 'x' });
    const { syncBookdrop } = await import('../../src/core/bookdrop/intake.ts');
    await syncBookdrop({ store: d.store, bookdropDir: d.config.bookdropDir, dataDir: d.config.dataDir }, { settleMs: 0 });
    const [file] = await pending();
    const blank = await d.inject({ method: 'POST', url: '/api/v1/bookdrop/files/extract-pattern', headers: auth(dropper), payload: { pattern: '  ', selectAll: true } });
    expect(blank.statusCode).toBe(400);
    expect(blank.json()).toMatchObject({ message: 'Validation error', details: ['pattern: must not be blank'] });
    const extracted = await d.inject({ method: 'POST', url: '/api/v1/bookdrop/files/extract-pattern', headers: auth(dropper), payload: { pattern: '{SeriesName} - Ch {SeriesNumber}', selectedIds: [file!.id] } });
    expect(extracted.json()).toEqual({
      totalFiles: 1,
      successfullyExtracted: 1,
      failed: 0,
      results: [{ fileId: file!.id, fileName: 'Saga - Ch 7.epub', success: true, extractedMetadata: { seriesName: 'Saga', seriesNumber: 7 } }],
    });
    const noFields = await d.inject({ method: 'POST', url: '/api/v1/bookdrop/files/bulk-edit', headers: auth(dropper), payload: { enabledFields: [] } });
    expect(noFields.json()).toMatchObject({ status: 400, details: ['fields: must not be null'] });
    const edited = await d.inject({ method: 'POST', url: '/api/v1/bookdrop/files/bulk-edit', headers: auth(dropper), payload: { fields: { authors: ['A. Writer'] }, enabledFields: ['authors'], mergeArrays: false, selectAll: true } });
    expect(edited.json()).toEqual({ totalFiles: 1, successfullyUpdated: 1, failed: 0 });
    const list = await d.inject({ method: 'GET', url: '/api/v1/bookdrop/files', headers: auth(dropper) });
    expect((list.json() as { content: { fetchedMetadata: unknown }[] }).content[0]!.fetchedMetadata).toEqual({ seriesName: 'Saga', seriesNumber: 7, authors: ['A. Writer'] });
  });

  it('finalizes with per-file results, using the edited metadata, and discards what is left', async () => {
    await drop('one.epub', { title: 'One', authors: ['Ann Author'] });
    await drop('two.epub', { title: 'Two', authors: ['Ann Author'] });
    await drop('three.epub', { title: 'Three' });
    const { syncBookdrop } = await import('../../src/core/bookdrop/intake.ts');
    await syncBookdrop({ store: d.store, bookdropDir: d.config.bookdropDir, dataDir: d.config.dataDir }, { settleMs: 0 });
    const files = await pending();
    const id = (name: string): number => files.find((f) => f.fileName === name)!.id;
    const res = await d.inject({
      method: 'POST',
      url: '/api/v1/bookdrop/imports/finalize',
      headers: auth(dropper),
      payload: {
        selectAll: true,
        excludedIds: [id('three.epub')],
        defaultLibraryId: library.id,
        defaultPathId: library.paths[0]!.id,
        files: [{ fileId: id('two.epub'), libraryId: library.id, pathId: library.paths[0]!.id, metadata: { title: 'Two, Revised', authors: ['Ann Author'] } }],
      },
    });
    expect(res.statusCode).toBe(200);
    // Results follow the queue's ids, and the files were taken into the queue concurrently: compare them by name.
    const body = res.json() as { results: { fileName: string }[] };
    body.results.sort((a, b) => a.fileName.localeCompare(b.fileName));
    expect(body).toEqual({
      totalFiles: 2,
      successfullyImported: 2,
      failed: 0,
      processedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      results: [
        { fileName: 'One - Ann Author.epub', success: true, message: "File successfully imported into the 'Books' library from the Bookdrop folder" },
        { fileName: 'Two, Revised - Ann Author.epub', success: true, message: "File successfully imported into the 'Books' library from the Bookdrop folder" },
      ],
    });
    expect(existsSync(join(lib.root, 'Ann Author', 'Two, Revised', 'Two, Revised - Ann Author.epub'))).toBe(true);
    expect(existsSync(bookdrop('one.epub'))).toBe(false);
    expect((await pending()).map((f) => f.fileName)).toEqual(['three.epub']);

    const discard = await d.inject({ method: 'POST', url: '/api/v1/bookdrop/files/discard', headers: auth(dropper), payload: { selectAll: false, selectedIds: [id('three.epub')] } });
    expect(discard.statusCode).toBe(200);
    expect(existsSync(bookdrop('three.epub'))).toBe(false);
    expect(await pending()).toEqual([]);
  });

  it('refuses to import into a library the caller cannot see, and validates the body', async () => {
    const { mkdirSync } = await import('node:fs');
    mkdirSync(lib.path('..', 'secret'), { recursive: true });
    const secret = await createLibrary(d.store.db, { name: 'Secret', paths: [lib.path('..', 'secret')] });
    const res = await d.inject({ method: 'POST', url: '/api/v1/bookdrop/imports/finalize', headers: auth(dropper), payload: { selectAll: true, defaultLibraryId: secret.id, defaultPathId: secret.paths[0]!.id } });
    expect(res.statusCode).toBe(403);
    const bad = await d.inject({ method: 'POST', url: '/api/v1/bookdrop/imports/finalize', headers: auth(dropper), payload: { files: 'nope' } });
    expect(bad.statusCode).toBe(400);
    const empty = await d.inject({ method: 'POST', url: '/api/v1/bookdrop/imports/finalize', headers: auth(admin), payload: {} });
    expect(empty.json()).toMatchObject({ totalFiles: 0, successfullyImported: 0, failed: 0, results: [] });
  });

  it('is closed to users without the bookdrop permission', async () => {
    for (const [method, url] of [['GET', '/api/v1/bookdrop/files'], ['POST', '/api/v1/bookdrop/rescan'], ['POST', '/api/v1/bookdrop/files/discard']] as const) {
      const res = await d.inject({ method, url, headers: auth(nobody), ...(method === 'POST' ? { payload: { selectAll: true } } : {}) });
      expect(res.statusCode, url).toBe(403);
    }
  });
});

describe('uploads', () => {
  beforeEach(clearQueue);

  async function upload(url: string, token: string, file: { name: string; data: Buffer } | undefined, fields: Record<string, string> = {}): Promise<Response> {
    const form = new FormData();
    if (file) form.append('file', new Blob([new Uint8Array(file.data)]), file.name);
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    return fetch(`${base}${url}`, { method: 'POST', headers: auth(token), body: form });
  }

  async function setLimitMb(mb: number): Promise<void> {
    await d.store.db.insertInto('app_settings').values({ name: 'max_file_upload_size_in_mb', val: String(mb) }).onConflict((oc) => oc.column('name').doUpdateSet({ val: String(mb) })).execute();
  }

  it('to the bookdrop: the file lands under its name and waits for review; a taken name is 409', async () => {
    const epub = readFileSync(await writeSimpleEpub(lib.path('..', 'up.epub'), { title: 'Uploaded', authors: ['Up Loader'] }));
    const res = await upload('/api/v1/files/upload/bookdrop', dropper, { name: 'Uploaded Book.epub', data: epub });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    expect(readFileSync(bookdrop('Uploaded Book.epub'))).toEqual(epub);
    expect((await pending()).map((f) => f.fileName)).toContain('Uploaded Book.epub');
    const again = await upload('/api/v1/files/upload/bookdrop', dropper, { name: 'Uploaded Book.epub', data: Buffer.from('different') });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ status: 409, message: 'File already exists' });
    expect(readFileSync(bookdrop('Uploaded Book.epub'))).toEqual(epub);
    // No partial file is left in the folder.
    expect(readdirSync(bookdrop()).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it('rejects a file over max_file_upload_size_in_mb, an empty one, a missing one and a non-book', async () => {
    await setLimitMb(1);
    try {
      const big = await upload('/api/v1/files/upload/bookdrop', dropper, { name: 'big.pdf', data: Buffer.alloc(3 * 1024 * 1024, 1) });
      expect(big.status).toBe(400);
      expect(await big.json()).toMatchObject({ status: 400, message: 'File size exceeds the limit: 1 MB' });
      // Just over the limit (no early refusal by Content-Length): cut off while streaming.
      const over = await upload('/api/v1/files/upload/bookdrop', dropper, { name: 'over.pdf', data: Buffer.alloc(1024 * 1024 + 10, 1) });
      expect(over.status).toBe(400);
      expect(await over.json()).toMatchObject({ message: 'File size exceeds the limit: 1 MB' });
      expect(existsSync(bookdrop('over.pdf'))).toBe(false);
      expect(readdirSync(bookdrop()).filter((n) => n.startsWith('.'))).toEqual([]);
    } finally {
      await setLimitMb(100);
    }
    const empty = await upload('/api/v1/files/upload/bookdrop', dropper, { name: 'empty.epub', data: Buffer.alloc(0) });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ message: 'Uploaded file is missing.' });
    const none = await upload('/api/v1/files/upload/bookdrop', dropper, undefined, { note: 'x' });
    expect(none.status).toBe(400);
    const text = await upload('/api/v1/files/upload/bookdrop', dropper, { name: 'notes.txt', data: Buffer.from('hello') });
    expect(text.status).toBe(400);
    expect(await text.json()).toMatchObject({ message: 'Invalid file format: Unsupported file extension' });
    const json = await fetch(`${base}/api/v1/files/upload/bookdrop`, { method: 'POST', headers: { ...auth(dropper), 'content-type': 'application/json' }, body: '{}' });
    expect(json.status).not.toBe(200);
  });

  it('to a library: named by the upload pattern, catalogued at once, 204; fields may come after the file', async () => {
    const epub = readFileSync(await writeSimpleEpub(lib.path('..', 'lib-up.epub'), { title: 'Persuasion', authors: ['Jane Austen'] }));
    const res = await upload('/api/v1/files/upload', dropper, { name: 'persuasion.epub', data: epub }, { libraryId: String(library.id), pathId: String(library.paths[0]!.id) });
    expect(res.status).toBe(204);
    const target = join(lib.root, 'Jane Austen', 'Persuasion', 'Persuasion - Jane Austen.epub');
    expect(readFileSync(target)).toEqual(epub);
    const row = await d.store.db.selectFrom('book_file').innerJoin('book_metadata', 'book_metadata.book_id', 'book_file.book_id').select(['book_metadata.title', 'book_file.file_sub_path']).where('book_file.file_name', '=', 'Persuasion - Jane Austen.epub').executeTakeFirstOrThrow();
    expect(row).toEqual({ title: 'Persuasion', file_sub_path: 'Jane Austen/Persuasion' });
    const again = await upload(`/api/v1/files/upload?libraryId=${library.id}&pathId=${library.paths[0]!.id}`, dropper, { name: 'persuasion.epub', data: epub });
    expect(again.status).toBe(409);
    const missing = await upload('/api/v1/files/upload', dropper, { name: 'x.epub', data: epub }, { pathId: '1' });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ details: ['libraryId: must not be null'] });
    const unknown = await upload('/api/v1/files/upload', dropper, { name: 'x.epub', data: epub }, { libraryId: '999', pathId: '1' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ message: 'Library not found with ID: 999' });
    expect(readdirSync(join(d.config.dataDir, 'tmp')).filter((n) => n.startsWith('.'))).toEqual([]);
    writeFileSync(lib.path('.keep'), '');
    expect(readdirSync(lib.root).filter((n) => n.startsWith('.bindery-'))).toEqual([]);
  });

  it('needs the upload permission', async () => {
    const res = await upload('/api/v1/files/upload/bookdrop', nobody, { name: 'x.epub', data: Buffer.from('x') });
    expect(res.status).toBe(403);
    const anonymous = await fetch(`${base}/api/v1/files/upload/bookdrop`, { method: 'POST', body: new FormData() });
    expect(anonymous.status).toBe(401);
  });
});
