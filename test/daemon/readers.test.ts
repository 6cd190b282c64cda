// The web UI's readers over the API, on real generated books: EPUB structure and entries, comic pages and sizes, the
// PDF outline, the audiobook player's info, streams (with ranges) and cover; access and bad input refused.
import { mkdirSync, writeFileSync } from 'node:fs';
import { PDFDocument, PDFName, PDFString, type PDFRef } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { coverJpeg, writeAudio } from '../helpers/audio-fixtures.ts';
import { jpeg as comicJpeg, png as comicPng, writeZip as writeComicZip } from '../helpers/comic-fixtures.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { containerXml, jpeg, opfDocument, writeEpub, xhtmlPage } from '../helpers/epub-fixtures.ts';
import { makeTempLibrary, type TempLibrary } from '../helpers/library-fixtures.ts';
import { seedLibrary } from '../helpers/catalog-seed.ts';

let d: TestDaemon;
let lib: TempLibrary;
let admin: string;
let outsider: { id: number; token: string };
const ids: Record<string, number> = {};

/** A 3-page PDF whose outline has "Part One" → page 2 with a child "Chapter 1" → page 3, and "Notes" → page 1. */
async function pdfWithOutline(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const pages = [doc.addPage([300, 400]), doc.addPage([300, 400]), doc.addPage([300, 400])];
  const ctx = doc.context;
  const outlines = ctx.nextRef();
  const [part, chapter, notes] = [ctx.nextRef(), ctx.nextRef(), ctx.nextRef()];
  const dest = (page: number) => ctx.obj([pages[page]?.ref as PDFRef, PDFName.of('Fit')]);
  ctx.assign(chapter, ctx.obj({ Title: PDFString.of('Chapter 1'), Parent: part, Dest: dest(2) }));
  ctx.assign(part, ctx.obj({ Title: PDFString.of('Part One'), Parent: outlines, Next: notes, First: chapter, Last: chapter, Count: 1, Dest: dest(1) }));
  ctx.assign(notes, ctx.obj({ Title: PDFString.of('Notes'), Parent: outlines, Prev: part, Dest: dest(0) }));
  ctx.assign(outlines, ctx.obj({ Type: 'Outlines', First: part, Last: notes, Count: 3 }));
  doc.catalog.set(PDFName.of('Outlines'), outlines);
  return doc.save({ useObjectStreams: false });
}

beforeAll(async () => {
  d = await startTestDaemon();
  admin = await d.setupAdmin();
  lib = makeTempLibrary();

  const nav = xhtmlPage('<nav xmlns:epub="http://www.idpf.org/2007/ops" epub:type="toc"><ol><li><a href="text/ch1.xhtml">One</a><ol><li><a href="text/ch1.xhtml#s2">One, part two</a></li></ol></li><li><a href="text/ch2.xhtml">Two</a></li></ol></nav>');
  await writeEpub(lib.path('Novel.epub'), {
    opf: opfDocument({
      metadata: '<dc:title>A Novel</dc:title><dc:creator>Ann Author</dc:creator><dc:language>en</dc:language><dc:identifier id="bookid">urn:uuid:1234</dc:identifier><meta property="rendition:layout">reflowable</meta>',
      manifest: '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/><item id="c1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/><item id="c2" href="text/ch2.xhtml" media-type="application/xhtml+xml"/><item id="css" href="style.css" media-type="text/css"/><item id="cover" href="images/cover.jpg" media-type="image/jpeg" properties="cover-image"/>',
      spine: '<itemref idref="c1"/><itemref idref="c2"/><itemref idref="nav" linear="no"/>',
    }),
    files: { 'OEBPS/nav.xhtml': nav, 'OEBPS/text/ch1.xhtml': xhtmlPage('<p>one</p>'), 'OEBPS/text/ch2.xhtml': xhtmlPage('<p>two</p>'), 'OEBPS/style.css': 'p { margin: 0 }', 'OEBPS/images/cover.jpg': await jpeg(60, 90), 'OEBPS/secret.txt': 'not in the manifest' },
  });
  await writeEpub(lib.path('Classic.epub'), {
    opf: opfDocument({
      version: '2.0',
      metadata: '<dc:title>A Classic</dc:title>',
      manifest: '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/><item id="c1" href="c1.html" media-type="application/xhtml+xml"/>',
      spine: '<itemref idref="c1"/>',
    }).replace('<spine>', '<spine toc="ncx">'),
    opfPath: 'content.opf',
    container: containerXml('content.opf'),
    files: {
      'toc.ncx': '<?xml version="1.0"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><navMap><navPoint id="p1"><navLabel><text>Opening</text></navLabel><content src="c1.html#top"/></navPoint></navMap></ncx>',
      'c1.html': xhtmlPage('<p id="top">hello</p>'),
    },
  });
  await writeComicZip(lib.path('Comic.cbz'), [
    { name: 'p10.jpg', data: await comicJpeg('#c33', 40, 60) },
    { name: 'p2.jpg', data: await comicJpeg('#3c3', 40, 60) },
    { name: 'p11.png', data: await comicPng('#33c', 120, 60) },
  ]);
  writeFileSync(lib.path('Manual.pdf'), await pdfWithOutline());
  await writeAudio(lib.path('Talk.m4b'), 'm4b', {
    tags: { title: 'The Talk', artist: 'Sam Speaker', composer: 'Nora Narrator' },
    chapters: [{ title: 'Start', startMs: 0, endMs: 1500 }, { title: 'End', startMs: 1500, endMs: 3000 }],
    cover: await coverJpeg(50, 50, '#963'),
  });
  mkdirSync(lib.path('Serial'));
  await writeAudio(lib.path('Serial', '01 - Opening.mp3'), 'mp3-id3v2.4', { tags: { title: 'Opening', album: 'Serial' }, seconds: 2 });
  await writeAudio(lib.path('Serial', '02 - Closing.mp3'), 'mp3-id3v2.4', { tags: { title: 'Closing', album: 'Serial' }, seconds: 3, frequency: 660 });

  const library = await createLibrary(d.store.db, { name: 'Books', paths: [lib.root], organizationMode: 'BOOK_PER_FILE' });
  const summary = await scanLibrary(d.store, library, { coversRoot: d.ctx.paths.covers, workers: 0 });
  expect(summary.failed).toEqual([]);
  const rows = await d.store.db.selectFrom('book_file').select(['book_id', 'file_name']).execute();
  for (const row of rows) ids[row.file_name.replace(/\.[^.]+$/, '')] = row.book_id;
  const other = await seedLibrary(d.store.db, d.dir, 'Other');
  outsider = await d.createUser('outsider', {}, [other]);
}, 120_000);

afterAll(async () => {
  await d.close();
  lib.cleanup();
});

const get = (url: string, token = admin, headers: Record<string, string> = {}) => d.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}`, ...headers } });

describe('EPUB reader', () => {
  it('describes an EPUB 3 book: package, spine with linear flags, manifest sizes, nav table of contents, cover', async () => {
    const res = await get(`/api/v1/epub/${ids.Novel}/info`);
    expect(res.statusCode).toBe(200);
    const info = res.json() as Record<string, unknown>;
    expect(info).toMatchObject({
      containerPath: 'OEBPS/content.opf',
      rootPath: 'OEBPS/',
      coverPath: 'OEBPS/images/cover.jpg',
      metadata: { title: 'A Novel', creator: 'Ann Author', language: 'en', identifier: 'urn:uuid:1234', 'rendition:layout': 'reflowable' },
      spine: [
        { idref: 'c1', href: 'OEBPS/text/ch1.xhtml', mediaType: 'application/xhtml+xml', linear: true },
        { idref: 'c2', href: 'OEBPS/text/ch2.xhtml', mediaType: 'application/xhtml+xml', linear: true },
        { idref: 'nav', href: 'OEBPS/nav.xhtml', linear: false },
      ],
      toc: {
        label: 'Table of Contents',
        children: [
          { label: 'One', href: 'OEBPS/text/ch1.xhtml', children: [{ label: 'One, part two', href: 'OEBPS/text/ch1.xhtml#s2', children: null }] },
          { label: 'Two', href: 'OEBPS/text/ch2.xhtml', children: null },
        ],
      },
    });
    const css = (info.manifest as { id: string; size: number; properties: string[] | null }[]).find((m) => m.id === 'css');
    expect(css).toMatchObject({ href: 'OEBPS/style.css', mediaType: 'text/css', size: 15, properties: null });
  });

  it('reads an EPUB 2 table of contents from the NCX', async () => {
    const info = (await get(`/api/v1/epub/${ids.Classic}/info`)).json() as { rootPath: string; toc: unknown };
    expect(info.rootPath).toBe('');
    expect(info.toc).toEqual({ label: 'Table of Contents', href: null, children: [{ label: 'Opening', href: 'c1.html#top', children: null }] });
  });

  it('serves manifest entries by full or package-relative path, with a token in the query', async () => {
    const full = await d.inject({ method: 'GET', url: `/api/v1/epub/${ids.Novel}/file/OEBPS/style.css?token=${admin}` });
    expect(full.statusCode).toBe(200);
    expect(full.headers['content-type']).toContain('text/css');
    expect(full.body).toBe('p { margin: 0 }');
    const relative = await get(`/api/v1/epub/${ids.Novel}/file/text/ch1.xhtml`);
    expect(relative.statusCode).toBe(200);
    expect(relative.body).toContain('<p>one</p>');
    expect((await get(`/api/v1/epub/${ids.Novel}/file/META-INF/container.xml`)).statusCode).toBe(200);
  });

  it('refuses entries outside the manifest and paths that climb out', async () => {
    for (const path of ['OEBPS/secret.txt', 'secret.txt', '../../../../etc/passwd', 'OEBPS/..%2F..%2Fmimetype']) {
      const res = await get(`/api/v1/epub/${ids.Novel}/file/${path}`);
      expect(res.statusCode, path).toBe(404);
      expect(res.json()).toMatchObject({ status: 404 });
    }
  });

  it('answers a book without an EPUB file with 400, an unknown book with 404, a hidden one with 403', async () => {
    expect((await get(`/api/v1/epub/${ids.Manual}/info`)).statusCode).toBe(400);
    expect((await get('/api/v1/epub/99999/info')).statusCode).toBe(404);
    expect((await get(`/api/v1/epub/${ids.Novel}/info`, outsider.token)).statusCode).toBe(403);
    expect((await get(`/api/v1/epub/${ids.Novel}/file/OEBPS/style.css`, outsider.token)).statusCode).toBe(403);
    expect((await d.inject({ method: 'GET', url: `/api/v1/epub/${ids.Novel}/info` })).statusCode).toBe(401);
  });
});

describe('comic reader', () => {
  it('lists pages in natural order with names and sizes', async () => {
    expect((await get(`/api/v1/cbx/${ids.Comic}/pages`)).json()).toEqual([1, 2, 3]);
    expect((await get(`/api/v1/cbx/${ids.Comic}/page-info`)).json()).toEqual([
      { pageNumber: 1, displayName: 'p2.jpg' },
      { pageNumber: 2, displayName: 'p10.jpg' },
      { pageNumber: 3, displayName: 'p11.png' },
    ]);
    expect((await d.inject({ method: 'GET', url: `/api/v1/cbx/${ids.Comic}/page-dimensions?token=${admin}` })).json()).toEqual([
      { pageNumber: 1, width: 40, height: 60, wide: false },
      { pageNumber: 2, width: 40, height: 60, wide: false },
      { pageNumber: 3, width: 120, height: 60, wide: true },
    ]);
  });

  it('serves each page image, and 404 past the last page', async () => {
    const page = await d.inject({ method: 'GET', url: `/api/v1/media/book/${ids.Comic}/cbx/pages/3?token=${admin}` });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('image/png');
    expect(page.rawPayload.subarray(1, 4).toString()).toBe('PNG');
    expect((await get(`/api/v1/media/book/${ids.Comic}/cbx/pages/4`)).statusCode).toBe(404);
    expect((await get(`/api/v1/media/book/${ids.Comic}/cbx/pages/0`)).statusCode).toBe(404);
    expect((await get(`/api/v1/media/book/${ids.Comic}/cbx/pages/1`, outsider.token)).statusCode).toBe(403);
  });
});

describe('PDF reader', () => {
  it('gives the page count and the outline with the page each entry opens', async () => {
    expect((await get(`/api/v1/pdf/${ids.Manual}/pages`)).json()).toEqual([1, 2, 3]);
    expect((await get(`/api/v1/pdf/${ids.Manual}/info`)).json()).toEqual({
      pageCount: 3,
      outline: [
        { title: 'Part One', pageNumber: 2, children: [{ title: 'Chapter 1', pageNumber: 3, children: null }] },
        { title: 'Notes', pageNumber: 1, children: null },
      ],
    });
  });
});

describe('audiobook player', () => {
  it('describes a single-file audiobook with its chapters', async () => {
    const info = (await get(`/api/v1/audiobooks/${ids.Talk}/info`)).json() as Record<string, unknown>;
    expect(info).toMatchObject({ bookId: ids.Talk, title: 'The Talk', author: 'Sam Speaker', folderBased: false, codec: expect.any(String), tracks: null });
    expect(info.chapters).toMatchObject([{ index: 0, title: 'Start', startTimeMs: 0 }, { index: 1, title: 'End' }]);
    expect(info.totalSizeBytes).toBeGreaterThan(0);
  });

  it('describes a folder audiobook with its tracks on one timeline', async () => {
    const info = (await get(`/api/v1/audiobooks/${ids.Serial}/info`)).json() as { folderBased: boolean; tracks: { index: number; fileName: string; cumulativeStartMs: number; durationMs: number }[] };
    expect(info.folderBased).toBe(true);
    expect(info.tracks.map((t) => t.fileName)).toEqual(['01 - Opening.mp3', '02 - Closing.mp3']);
    expect(info.tracks[0]?.cumulativeStartMs).toBe(0);
    expect(info.tracks[1]?.cumulativeStartMs).toBe(info.tracks[0]?.durationMs);
  });

  it('streams the file with byte ranges', async () => {
    const whole = await d.inject({ method: 'GET', url: `/api/v1/audiobooks/${ids.Talk}/stream?token=${admin}` });
    expect(whole.statusCode).toBe(200);
    expect(whole.headers['accept-ranges']).toBe('bytes');
    const part = await get(`/api/v1/audiobooks/${ids.Talk}/stream`, admin, { range: 'bytes=0-99' });
    expect(part.statusCode).toBe(206);
    expect(part.rawPayload.length).toBe(100);
    expect(part.headers['content-range']).toBe(`bytes 0-99/${whole.rawPayload.length}`);
    expect((await get(`/api/v1/audiobooks/${ids.Talk}/track/1/stream`)).statusCode).toBe(404);
  });

  it('streams each track of a folder audiobook, by path or by query', async () => {
    const bookId = ids.Serial;
    const second = await get(`/api/v1/audiobooks/${bookId}/track/1/stream`);
    expect(second.statusCode).toBe(200);
    expect(second.headers['content-type']).toBe('audio/mpeg');
    const viaQuery = await get(`/api/v1/audiobooks/${bookId}/stream?trackIndex=1`);
    expect(viaQuery.rawPayload.equals(second.rawPayload)).toBe(true);
    expect((await get(`/api/v1/audiobooks/${bookId}/track/2/stream`)).statusCode).toBe(404);
    expect((await get(`/api/v1/audiobooks/${bookId}/track/-1/stream`)).statusCode).toBe(400);
  });

  it('serves the audiobook cover, and refuses those who cannot see the book', async () => {
    const cover = await get(`/api/v1/audiobooks/${ids.Talk}/cover`);
    expect(cover.statusCode).toBe(200);
    expect(cover.headers['content-type']).toBe('image/jpeg');
    expect((await get(`/api/v1/audiobooks/${ids.Talk}/info`, outsider.token)).statusCode).toBe(403);
    expect((await get(`/api/v1/audiobooks/${ids.Talk}/stream`, outsider.token)).statusCode).toBe(403);
  });
});
