import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { coverDir } from '../../src/core/covers/cover-store.ts';
import { libraryScanJobs } from '../../src/core/libraries/library-scan-jobs.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';
import { buildPdf } from '../helpers/pdf-fixtures.ts';

let d: TestDaemon;
let lib: TempLibrary;
let admin: string;

/** Waits for every background scan the daemon started (and any they queued). */
async function scansDone(): Promise<void> {
  while (d.ctx.background.size > 0) await Promise.allSettled([...d.ctx.background]);
}

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

async function createLibrary(body: Record<string, unknown>, token = admin) {
  return d.inject({ method: 'POST', url: '/api/v1/libraries', headers: auth(token), payload: body });
}

async function booksOf(libraryId: number, token = admin): Promise<{ id: number; metadata: { title: string } }[]> {
  const res = await d.inject({ method: 'GET', url: `/api/v1/libraries/${libraryId}/book`, headers: auth(token) });
  expect(res.statusCode).toBe(200);
  return res.json();
}

beforeEach(async () => {
  d = await startTestDaemon();
  lib = makeTempLibrary();
  admin = (await d.createUser('admin', { admin: true })).token;
  await writeSimpleEpub(lib.path('Herbert', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], cover: '#2a6' });
  await writeSimpleEpub(lib.path('Le Guin', 'Earthsea.epub'), { title: 'A Wizard of Earthsea', authors: ['Ursula K. Le Guin'] });
  writeFileSync(lib.path('Manual.pdf'), await buildPdf({ title: 'The Manual', pages: 2 }));
});

afterEach(async () => {
  await d.close();
  lib.cleanup();
});

describe('creating a library', () => {
  it('answers at once with the Library and scans its folders in the background', async () => {
    const res = await createLibrary({ name: 'Fiction', paths: [{ path: lib.root }], organizationMode: 'BOOK_PER_FILE', watch: false });
    expect(res.statusCode).toBe(200);
    const created = res.json();
    expect(created).toEqual({
      id: expect.any(Number),
      name: 'Fiction',
      watch: false,
      paths: [{ id: expect.any(Number), path: lib.root }],
      organizationMode: 'BOOK_PER_FILE',
      metadataSource: 'EMBEDDED',
    });
    await scansDone();
    const books = await booksOf(created.id);
    expect(books.map((b) => b.metadata.title).sort()).toEqual(['A Wizard of Earthsea', 'Dune', 'The Manual']);
    const counts = await d.inject({ method: 'GET', url: `/api/v1/libraries/${created.id}/format-counts`, headers: auth(admin) });
    expect(counts.json()).toEqual({ EPUB: 2, PDF: 1 });
  });

  it('rejects bad requests with 400 and callers without the permission with 403/401', async () => {
    const noName = await createLibrary({ paths: [{ path: lib.root }] });
    expect(noName.statusCode).toBe(400);
    expect(noName.json()).toMatchObject({ status: 400, message: 'Validation error', details: expect.arrayContaining([expect.stringContaining('name')]) });
    expect((await createLibrary({ name: 'X', paths: [] })).statusCode).toBe(400);
    expect((await createLibrary({ name: '  ', paths: [{ path: lib.root }] })).statusCode).toBe(400);
    expect((await createLibrary({ name: 'X', paths: [{ path: lib.root }], organizationMode: 'SOMETIMES' })).statusCode).toBe(400);
    const missing = await createLibrary({ name: 'X', paths: [{ path: join(lib.root, 'nope') }] });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().message).toContain('Invalid library path');

    await createLibrary({ name: 'Fiction', paths: [{ path: lib.root }] });
    const twice = await createLibrary({ name: 'Fiction', paths: [{ path: lib.root }] });
    expect(twice.statusCode).toBe(400);

    const reader = await d.createUser('reader', {});
    const denied = await createLibrary({ name: 'Mine', paths: [{ path: lib.root }] }, reader.token);
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toMatchObject({ status: 403, message: 'Access denied.' });
    const anonymous = await d.inject({ method: 'POST', url: '/api/v1/libraries', payload: { name: 'Y', paths: [{ path: lib.root }] } });
    expect(anonymous.statusCode).toBe(401);
    await scansDone();
  });

  it('assigns the new library to the librarian who created it', async () => {
    const librarian = await d.createUser('librarian', { canManageLibrary: true });
    const res = await createLibrary({ name: 'Theirs', paths: [{ path: lib.root }] }, librarian.token);
    expect(res.statusCode).toBe(200);
    await scansDone();
    const list = await d.inject({ method: 'GET', url: '/api/v1/libraries', headers: auth(librarian.token) });
    expect(list.json().map((l: { name: string }) => l.name)).toEqual(['Theirs']);
    expect(await booksOf(res.json().id, librarian.token)).toHaveLength(3);
  });
});

describe('reading libraries', () => {
  it('shows non-admins only their libraries and refuses the others with 403', async () => {
    const first = (await createLibrary({ name: 'First', paths: [{ path: lib.root }] })).json();
    mkdirSync(lib.path('..', 'other'), { recursive: true });
    const second = (await createLibrary({ name: 'Second', paths: [{ path: join(lib.root, '..', 'other') }] })).json();
    await scansDone();
    const reader = await d.createUser('reader', {}, [first.id]);

    const adminList = await d.inject({ method: 'GET', url: '/api/v1/libraries', headers: auth(admin) });
    expect(adminList.json().map((l: { id: number }) => l.id)).toEqual([first.id, second.id]);
    const readerList = await d.inject({ method: 'GET', url: '/api/v1/libraries', headers: auth(reader.token) });
    expect(readerList.json().map((l: { id: number }) => l.id)).toEqual([first.id]);

    expect((await d.inject({ method: 'GET', url: `/api/v1/libraries/${first.id}`, headers: auth(reader.token) })).json()).toMatchObject({ id: first.id, name: 'First' });
    const hidden = await d.inject({ method: 'GET', url: `/api/v1/libraries/${second.id}`, headers: auth(reader.token) });
    expect(hidden.statusCode).toBe(403);
    expect((await d.inject({ method: 'GET', url: `/api/v1/libraries/${second.id}/book`, headers: auth(reader.token) })).statusCode).toBe(403);
    expect((await d.inject({ method: 'GET', url: `/api/v1/libraries/${second.id}/format-counts`, headers: auth(reader.token) })).statusCode).toBe(403);
    expect((await d.inject({ method: 'GET', url: '/api/v1/libraries/999', headers: auth(admin) })).json()).toMatchObject({ status: 404, message: 'Library not found with ID: 999' });
    expect((await d.inject({ method: 'GET', url: '/api/v1/libraries/abc', headers: auth(admin) })).statusCode).toBe(400);
    expect((await d.inject({ method: 'GET', url: '/api/v1/libraries' })).statusCode).toBe(401);
  });

  it('returns one book of a library in full, and 404 for a book of another library', async () => {
    const created = (await createLibrary({ name: 'Fiction', paths: [{ path: lib.root }] })).json();
    await scansDone();
    const [book] = await booksOf(created.id);
    const one = await d.inject({ method: 'GET', url: `/api/v1/libraries/${created.id}/book/${book?.id}`, headers: auth(admin) });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ id: book?.id, libraryId: created.id, libraryName: 'Fiction', metadata: { titleLocked: false }, shelves: [] });
    const elsewhere = await d.inject({ method: 'GET', url: `/api/v1/libraries/${created.id}/book/9999`, headers: auth(admin) });
    expect(elsewhere.json()).toMatchObject({ status: 404, message: 'Book not found with ID: 9999' });
  });

  it('reports each library healthy while its folders can be read', async () => {
    const created = (await createLibrary({ name: 'Fiction', paths: [{ path: lib.root }] })).json();
    await scansDone();
    const healthy = await d.inject({ method: 'GET', url: '/api/v1/libraries/health', headers: auth(admin) });
    expect(healthy.json()).toEqual({ [created.id]: true });
    renameSync(lib.root, `${lib.root}-unmounted`);
    const unhealthy = await d.inject({ method: 'GET', url: '/api/v1/libraries/health', headers: auth(admin) });
    expect(unhealthy.json()).toEqual({ [created.id]: false });
    renameSync(`${lib.root}-unmounted`, lib.root);
  });
});

describe('changing libraries', () => {
  it('updates settings, scans an added folder and drops the books of a removed one while their files stay', async () => {
    const created = (await createLibrary({ name: 'Fiction', paths: [{ path: lib.root }] })).json();
    await scansDone();
    const extra = join(lib.root, '..', 'extra');
    await writeSimpleEpub(join(extra, 'Emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });

    const added = await d.inject({
      method: 'PUT',
      url: `/api/v1/libraries/${created.id}`,
      headers: auth(admin),
      payload: { name: 'Novels', icon: 'book', iconType: 'LUCIDE', watch: true, formatPriority: ['PDF', 'EPUB'], paths: [{ path: lib.root }, { path: extra }] },
    });
    expect(added.statusCode).toBe(200);
    expect(added.json()).toMatchObject({ name: 'Novels', icon: 'book', iconType: 'LUCIDE', watch: true, formatPriority: ['PDF', 'EPUB'], organizationMode: 'BOOK_PER_FILE' });
    expect(added.json().paths.map((p: { path: string }) => p.path)).toEqual([lib.root, extra]);
    await scansDone();
    expect((await booksOf(created.id)).map((b) => b.metadata.title)).toContain('Emma');

    const dune = (await booksOf(created.id)).find((b) => b.metadata.title === 'Dune');
    expect(existsSync(coverDir(d.ctx.paths.covers, dune?.id ?? 0))).toBe(true);
    const removed = await d.inject({ method: 'PUT', url: `/api/v1/libraries/${created.id}`, headers: auth(admin), payload: { name: 'Novels', paths: [{ path: extra }] } });
    expect(removed.statusCode).toBe(200);
    expect(removed.json()).toMatchObject({ watch: false, paths: [{ path: extra }] });
    expect(removed.json().formatPriority).toBeUndefined();
    await scansDone();
    expect((await booksOf(created.id)).map((b) => b.metadata.title)).toEqual(['Emma']);
    expect(existsSync(coverDir(d.ctx.paths.covers, dune?.id ?? 0))).toBe(false);
    expect(existsSync(lib.path('Herbert', 'Dune.epub'))).toBe(true);
  });

  it('rescans on refresh and sets the file naming pattern', async () => {
    const created = (await createLibrary({ name: 'Fiction', paths: [{ path: lib.root }] })).json();
    await scansDone();
    await writeSimpleEpub(lib.path('Persuasion.epub'), { title: 'Persuasion' });
    const refresh = await d.inject({ method: 'PUT', url: `/api/v1/libraries/${created.id}/refresh`, headers: auth(admin) });
    expect(refresh.statusCode).toBe(204);
    await scansDone();
    expect((await booksOf(created.id)).map((b) => b.metadata.title)).toContain('Persuasion');

    const url = `/api/v1/libraries/${created.id}/file-naming-pattern`;
    const set = await d.inject({ method: 'PATCH', url, headers: auth(admin), payload: { fileNamingPattern: '{authors}/{title}' } });
    expect(set.json()).toMatchObject({ id: created.id, fileNamingPattern: '{authors}/{title}' });
    const cleared = await d.inject({ method: 'PATCH', url, headers: auth(admin), payload: {} });
    expect(cleared.json().fileNamingPattern).toBeUndefined();
    const reader = await d.createUser('reader', {}, [created.id]);
    expect((await d.inject({ method: 'PUT', url: `/api/v1/libraries/${created.id}/refresh`, headers: auth(reader.token) })).statusCode).toBe(403);
  });

  it('never runs two scans of one library at once, and runs a requested one after the current', async () => {
    const created = (await createLibrary({ name: 'Fiction', paths: [{ path: lib.root }] })).json();
    const jobs = libraryScanJobs(d.store, { coversRoot: d.ctx.paths.covers, workers: 1 });
    expect(jobs.isScanning(created.id)).toBe(true);
    expect(jobs.request(created.id)).toBe('queued');
    expect(jobs.request(created.id)).toBe('queued');
    await jobs.idle();
    expect(jobs.isScanning(created.id)).toBe(false);
    expect(await booksOf(created.id)).toHaveLength(3);
    const files = await d.store.db.selectFrom('book_file').select('file_name').execute();
    expect(files).toHaveLength(3);
    expect(jobs.request(created.id)).toBe('started');
    await scansDone();
  });

  it('deletes a library with its books and covers; the files stay on disk, even when a scan was running', async () => {
    const created = (await createLibrary({ name: 'Fiction', paths: [{ path: lib.root }] })).json();
    await scansDone();
    const ids = (await booksOf(created.id)).map((b) => b.id);
    expect(ids.some((id) => existsSync(coverDir(d.ctx.paths.covers, id)))).toBe(true);
    await d.inject({ method: 'PUT', url: `/api/v1/libraries/${created.id}/refresh`, headers: auth(admin) });
    const res = await d.inject({ method: 'DELETE', url: `/api/v1/libraries/${created.id}`, headers: auth(admin) });
    expect(res.statusCode).toBe(204);
    await scansDone();
    expect((await d.inject({ method: 'GET', url: `/api/v1/libraries/${created.id}`, headers: auth(admin) })).statusCode).toBe(404);
    const all = await d.inject({ method: 'GET', url: '/api/v1/books', headers: auth(admin) });
    expect(all.json()).toEqual([]);
    expect(ids.every((id) => !existsSync(coverDir(d.ctx.paths.covers, id)))).toBe(true);
    expect(existsSync(lib.path('Herbert', 'Dune.epub'))).toBe(true);
    expect(existsSync(lib.path('Manual.pdf'))).toBe(true);
  });

  it('stops the first scan of a library deleted while it runs, leaving no books or covers behind', async () => {
    for (let i = 0; i < 40; i++) await writeSimpleEpub(lib.path('many', `Book ${i}.epub`), { title: `Book ${i}`, cover: '#36c', body: `text ${i}` });
    const created = (await createLibrary({ name: 'Big', paths: [{ path: lib.root }] })).json();
    const jobs = libraryScanJobs(d.store, { coversRoot: d.ctx.paths.covers, workers: 1 });
    expect(jobs.isScanning(created.id)).toBe(true);
    const res = await d.inject({ method: 'DELETE', url: `/api/v1/libraries/${created.id}`, headers: auth(admin) });
    expect(res.statusCode).toBe(204);
    expect(jobs.isScanning(created.id)).toBe(false);
    await scansDone();
    const { n } = await d.store.db.selectFrom('book').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(n)).toBe(0);
    const { readdirSync } = await import('node:fs');
    expect(existsSync(d.ctx.paths.covers) ? readdirSync(d.ctx.paths.covers) : []).toEqual([]);
  });

  it('stops every running scan on request, as a shutdown needs', async () => {
    for (let i = 0; i < 40; i++) await writeSimpleEpub(lib.path('many', `Book ${i}.epub`), { title: `Book ${i}`, body: `text ${i}` });
    const created = (await createLibrary({ name: 'Big', paths: [{ path: lib.root }] })).json();
    const { existingScanJobs } = await import('../../src/core/libraries/library-scan-jobs.ts');
    const jobs = existingScanJobs(d.store);
    expect(jobs?.isScanning(created.id)).toBe(true);
    await jobs?.cancelAll();
    expect(jobs?.isScanning(created.id)).toBe(false);
    const { n } = await d.store.db.selectFrom('book').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(n)).toBeLessThan(43);
  });

  it('counts the book files a new library would read', async () => {
    writeFileSync(lib.path('notes.txt'), 'not a book');
    const all = await d.inject({ method: 'POST', url: '/api/v1/libraries/scan', headers: auth(admin), payload: { name: 'Preview', paths: [{ path: lib.root }] } });
    expect(all.json()).toBe(3);
    const pdfOnly = await d.inject({ method: 'POST', url: '/api/v1/libraries/scan', headers: auth(admin), payload: { name: 'Preview', paths: [{ path: lib.root }], allowedFormats: ['PDF'] } });
    expect(pdfOnly.json()).toBe(1);
  });
});

describe('browsing folders', () => {
  it('lists only the sub-folders of a folder, sorted, for library managers', async () => {
    const res = await d.inject({ method: 'GET', url: `/api/v1/path?path=${encodeURIComponent(lib.root)}`, headers: auth(admin) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([join(lib.root, 'Herbert'), join(lib.root, 'Le Guin')]);

    for (const bad of [lib.path('Manual.pdf'), join(lib.root, 'missing'), '/proc', '']) {
      const refused = await d.inject({ method: 'GET', url: `/api/v1/path?path=${encodeURIComponent(bad)}`, headers: auth(admin) });
      expect(refused.statusCode, bad).toBe(400);
      expect(refused.json()).toMatchObject({ status: 400, message: expect.any(String) });
    }
    expect((await d.inject({ method: 'GET', url: '/api/v1/path', headers: auth(admin) })).statusCode).toBe(400);
    const reader = await d.createUser('reader', {});
    expect((await d.inject({ method: 'GET', url: `/api/v1/path?path=${encodeURIComponent(lib.root)}`, headers: auth(reader.token) })).statusCode).toBe(403);
    rmSync(lib.path('Herbert'), { recursive: true });
    expect((await d.inject({ method: 'GET', url: `/api/v1/path?path=${encodeURIComponent(lib.root)}`, headers: auth(admin) })).json()).toEqual([join(lib.root, 'Le Guin')]);
  });
});
