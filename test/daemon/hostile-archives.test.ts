// Comic archives built to be expensive: 100,000 tiny "pages" (the audit's 9.9 MB CBZ that cost 314 s and 400 MB),
// pages whose headers are not images, and a big archive at the page cap. Every path that lists pages (the web
// reader's sizes and page list, Komga, OPDS, the scan) gives a clear per-book error past the cap; within it, sizes
// come from the image headers. CPU figures are in bench/, not here.
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withComicArchive } from '../../src/core/formats/comic-archive.ts';
import { extractComic } from '../../src/core/formats/comic.ts';
import { LIMITS } from '../../src/core/formats/limits.ts';
import { comicPages } from '../../src/core/komga/pages.ts';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { jpeg, png, storedZip, zipBuffer } from '../helpers/comic-fixtures.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, type TempLibrary } from '../helpers/library-fixtures.ts';

let d: TestDaemon;
let lib: TempLibrary;
let admin: string;
let bookId: number;
let hostile: string;
let atCap: string;

const pages = (count: number, data: (i: number) => Buffer): { name: string; data: Buffer }[] =>
  Array.from({ length: count }, (_, i) => ({ name: `p${String(i + 1).padStart(6, '0')}.jpg`, data: data(i) }));

beforeAll(async () => {
  d = await startTestDaemon();
  admin = await d.setupAdmin();
  lib = makeTempLibrary();
  const cover = await jpeg('#36c', 40, 60);
  writeFileSync(lib.path('Comic.cbz'), await zipBuffer([{ name: 'p1.jpg', data: cover }]));
  const library = await createLibrary(d.store.db, { name: 'Comics', paths: [lib.root] });
  await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  bookId = (await d.store.db.selectFrom('book').select('id').executeTakeFirstOrThrow()).id;

  hostile = join(d.dir, 'hostile.cbz');
  writeFileSync(hostile, storedZip(pages(100_000, (i) => Buffer.from([i & 0xff]))));
  // At the cap: every page a real (tiny) image but one in a hundred, which is junk named .jpg.
  const tiny = await png('#c63', 30, 20);
  atCap = join(d.dir, 'at-cap.cbz');
  writeFileSync(atCap, storedZip(pages(LIMITS.maxPages, (i) => (i % 100 === 99 ? Buffer.from('junk') : tiny))));
}, 120_000);

afterAll(async () => {
  await d?.close();
  lib?.cleanup();
});

const get = (url: string) => d.inject({ method: 'GET', url, headers: { authorization: `Bearer ${admin}` } });

describe('an archive declaring 100,000 pages', () => {
  it('is refused by the reader routes with a per-book error naming the cap', async () => {
    // The book's file replaced after it was scanned (or catalogued by an older version): the reader opens it as it is.
    copyFileSync(hostile, lib.path('Comic.cbz'));
    for (const url of [`/api/v1/cbx/${bookId}/page-dimensions`, `/api/v1/cbx/${bookId}/pages`, `/api/v1/cbx/${bookId}/page-info`, `/api/v1/media/book/${bookId}/cbx/pages/1`]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(500);
      expect(res.json(), url).toMatchObject({ status: 500, message: `Failed to read Comic.cbz: the archive has 100000 pages (limit ${LIMITS.maxPages})` });
    }
  });

  it('fails the scan of that file alone (TOO_LARGE), and Komga/OPDS page lists refuse it', async () => {
    await expect(extractComic(hostile)).rejects.toMatchObject({ code: 'TOO_LARGE', message: `the archive has 100000 pages (limit ${LIMITS.maxPages})` });
    await expect(comicPages(hostile)).rejects.toMatchObject({ code: 'TOO_LARGE' });
  });
});

describe('an archive at the page cap', () => {
  it('gets every page size from the headers; pages that are not images are 0×0', async () => {
    copyFileSync(atCap, lib.path('Comic.cbz'));
    const res = await get(`/api/v1/cbx/${bookId}/page-dimensions`);
    expect(res.statusCode).toBe(200);
    const sizes = res.json() as { pageNumber: number; width: number; height: number; wide: boolean }[];
    expect(sizes).toHaveLength(LIMITS.maxPages);
    expect(sizes[0]).toEqual({ pageNumber: 1, width: 30, height: 20, wide: true });
    expect(sizes[99]).toEqual({ pageNumber: 100, width: 0, height: 0, wide: false });
    expect(sizes.filter((s) => s.width === 0)).toHaveLength(LIMITS.maxPages / 100);
  });

  it('reads only the head of a page, however large the page', async () => {
    const big = await jpeg('#963', 3000, 4000);
    const path = join(d.dir, 'big-page.cbz');
    writeFileSync(path, await zipBuffer([{ name: 'p1.jpg', data: big, compress: true }]));
    const head = await withComicArchive(path, (archive) => archive.readHead('p1.jpg', 1024));
    expect(head.length).toBe(1024);
    expect(head.equals(big.subarray(0, 1024))).toBe(true);
  });
});
