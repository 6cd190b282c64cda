import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bookJson } from '../../src/core/books/book-view.ts';
import { coverFile } from '../../src/core/covers/cover-store.ts';
import { makePendingThumbnails } from '../../src/core/covers/thumbnail-backlog.ts';
import { createLibrary, type Library, type OrganizationMode } from '../../src/core/libraries/libraries.ts';
import { scanLibrary, type ScanSummary } from '../../src/core/scan/scanner.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';
import { buildPdf } from '../helpers/pdf-fixtures.ts';
import { coverJpeg, writeAudio } from '../helpers/audio-fixtures.ts';
import { opfDocument, writeEpub, writeZip } from '../helpers/epub-fixtures.ts';
import { writeFb2 } from '../helpers/fb2-fixtures.ts';

let lib: TempLibrary;
let store: Store;

beforeEach(async () => {
  lib = makeTempLibrary();
  store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
});

afterEach(async () => {
  await store.close();
  lib.cleanup();
});

async function library(mode: OrganizationMode = 'AUTO_DETECT', roots: string[] = [lib.root]): Promise<Library> {
  return createLibrary(store.db, { name: `lib-${Math.random()}`, paths: roots, organizationMode: mode });
}

function scan(l: Library, full = false, workers = 0): Promise<ScanSummary> {
  return scanLibrary(store, l, { coversRoot: join(lib.dataDir, 'covers'), workers, full });
}

async function titleOf(bookId: number): Promise<string | undefined> {
  const row = await store.db.selectFrom('book_metadata').select('title').where('book_id', '=', bookId).executeTakeFirst();
  return row?.title ?? undefined;
}

async function onlyBookId(): Promise<number> {
  const rows = await store.db.selectFrom('book').select('id').execute();
  expect(rows).toHaveLength(1);
  return rows[0]!.id;
}

describe('first scan', () => {
  it('adds books with metadata, series, identifiers and covers', async () => {
    await writeSimpleEpub(lib.path('Herbert', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], series: 'Dune Chronicles', seriesIndex: 1, isbn: '9780441013593', cover: '#2a6' });
    await writeSimpleEpub(lib.path('Le Guin', 'Earthsea.epub'), { title: 'A Wizard of Earthsea', authors: ['Ursula K. Le Guin'] });
    const l = await library();
    const summary = await scan(l);
    // Dune has a cover; its thumbnail is made after the scan.
    expect(summary).toMatchObject({ added: 2, updated: 0, moved: 0, missing: 0, failed: [], thumbnailsPending: 1 });

    const dune = await store.db.selectFrom('book_metadata').selectAll().where('title', '=', 'Dune').executeTakeFirstOrThrow();
    expect(dune).toMatchObject({ series_name: 'Dune Chronicles', series_number: 1, isbn_13: '9780441013593', language: 'en' });
    const book = await bookJson(store.db, dune.book_id);
    expect(book?.metadata).toMatchObject({ authors: ['Frank Herbert'], seriesName: 'Dune Chronicles', isbn13: '9780441013593' });
    expect(book?.primaryFile).toMatchObject({ fileName: 'Dune.epub', fileSubPath: 'Herbert', bookType: 'EPUB', extension: 'epub', book: true });
    expect((book?.metadata as Record<string, unknown>).coverUpdatedOn).toBeTypeOf('string');

    const cover = coverFile(join(lib.dataDir, 'covers'), dune.book_id, 'book', 'cover');
    const thumb = coverFile(join(lib.dataDir, 'covers'), dune.book_id, 'book', 'thumbnail');
    expect((await sharp(cover).metadata()).format).toBe('jpeg');
    expect(existsSync(thumb)).toBe(false);
    expect(await makePendingThumbnails(store, join(lib.dataDir, 'covers'))).toBe(1);
    const thumbMeta = await sharp(thumb).metadata();
    expect(thumbMeta.height).toBeLessThanOrEqual(350);
    expect(thumbMeta.width).toBeLessThanOrEqual(250);

    const file = await store.db.selectFrom('book_file').selectAll().where('book_id', '=', dune.book_id).executeTakeFirstOrThrow();
    expect(file.current_hash).toMatch(/^[0-9a-f]{32}$/);
    expect(file.initial_hash).toBe(file.current_hash);
    expect(file.content_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('records unreadable files with a reason and does not re-read them while unchanged', async () => {
    writeFileSync(lib.path('broken.epub'), 'this is not a zip');
    writeFileSync(lib.path('empty.pdf'), '');
    await writeSimpleEpub(lib.path('ok.epub'), { title: 'Fine' });
    const l = await library();
    const first = await scan(l);
    expect(first.added).toBe(1);
    expect(first.failed.map((f) => f.code).sort()).toEqual(['CORRUPT', 'EMPTY']);
    expect(first.failed.find((f) => f.path.endsWith('broken.epub'))?.reason).toMatch(/zip/i);
    const again = await scan(l);
    expect(again.failed).toHaveLength(2);
    expect(again.added).toBe(0);
    expect(await store.db.selectFrom('scan_failure').select('id').execute()).toHaveLength(2);
    rmSync(lib.path('broken.epub'));
    await scan(l);
    expect(await store.db.selectFrom('scan_failure').select('file_name').execute()).toEqual([{ file_name: 'empty.pdf' }]);
  });

  it('uses the worker pool for larger scans', async () => {
    for (let i = 0; i < 12; i++) await writeSimpleEpub(lib.path(`b${i}.epub`), { title: `Book ${i}`, cover: '#123456' });
    const summary = await scan(await library('BOOK_PER_FILE'), false, 2);
    expect(summary.added).toBe(12);
    expect(summary.failed).toEqual([]);
  });
});

describe('rescan', () => {
  it('skips unchanged files and re-reads changed ones', async () => {
    const path = await writeSimpleEpub(lib.path('a.epub'), { title: 'Old Title' });
    const l = await library();
    await scan(l);
    const id = await onlyBookId();
    expect(await scan(l)).toMatchObject({ added: 0, updated: 0, unchanged: 1 });

    await writeSimpleEpub(path, { title: 'New Title', body: 'changed' });
    utimesSync(path, new Date(), new Date(Date.now() + 5000));
    expect(await scan(l)).toMatchObject({ added: 0, updated: 1, unchanged: 0 });
    expect(await onlyBookId()).toBe(id);
    expect(await titleOf(id)).toBe('New Title');
  });

  it('never overwrites locked fields', async () => {
    const path = await writeSimpleEpub(lib.path('a.epub'), { title: 'File Title', authors: ['File Author'], series: 'S', seriesIndex: 2 });
    const l = await library();
    await scan(l);
    const id = await onlyBookId();
    await store.db.updateTable('book_metadata').set({ title: 'My Title', title_locked: 1, series_name: 'Mine', series_name_locked: 1, authors_locked: 1 }).where('book_id', '=', id).execute();

    await writeSimpleEpub(path, { title: 'Changed Title', authors: ['Someone Else'], series: 'Other', seriesIndex: 3, body: 'x' });
    utimesSync(path, new Date(), new Date(Date.now() + 5000));
    await scan(l);
    const meta = await store.db.selectFrom('book_metadata').selectAll().where('book_id', '=', id).executeTakeFirstOrThrow();
    expect(meta).toMatchObject({ title: 'My Title', series_name: 'Mine', series_number: 3 });
    expect((await bookJson(store.db, id))?.metadata).toMatchObject({ authors: ['File Author'] });

    await store.db.updateTable('book_metadata').set({ all_fields_locked: 1 }).where('book_id', '=', id).execute();
    await scan(l, true);
    expect(await store.db.selectFrom('book_metadata').select('series_number').where('book_id', '=', id).executeTakeFirstOrThrow()).toEqual({ series_number: 3 });
  });

  it('recognises a moved and renamed file by its content and keeps its identity and reading data', async () => {
    await writeSimpleEpub(lib.path('inbox', 'x.epub'), { title: 'Wanderer' });
    const l = await library();
    await scan(l);
    const id = await onlyBookId();
    const user = await store.db.insertInto('users').values({ username: 'u', password_hash: 'x', name: 'U' }).returning('id').executeTakeFirstOrThrow();
    await store.db.insertInto('user_book_progress').values({ user_id: user.id, book_id: id, read_status: 'READING', epub_progress_percent: 42 }).execute();

    mkdirSync(lib.path('Shelf', 'Author'), { recursive: true });
    renameSync(lib.path('inbox', 'x.epub'), lib.path('Shelf', 'Author', 'Wanderer.epub'));
    const summary = await scan(l);
    expect(summary).toMatchObject({ moved: 1, added: 0, missing: 0 });
    expect(await onlyBookId()).toBe(id);
    const file = await store.db.selectFrom('book_file').selectAll().where('book_id', '=', id).executeTakeFirstOrThrow();
    expect(file).toMatchObject({ file_sub_path: 'Shelf/Author', file_name: 'Wanderer.epub', missing_at: null });
    expect(await store.db.selectFrom('user_book_progress').select(['read_status', 'epub_progress_percent']).where('book_id', '=', id).executeTakeFirstOrThrow()).toEqual({ read_status: 'READING', epub_progress_percent: 42 });
  });

  it('marks vanished files missing, keeps the book, and restores it when the file returns', async () => {
    await writeSimpleEpub(lib.path('gone.epub'), { title: 'Gone' });
    await writeSimpleEpub(lib.path('stay.epub'), { title: 'Stay' });
    const l = await library();
    await scan(l);
    renameSync(lib.path('gone.epub'), join(lib.dataDir, 'aside.epub'));
    expect(await scan(l)).toMatchObject({ missing: 1 });
    const gone = await store.db.selectFrom('book').innerJoin('book_metadata', 'book_metadata.book_id', 'book.id').select(['book.id', 'book.missing_at']).where('title', '=', 'Gone').executeTakeFirstOrThrow();
    expect(gone.missing_at).not.toBeNull();
    expect((await bookJson(store.db, gone.id))?.missing).toBe(true);

    renameSync(join(lib.dataDir, 'aside.epub'), lib.path('gone.epub'));
    expect(await scan(l)).toMatchObject({ restored: 1, missing: 0 });
    const back = await store.db.selectFrom('book').select('missing_at').where('id', '=', gone.id).executeTakeFirstOrThrow();
    expect(back.missing_at).toBeNull();
  });

  it('a missing file that reappears elsewhere later is still recognised as moved', async () => {
    await writeSimpleEpub(lib.path('a.epub'), { title: 'Roamer' });
    const l = await library();
    await scan(l);
    const id = await onlyBookId();
    renameSync(lib.path('a.epub'), join(lib.dataDir, 'a.epub'));
    await scan(l);
    renameSync(join(lib.dataDir, 'a.epub'), lib.path('b.epub'));
    expect(await scan(l)).toMatchObject({ moved: 1, added: 0 });
    expect(await onlyBookId()).toBe(id);
  });
});

describe('unreachable roots', () => {
  it('stops for a root that is gone and marks nothing missing', async () => {
    await writeSimpleEpub(lib.path('a.epub'), { title: 'Safe' });
    const l = await library();
    await scan(l);
    renameSync(lib.root, `${lib.root}-unmounted`);
    const summary = await scan(l);
    expect(summary.skippedRoots).toHaveLength(1);
    expect(summary.missing).toBe(0);
    expect((await store.db.selectFrom('book_file').select('missing_at').executeTakeFirstOrThrow()).missing_at).toBeNull();
  });

  it('treats an empty mount point that used to hold books as unmounted', async () => {
    await writeSimpleEpub(lib.path('a.epub'), { title: 'Safe' });
    const l = await library();
    await scan(l);
    renameSync(lib.path('a.epub'), join(lib.dataDir, 'a.epub'));
    const summary = await scan(l);
    expect(summary.skippedRoots[0]?.reason).toMatch(/empty/);
    expect(summary.missing).toBe(0);
  });
});

describe('grouping formats', () => {
  it('AUTO_DETECT makes Dune.epub and Dune.pdf one book with the EPUB as primary', async () => {
    writeFileSync(lib.path('Dune.pdf'), await buildPdf({ title: 'Dune (PDF)', pages: 2 }));
    await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    await writeSimpleEpub(lib.path('Other.epub'), { title: 'Other' });
    const l = await library('AUTO_DETECT');
    expect(await scan(l)).toMatchObject({ added: 2, updated: 1 });
    const dune = await store.db.selectFrom('book_metadata').select('book_id').where('title', '=', 'Dune').executeTakeFirstOrThrow();
    const book = await bookJson(store.db, dune.book_id);
    expect(book?.primaryFile).toMatchObject({ bookType: 'EPUB' });
    expect(book?.alternativeFormats).toEqual([expect.objectContaining({ bookType: 'PDF', fileName: 'Dune.pdf' })]);
  });

  it('BOOK_PER_FILE keeps every file its own book', async () => {
    writeFileSync(lib.path('Dune.pdf'), await buildPdf({ title: 'Dune (PDF)' }));
    await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune' });
    expect(await scan(await library('BOOK_PER_FILE'))).toMatchObject({ added: 2 });
  });

  it('BOOK_PER_FOLDER makes the files of one folder one book', async () => {
    await writeSimpleEpub(lib.path('Dune', 'dune-1965.epub'), { title: 'Dune' });
    writeFileSync(lib.path('Dune', 'scan.pdf'), await buildPdf({ title: 'scan' }));
    await writeSimpleEpub(lib.path('Emma', 'emma.epub'), { title: 'Emma' });
    expect(await scan(await library('BOOK_PER_FOLDER'))).toMatchObject({ added: 2, updated: 1 });
    expect(existsSync(lib.path('Dune', 'scan.pdf'))).toBe(true);
  });
});

describe('audiobooks and other formats', () => {
  it('treats a folder of tracks as one audiobook with a chapter per track and a square cover', async () => {
    const cover = await coverJpeg(400, 400, '#884422');
    mkdirSync(lib.path('Narrated', 'The Tale'), { recursive: true });
    for (const [i, name] of ['01 Opening.mp3', '02 Middle.mp3', '10 End.mp3'].entries()) {
      await writeAudio(lib.path('Narrated', 'The Tale', name), 'mp3-id3v2.4', { tags: { title: name.slice(3, -4), album: 'The Tale', artist: 'Ann Author' }, seconds: 2, frequency: 300 + i * 100, ...(i === 0 ? { cover } : {}) });
    }
    await writeAudio(lib.path('Single.m4b'), 'm4b', { tags: { album: 'Single Book', artist: 'Solo' }, seconds: 2 });
    const summary = await scan(await library('BOOK_PER_FILE'));
    expect(summary).toMatchObject({ added: 2, failed: [] });

    const tale = await store.db.selectFrom('book_file').selectAll().where('file_name', '=', 'The Tale').executeTakeFirstOrThrow();
    expect(tale).toMatchObject({ is_folder_based: 1, file_sub_path: 'Narrated', book_type: 'AUDIOBOOK', chapter_count: 3 });
    expect(tale.duration_seconds).toBeGreaterThanOrEqual(5);
    const book = await bookJson(store.db, tale.book_id);
    expect(book?.metadata).toMatchObject({ title: 'The Tale', authors: ['Ann Author'], audiobookMetadata: { chapterCount: 3 } });
    const chapters = (book?.metadata as { audiobookMetadata: { chapters: { title: string }[] } }).audiobookMetadata.chapters.map((c) => c.title);
    expect(chapters).toEqual(['Opening', 'Middle', 'End']);
    const square = await sharp(coverFile(join(lib.dataDir, 'covers'), tale.book_id, 'audiobook', 'cover')).metadata();
    expect(square.width).toBe(square.height);
    expect((book?.metadata as Record<string, unknown>).audiobookCoverUpdatedOn).toBeTypeOf('string');
    expect(tale.current_hash).toMatch(/^[0-9a-f]{32}$/);

    // a rescan with the tracks unchanged reads nothing
    expect(await scan(await libraryById())).toMatchObject({ unchanged: 2, added: 0, updated: 0 });
  });

  it('on a scan worker (blocking reads), gives audiobooks and PDFs their metadata and JPEG covers of the right size', async () => {
    const square = await sharp({ create: { width: 1400, height: 1400, channels: 3, background: '#2a6', noise: { type: 'gaussian', mean: 100, sigma: 30 } } }).jpeg({ quality: 85 }).toBuffer();
    await writeAudio(lib.path('Heard.m4b'), 'm4b', { tags: { album: 'Heard Book', artist: 'Ann Teller' }, chapters: [{ title: 'One', startMs: 0, endMs: 2000 }, { title: 'Two', startMs: 2000, endMs: 4000 }], cover: square, seconds: 4 });
    mkdirSync(lib.path('Tracks Book'), { recursive: true });
    await writeAudio(lib.path('Tracks Book', '01.mp3'), 'mp3-id3v2.3', { tags: { title: 'First', album: 'Tracks Book' }, seconds: 2, cover: square });
    await writeAudio(lib.path('Tracks Book', '02.mp3'), 'mp3-id3v2.3', { tags: { title: 'Second' }, seconds: 3 });
    const page = await sharp({ create: { width: 900, height: 1350, channels: 3, background: '#a53' } }).jpeg({ quality: 88 }).toBuffer();
    writeFileSync(lib.path('scan.pdf'), await buildPdf({ title: 'Scanned Pages', pages: 4, pageSize: [600, 900], image: { jpeg: page } }));
    writeFileSync(lib.path('text.pdf'), await buildPdf({ title: 'Text Pages', pages: 2, text: 'Chapter One' }));
    // Audiobooks show their square cover as the book cover too: 2 + 2 + 2 thumbnails to make.
    expect(await scan(await library('BOOK_PER_FILE'), false, 1)).toMatchObject({ added: 4, failed: [], thumbnailsPending: 6 });

    const covers = join(lib.dataDir, 'covers');
    expect(await makePendingThumbnails(store, covers)).toBe(6);
    const files = await store.db.selectFrom('book_file').select(['book_id', 'file_name', 'book_type', 'duration_seconds', 'chapter_count', 'page_count']).orderBy('file_name').execute();
    expect(files.map((f) => [f.file_name, f.book_type])).toEqual([['Heard.m4b', 'AUDIOBOOK'], ['Tracks Book', 'AUDIOBOOK'], ['scan.pdf', 'PDF'], ['text.pdf', 'PDF']]);
    const [heard, tracks, scanned, text] = files as [(typeof files)[number], (typeof files)[number], (typeof files)[number], (typeof files)[number]];
    expect(heard).toMatchObject({ duration_seconds: 4, chapter_count: 2 });
    expect(tracks).toMatchObject({ duration_seconds: 5, chapter_count: 2 });
    expect(scanned.page_count).toBe(4);
    expect(text.page_count).toBe(2);
    for (const audiobook of [heard, tracks]) {
      const cover = await sharp(coverFile(covers, audiobook.book_id, 'audiobook', 'cover')).metadata();
      const thumbnail = await sharp(coverFile(covers, audiobook.book_id, 'audiobook', 'thumbnail')).metadata();
      // Within twice the 1000 × 1000 box, the embedded JPEG is kept as it is (docs/scanning.md#covers).
      expect([cover.format, cover.width, cover.height]).toEqual(['jpeg', 1400, 1400]);
      expect([thumbnail.format, thumbnail.width, thumbnail.height]).toEqual(['jpeg', 250, 250]);
    }
    // The page-one JPEG is kept as it is (within twice the cover box); the text page is rendered 1,000 px high.
    expect(readFileSync(coverFile(covers, scanned.book_id, 'book', 'cover')).equals(page)).toBe(true);
    const rendered = await sharp(coverFile(covers, text.book_id, 'book', 'cover')).metadata();
    expect([rendered.format, rendered.height]).toEqual(['jpeg', 1000]);
    for (const book of [scanned, text]) {
      const thumbnail = await sharp(coverFile(covers, book.book_id, 'book', 'thumbnail')).metadata();
      expect(thumbnail.format).toBe('jpeg');
      expect(thumbnail.height).toBe(350);
      expect(thumbnail.width).toBeLessThanOrEqual(250);
    }
  });

  it('reads comics, PDFs and FB2 alongside EPUBs', async () => {
    await writeZip(lib.path('comic.cbz'), [
      { name: 'ComicInfo.xml', data: '<?xml version="1.0"?><ComicInfo><Title>Issue One</Title><Series>Saga</Series><Number>1</Number><Writer>W. Riter</Writer></ComicInfo>' },
      { name: 'p1.jpg', data: await coverJpeg(200, 300, '#123456') },
    ]);
    writeFileSync(lib.path('doc.pdf'), await buildPdf({ title: 'Portable', author: 'P. Author', pages: 3 }));
    writeFb2(lib.path('tale.fb2'), { titleInfo: '<book-title>Fable</book-title><author><first-name>Ivan</first-name><last-name>Krylov</last-name></author><lang>ru</lang>' });
    const summary = await scan(await library('BOOK_PER_FILE'));
    expect(summary).toMatchObject({ added: 3, failed: [] });
    const titles = (await store.db.selectFrom('book_metadata').select('title').orderBy('title').execute()).map((r) => r.title);
    expect(titles).toEqual(['Fable', 'Issue One', 'Portable']);
    const comic = await store.db.selectFrom('book_metadata').innerJoin('comic_metadata', 'comic_metadata.book_id', 'book_metadata.book_id').select(['series_name', 'issue_number']).executeTakeFirstOrThrow();
    expect(comic).toEqual({ series_name: 'Saga', issue_number: '1' });
    const pdf = await store.db.selectFrom('book_file').select(['page_count', 'book_type']).where('file_name', '=', 'doc.pdf').executeTakeFirstOrThrow();
    expect(pdf).toEqual({ page_count: 3, book_type: 'PDF' });
  });
});

async function libraryById(): Promise<Library> {
  const row = await store.db.selectFrom('library').select('id').executeTakeFirstOrThrow();
  const { findLibrary } = await import('../../src/core/libraries/libraries.ts');
  return findLibrary(store.db, row.id);
}

describe('partial problems', () => {
  it('adds a comic whose ComicInfo.xml is malformed, with a warning, and a book whose cover is broken', async () => {
    await writeZip(lib.path('odd.cbz'), [
      { name: 'ComicInfo.xml', data: '<?xml version="1.0"?><ComicInfo><Title>Tom & Jerry</Title></ComicInfo>' },
      { name: 'p1.jpg', data: await coverJpeg(100, 150, '#333333') },
    ]);
    await writeEpub(lib.path('badcover.epub'), {
      opf: opfDocument({ metadata: '<dc:title>Broken Cover</dc:title><meta name="cover" content="c"/>', manifest: '<item id="c" href="c.jpg" media-type="image/jpeg"/><item id="t" href="t.xhtml" media-type="application/xhtml+xml"/>', spine: '<itemref idref="t"/>' }),
      files: { 'OEBPS/c.jpg': Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(64, 7)]), 'OEBPS/t.xhtml': '<html xmlns="http://www.w3.org/1999/xhtml"><body><p>x</p></body></html>' },
    });
    const summary = await scan(await library('BOOK_PER_FILE'));
    expect(summary.added).toBe(2);
    expect(summary.failed).toEqual([]);
    expect(summary.warnings.map((w) => w.path.split('/').pop())).toContain('odd.cbz');
    expect(summary.warnings.find((w) => w.path.endsWith('odd.cbz'))?.reason).toMatch(/ComicInfo/);
    expect(summary.warnings.find((w) => w.path.endsWith('badcover.epub'))?.reason).toMatch(/no cover/);
  });
});
