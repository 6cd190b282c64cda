import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import sharp from 'sharp';
import yauzl from 'yauzl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zipStream } from '../../src/core/media/zip-stream.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';
import { buildPdf } from '../helpers/pdf-fixtures.ts';

let d: TestDaemon;
let lib: TempLibrary;
let admin: { id: number; token: string };
let libraryId: number;
const ids: Record<string, number> = {};

const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const get = (url: string, headers: Record<string, string> = auth(admin.token)) => d.inject({ method: 'GET', url, headers });

/** Entry name → bytes of a ZIP archive, read with yauzl (which checks every CRC and size). */
function unzip(data: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(data, { lazyEntries: true, validateEntrySizes: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('no zip'));
      const out = new Map<string, Buffer>();
      zip.on('error', reject);
      zip.on('end', () => resolve(out));
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error('no stream'));
          buffer(stream).then((bytes) => {
            out.set(entry.fileName, bytes);
            zip.readEntry();
          }, reject);
        });
      });
      zip.readEntry();
    });
  });
}

beforeAll(async () => {
  d = await startTestDaemon();
  lib = makeTempLibrary();
  admin = await d.createUser('admin', { admin: true });
  await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], cover: '#2a6', body: 'x'.repeat(5000) });
  writeFileSync(lib.path('Dune.pdf'), await buildPdf({ title: 'Dune (PDF)', pages: 4 }));
  await writeSimpleEpub(lib.path('Ünïcode Tale.epub'), { title: 'Ünïcode Tale' });
  writeFileSync(lib.path('Plain.pdf'), await buildPdf({ title: 'Plain', pages: 1 }));
  const res = await d.inject({ method: 'POST', url: '/api/v1/libraries', headers: auth(admin.token), payload: { name: 'Main', paths: [{ path: lib.root }], organizationMode: 'AUTO_DETECT' } });
  libraryId = res.json().id;
  while (d.ctx.background.size > 0) await Promise.allSettled([...d.ctx.background]);
  for (const row of await d.store.db.selectFrom('book_metadata').select(['book_id', 'title']).execute()) ids[row.title as string] = row.book_id;
});

afterAll(async () => {
  await d.close();
  lib.cleanup();
});

describe('downloads', () => {
  it('sends the primary file with its name, by bearer or ?token=', async () => {
    const expected = readFileSync(lib.path('Dune.epub'));
    const res = await get(`/api/v1/books/${ids.Dune}/download`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['content-disposition']).toBe('attachment; filename="Dune.epub"');
    expect(res.headers['content-length']).toBe(String(expected.length));
    expect(res.headers['cache-control']).toBe('no-cache, no-store, must-revalidate');
    expect(res.rawPayload.equals(expected)).toBe(true);
    const byQuery = await d.inject({ method: 'GET', url: `/api/v1/books/${ids.Dune}/download?token=${admin.token}` });
    expect(byQuery.rawPayload.equals(expected)).toBe(true);
    const unicode = await get(`/api/v1/books/${ids['Ünïcode Tale']}/download`);
    expect(unicode.headers['content-disposition']).toBe(`attachment; filename="_n_code Tale.epub"; filename*=UTF-8''${encodeURIComponent('Ünïcode Tale.epub')}`);
  });

  it('checks canDownload and the book visibility, and 401 without a token', async () => {
    const url = `/api/v1/books/${ids.Dune}/download`;
    const noPermission = await d.createUser('no-download', {}, [libraryId]);
    expect((await get(url, auth(noPermission.token))).statusCode).toBe(403);
    const outsider = await d.createUser('outsider', { canDownload: true });
    const hidden = await get(url, auth(outsider.token));
    expect(hidden.statusCode).toBe(403);
    expect(hidden.json()).toMatchObject({ message: 'You are not authorized to access this book.' });
    expect((await get(`/api/v1/books/${ids.Dune}/download-all?token=${outsider.token}`, {})).statusCode).toBe(403);
    const allowed = await d.createUser('downloader', { canDownload: true }, [libraryId]);
    expect((await get(url, auth(allowed.token))).statusCode).toBe(200);
    expect((await d.inject({ method: 'GET', url })).statusCode).toBe(401);
    expect((await d.inject({ method: 'GET', url: `${url}?token=not-a-jwt` })).statusCode).toBe(401);
    expect((await get('/api/v1/books/9999/download')).statusCode).toBe(404);
  });

  it('streams all files of a book as a ZIP; a single-file book comes as the file itself', async () => {
    const res = await get(`/api/v1/books/${ids.Dune}/download-all`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    expect(res.headers['content-disposition']).toBe('attachment; filename="Dune.zip"');
    const entries = await unzip(res.rawPayload);
    expect([...entries.keys()]).toEqual(['Dune.epub', 'Dune.pdf']);
    expect(entries.get('Dune.epub')?.equals(readFileSync(lib.path('Dune.epub')))).toBe(true);
    expect(entries.get('Dune.pdf')?.equals(readFileSync(lib.path('Dune.pdf')))).toBe(true);

    const single = await get(`/api/v1/books/${ids.Plain}/download-all`);
    expect(single.headers['content-disposition']).toBe('attachment; filename="Plain.pdf"');
    expect(single.rawPayload.equals(readFileSync(lib.path('Plain.pdf')))).toBe(true);
  });

  it('zips the tracks of a folder audiobook, flat for download and under its folder for download-all', async () => {
    const folder = lib.path('Audio', 'The Hobbit');
    mkdirSync(folder, { recursive: true });
    const tracks = { '01 - Chapter One.mp3': Buffer.alloc(70_000, 1), '02 - Chapter Two.mp3': Buffer.alloc(50_000, 2), 'cover.jpg': Buffer.from('jpeg') };
    for (const [name, data] of Object.entries(tracks)) writeFileSync(join(folder, name), data);
    const pathId = (await d.store.db.selectFrom('library_path').select('id').where('library_id', '=', libraryId).executeTakeFirstOrThrow()).id;
    const book = await d.store.db.insertInto('book').values({ library_id: libraryId, library_path_id: pathId }).returning('id').executeTakeFirstOrThrow();
    await d.store.db.insertInto('book_metadata').values({ book_id: book.id, title: 'The Hobbit' }).execute();
    await d.store.db.insertInto('book_file').values({ book_id: book.id, library_path_id: pathId, file_sub_path: 'Audio', file_name: 'The Hobbit', is_folder_based: 1, book_type: 'AUDIOBOOK' }).execute();
    writeFileSync(lib.path('Audio', 'booklet.pdf'), 'booklet');
    await d.store.db.insertInto('book_file').values({ book_id: book.id, library_path_id: pathId, file_sub_path: 'Audio', file_name: 'booklet.pdf', is_book: 0 }).execute();

    const flat = await get(`/api/v1/books/${book.id}/download`);
    expect(flat.headers['content-disposition']).toBe('attachment; filename="The Hobbit.zip"');
    const flatEntries = await unzip(flat.rawPayload);
    expect([...flatEntries.keys()]).toEqual(Object.keys(tracks));
    const all = await unzip((await get(`/api/v1/books/${book.id}/download-all`)).rawPayload);
    expect([...all.keys()]).toEqual([...Object.keys(tracks).map((n) => `The Hobbit/${n}`), 'booklet.pdf']);
    expect(all.get('booklet.pdf')?.toString()).toBe('booklet');
    expect(all.get('The Hobbit/01 - Chapter One.mp3')?.equals(tracks['01 - Chapter One.mp3'])).toBe(true);
  });

  it('downloads an additional file by id, but not the primary one', async () => {
    const files = await d.store.db.selectFrom('book_file').select(['id', 'file_name']).where('book_id', '=', ids.Dune as number).orderBy('id').execute();
    const pdf = files.find((f) => f.file_name === 'Dune.pdf');
    const epub = files.find((f) => f.file_name === 'Dune.epub');
    const res = await get(`/api/v1/books/${ids.Dune}/files/${pdf?.id}/download?token=${admin.token}`, {});
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(readFileSync(lib.path('Dune.pdf')))).toBe(true);
    expect((await get(`/api/v1/books/${ids.Dune}/files/${epub?.id}/download`)).statusCode).toBe(400);
    expect((await get(`/api/v1/books/${ids.Plain}/files/${pdf?.id}/download`)).statusCode).toBe(404);
  });

  it('refuses an additional file to a reader without canDownload, by bearer and by ?token=', async () => {
    const pdf = await d.store.db.selectFrom('book_file').select('id').where('book_id', '=', ids.Dune as number).where('file_name', '=', 'Dune.pdf').executeTakeFirstOrThrow();
    const reader = await d.createUser('reader-no-download', {}, [libraryId]);
    const url = `/api/v1/books/${ids.Dune}/files/${pdf.id}/download`;
    const byBearer = await get(url, auth(reader.token));
    expect(byBearer.statusCode).toBe(403);
    expect(byBearer.json()).toMatchObject({ status: 403, message: 'Access denied.' });
    expect((await get(`${url}?token=${reader.token}`, {})).statusCode).toBe(403);
    // The reader route still serves the book to read in the browser.
    expect((await get(`/api/v1/books/${ids.Dune}/content`, auth(reader.token))).statusCode).toBe(200);
  });

  it('fails the download of a book whose file is gone from disk as Grimmory does', async () => {
    const physical = await d.inject({ method: 'POST', url: '/api/v1/books/physical', headers: auth(admin.token), payload: { libraryId, title: 'Paper' } });
    const res = await get(`/api/v1/books/${physical.json().id}/download`);
    expect(res.json()).toMatchObject({ status: 500, message: `Error while downloading file, bookId: ${physical.json().id}` });
    expect((await get(`/api/v1/books/${physical.json().id}/download-all`)).json()).toMatchObject({ status: 404 });
  });
});

describe('zip streaming', () => {
  it('writes ZIP64 records that readers accept when sizes or offsets call for them', async () => {
    const dir = lib.path('zip64');
    mkdirSync(dir, { recursive: true });
    const a = join(dir, 'a.bin');
    const b = join(dir, 'b.bin');
    writeFileSync(a, Buffer.alloc(1000, 7));
    writeFileSync(b, Buffer.from('second file'));
    const sources = [a, b].map((path) => ({ name: path === a ? 'first/a.bin' : 'b.bin', path, size: statSync(path).size, mtime: statSync(path).mtime }));
    const zip64 = await buffer(zipStream(sources, { zip64Threshold: 0 }));
    expect(zip64.includes(Buffer.from([0x50, 0x4b, 0x06, 0x06]))).toBe(true);
    const entries = await unzip(zip64);
    expect(entries.get('first/a.bin')?.equals(readFileSync(a))).toBe(true);
    expect(entries.get('b.bin')?.toString()).toBe('second file');
    const plain = await buffer(zipStream(sources));
    expect(plain.includes(Buffer.from([0x50, 0x4b, 0x06, 0x06]))).toBe(false);
    expect((await unzip(plain)).size).toBe(2);
  });
});

describe('book content with ranges', () => {
  const url = () => `/api/v1/books/${ids.Plain}/content`;

  it('sends the whole file with its type, and byte ranges as 206', async () => {
    const file = readFileSync(lib.path('Plain.pdf'));
    const whole = await get(url());
    expect(whole.statusCode).toBe(200);
    expect(whole.headers['content-type']).toBe('application/pdf');
    expect(whole.headers['accept-ranges']).toBe('bytes');
    expect(whole.rawPayload.equals(file)).toBe(true);

    const part = await get(url(), { ...auth(admin.token), range: 'bytes=10-99' });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 10-99/${file.length}`);
    expect(part.headers['content-length']).toBe('90');
    expect(part.rawPayload.equals(file.subarray(10, 100))).toBe(true);

    const tail = await get(url(), { ...auth(admin.token), range: 'bytes=-25' });
    expect(tail.rawPayload.equals(file.subarray(file.length - 25))).toBe(true);
    const open = await get(url(), { ...auth(admin.token), range: `bytes=${file.length - 5}-` });
    expect(open.headers['content-range']).toBe(`bytes ${file.length - 5}-${file.length - 1}/${file.length}`);
    const beyond = await get(url(), { ...auth(admin.token), range: `bytes=0-${file.length + 1000}` });
    expect(beyond.statusCode).toBe(206);
    expect(beyond.rawPayload.equals(file)).toBe(true);
  });

  it('answers 416 for ranges outside the file and ignores a stale If-Range', async () => {
    const file = readFileSync(lib.path('Plain.pdf'));
    const outside = await get(url(), { ...auth(admin.token), range: `bytes=${file.length}-` });
    expect(outside.statusCode).toBe(416);
    expect(outside.headers['content-range']).toBe(`bytes */${file.length}`);
    expect((await get(url(), { ...auth(admin.token), range: 'bytes=9-3' })).statusCode).toBe(416);
    const stale = await get(url(), { ...auth(admin.token), range: 'bytes=0-9', 'if-range': '"old"' });
    expect(stale.statusCode).toBe(200);
    expect(stale.rawPayload.length).toBe(file.length);
    const etag = (await get(url())).headers.etag as string;
    const current = await get(url(), { ...auth(admin.token), range: 'bytes=0-9', 'if-range': etag });
    expect(current.statusCode).toBe(206);
    expect((await get(url(), { ...auth(admin.token), 'if-none-match': etag })).statusCode).toBe(304);
  });

  it('picks a file by bookType and refuses unknown types, hidden books and anonymous callers', async () => {
    const pdf = await get(`/api/v1/books/${ids.Dune}/content?bookType=pdf`);
    expect(pdf.rawPayload.equals(readFileSync(lib.path('Dune.pdf')))).toBe(true);
    expect((await get(`/api/v1/books/${ids.Dune}/content`)).headers['content-type']).toBe('application/epub+zip');
    expect((await get(`/api/v1/books/${ids.Dune}/content?bookType=CBX`)).statusCode).toBe(404);
    expect((await get(`/api/v1/books/${ids.Dune}/content?bookType=DOCX`)).statusCode).toBe(400);
    const outsider = await d.createUser('content-outsider', { canDownload: true });
    expect((await get(url(), auth(outsider.token))).statusCode).toBe(403);
    expect((await d.inject({ method: 'GET', url: url() })).statusCode).toBe(401);
    expect((await d.inject({ method: 'GET', url: `${url()}?token=${admin.token}` })).statusCode).toBe(401);
  });
});

describe('covers', () => {
  it('serves cover and thumbnail JPEGs with validators, 304 on a match and long caching for versioned URLs', async () => {
    const cover = await get(`/api/v1/media/book/${ids.Dune}/cover?token=${admin.token}`, {});
    expect(cover.statusCode).toBe(200);
    expect(cover.headers['content-type']).toBe('image/jpeg');
    expect((await sharp(cover.rawPayload).metadata()).format).toBe('jpeg');
    const etag = cover.headers.etag as string;
    expect(etag).toMatch(/^"BL-[0-9A-Z]{13}-cover-/);
    expect(cover.headers['last-modified']).toBeTypeOf('string');
    expect(cover.headers['cache-control']).toBe('private, max-age=3600');

    const thumb = await get(`/api/v1/media/book/${ids.Dune}/thumbnail`);
    const thumbMeta = await sharp(thumb.rawPayload).metadata();
    expect(thumbMeta.width).toBeLessThanOrEqual(250);
    expect(thumb.headers.etag).not.toBe(etag);

    const again = await get(`/api/v1/media/book/${ids.Dune}/cover`, { ...auth(admin.token), 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
    const changed = await get(`/api/v1/media/book/${ids.Dune}/cover`, { ...auth(admin.token), 'if-none-match': '"BL-OLD-cover"' });
    expect(changed.statusCode).toBe(200);

    const versioned = await get(`/api/v1/media/book/${ids.Dune}/thumbnail?2025-01-01T00:00:00Z&token=${admin.token}`, {});
    expect(versioned.headers['cache-control']).toBe('private, max-age=31536000, immutable');
  });

  it('sends a placeholder image for a book without a cover', async () => {
    const res = await get(`/api/v1/media/book/${ids.Plain}/audiobook-cover`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/jpeg');
    expect(res.headers['cache-control']).toBe('no-cache, private');
    expect((await sharp(res.rawPayload).metadata()).width).toBe(250);
    expect((await get(`/api/v1/media/book/${ids.Plain}/audiobook-thumbnail`)).statusCode).toBe(200);
  });

  it('checks the book on every media route', async () => {
    const outsider = await d.createUser('cover-outsider', {});
    for (const kind of ['cover', 'thumbnail', 'audiobook-cover', 'audiobook-thumbnail']) {
      expect((await get(`/api/v1/media/book/${ids.Dune}/${kind}?token=${outsider.token}`, {})).statusCode, kind).toBe(403);
      expect((await d.inject({ method: 'GET', url: `/api/v1/media/book/${ids.Dune}/${kind}` })).statusCode, kind).toBe(401);
      expect((await get(`/api/v1/media/book/424242/${kind}`)).statusCode, kind).toBe(404);
    }
    expect((await get('/api/v1/media/book/abc/cover')).statusCode).toBe(400);
  });
});
