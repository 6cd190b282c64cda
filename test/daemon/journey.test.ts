// One user's whole first day, over real HTTP on 127.0.0.1: setup → login → library → scan → list → download → cover →
// progress → status → shelves, on a real catalog with real book files.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let d: TestDaemon;
let lib: TempLibrary;
let base: string;

beforeAll(async () => {
  lib = makeTempLibrary();
  await writeSimpleEpub(lib.path('Herbert', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], series: 'Dune', seriesIndex: 1, cover: '#2a6' });
  await writeSimpleEpub(lib.path('Austen', 'Emma.epub'), { title: 'Emma', authors: ['Jane Austen'] });
  d = await startTestDaemon();
  await d.app.listen({ port: 0, host: '127.0.0.1' });
  const address = d.app.server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  base = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  await d.close();
  lib.cleanup();
});

async function call(token: string | undefined, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

describe('a first day with bindery over HTTP', () => {
  it('goes from an empty server to a read book on a shelf', async () => {
    expect(await (await call(undefined, 'GET', '/api/v1/setup/status')).json()).toMatchObject({ data: false });
    expect((await call(undefined, 'POST', '/api/v1/setup', { username: 'ada', password: 'correct horse', name: 'Ada', email: 'ada@example.com' })).status).toBe(200);

    const login = await call(undefined, 'POST', '/api/v1/auth/login', { username: 'ada', password: 'correct horse' });
    expect(login.status).toBe(200);
    const { accessToken, refreshToken, expires } = (await login.json()) as { accessToken: string; refreshToken: string; expires: number };
    expect(expires).toBe(7200);
    expect(refreshToken).toBeTypeOf('string');

    const me = (await (await call(accessToken, 'GET', '/api/v1/users/me')).json()) as { username: string; permissions: Record<string, boolean> };
    expect(me).toMatchObject({ username: 'ada', permissions: { admin: true, canDownload: true } });

    const created = await call(accessToken, 'POST', '/api/v1/libraries', { name: 'Books', paths: [{ path: lib.root }], watch: false });
    expect(created.status).toBeLessThan(300);
    const library = (await created.json()) as { id: number };
    while (d.ctx.background.size > 0) await Promise.allSettled([...d.ctx.background]);

    const listed = (await (await call(accessToken, 'GET', '/api/v1/books?stripForListView=false')).json()) as { id: number; libraryId: number; metadata: { title: string; authors: string[]; coverUpdatedOn?: string }; primaryFile: { id: number; bookType: string } }[];
    expect(listed.map((b) => b.metadata.title).sort()).toEqual(['Dune', 'Emma']);
    const dune = listed.find((b) => b.metadata.title === 'Dune')!;
    expect(dune).toMatchObject({ libraryId: library.id, metadata: { authors: ['Frank Herbert'] }, primaryFile: { bookType: 'EPUB' } });
    expect(dune.metadata.coverUpdatedOn).toBeTypeOf('string');

    const download = await fetch(`${base}/api/v1/books/${dune.id}/download?token=${accessToken}`);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(readFileSync(lib.path('Herbert', 'Dune.epub')))).toBe(true);

    const cover = await fetch(`${base}/api/v1/media/book/${dune.id}/cover?token=${accessToken}`);
    expect(cover.status).toBe(200);
    expect(cover.headers.get('content-type')).toMatch(/image\/jpeg/);
    const etag = cover.headers.get('etag');
    expect(etag).toBeTruthy();
    expect((await fetch(`${base}/api/v1/media/book/${dune.id}/cover?token=${accessToken}`, { headers: { 'if-none-match': etag as string } })).status).toBe(304);

    const progress = await call(accessToken, 'POST', '/api/v1/books/progress', { bookId: dune.id, fileProgress: { bookFileId: dune.primaryFile.id, positionData: 'epubcfi(/6/4)', positionHref: 'ch1.xhtml', progressPercent: 42 } });
    expect(progress.status).toBe(204);
    let book = (await (await call(accessToken, 'GET', `/api/v1/books/${dune.id}`)).json()) as { readStatus: string; epubProgress?: { percentage: number } };
    expect(book).toMatchObject({ readStatus: 'READING', epubProgress: { percentage: 42 } });

    expect((await call(accessToken, 'POST', '/api/v1/books/status', { bookIds: [dune.id], status: 'READ' })).status).toBeLessThan(300);
    book = (await (await call(accessToken, 'GET', `/api/v1/books/${dune.id}`)).json()) as typeof book;
    expect(book.readStatus).toBe('READ');

    const createdShelf = await call(accessToken, 'POST', '/api/v1/shelves', { name: 'Classics', icon: 'book', iconType: 'LUCIDE' });
    expect(createdShelf.status).toBe(201);
    const shelf = (await createdShelf.json()) as { id: number };
    expect((await call(accessToken, 'POST', '/api/v1/books/shelves', { bookIds: [dune.id], shelvesToAssign: [shelf.id] })).status).toBeLessThan(300);
    const onShelf = (await (await call(accessToken, 'GET', `/api/v1/books/${dune.id}`)).json()) as { shelves: { id: number; name: string }[] };
    expect(onShelf.shelves.map((s) => s.name)).toContain('Classics');
    const shelfBooks = (await (await call(accessToken, 'GET', `/api/v1/shelves/${shelf.id}/books`)).json()) as { id: number }[];
    expect(shelfBooks.map((b) => b.id)).toEqual([dune.id]);

    const refreshed = await call(undefined, 'POST', '/api/v1/auth/refresh', { refreshToken });
    expect(refreshed.status).toBe(200);
    expect((await call(undefined, 'POST', '/api/v1/auth/refresh', { refreshToken })).status).toBe(400);
  });
});
