import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coverFile } from '../../src/core/covers/cover-store.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';
import { buildPdf } from '../helpers/pdf-fixtures.ts';

type Json = Record<string, unknown>;

let d: TestDaemon;
let strict: TestDaemon;
let lib: TempLibrary;
let server: Server;
let origin: string;
let admin: { id: number; token: string };
let editor: { id: number; token: string };
let outsider: { id: number; token: string };
let regenerator: { id: number; token: string };
const ids: Record<string, number> = {};

const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const post = (url: string, payload?: unknown, token = admin.token) => d.inject({ method: 'POST', url, headers: auth(token), ...(payload !== undefined ? { payload: payload as Json } : {}) });
const metadata = async (id: number): Promise<Json> => (await d.inject({ method: 'GET', url: `/api/v1/books/${id}`, headers: auth(admin.token) })).json().metadata;

async function idle(daemon = d): Promise<void> {
  while (daemon.ctx.background.size > 0) await Promise.allSettled([...daemon.ctx.background]);
}

interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer | string;
}

/** A multipart/form-data body as browsers send it. */
function multipart(parts: Part[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = '----bindery-test-boundary-7MA4YWxkTrZu0gW';
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.contentType ? `Content-Type: ${part.contentType}\r\n` : ''}\r\n`));
    chunks.push(typeof part.data === 'string' ? Buffer.from(part.data) : part.data);
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

function upload(url: string, parts: Part[], token = admin.token) {
  const body = multipart(parts);
  return d.inject({ method: 'POST', url, headers: { ...auth(token), ...body.headers }, payload: body.payload });
}

const png = (color: string, width = 300, height = 450) => sharp({ create: { width, height, channels: 3, background: color } }).png().toBuffer();

/** The colour in the middle of a stored cover image. */
async function middleColour(path: string): Promise<[number, number, number]> {
  const { data, info } = await sharp(readFileSync(path)).raw().toBuffer({ resolveWithObject: true });
  const at = (Math.floor(info.height / 2) * info.width + Math.floor(info.width / 2)) * info.channels;
  return [data[at] as number, data[at + 1] as number, data[at + 2] as number];
}

beforeAll(async () => {
  const served = { jpeg: await sharp({ create: { width: 200, height: 300, channels: 3, background: '#1e90ff' } }).jpeg().toBuffer() };
  server = createServer((req, res) => {
    if (req.url === '/cover.jpg') res.writeHead(200, { 'content-type': 'image/jpeg' }).end(served.jpeg);
    else if (req.url === '/page.html') res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not an image</html>');
    else if (req.url === '/liar.jpg') res.writeHead(200, { 'content-type': 'image/jpeg' }).end('this is text pretending');
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  d = await startTestDaemon({ outgoingAllowPrivateHosts: '127.0.0.1' });
  strict = await startTestDaemon();
  lib = makeTempLibrary();
  mkdirSync(lib.path('main'), { recursive: true });
  mkdirSync(lib.path('hidden'), { recursive: true });
  await writeSimpleEpub(lib.path('main', 'Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'], cover: '#22aa66' });
  await writeSimpleEpub(lib.path('main', 'Plain.epub'), { title: 'Plain Book', authors: ['Nobody'] });
  await writeSimpleEpub(lib.path('main', 'Emma.epub'), { title: 'Emma', authors: ['Jane Austen'], cover: '#aa2222' });
  writeFileSync(lib.path('main', 'Red.pdf'), await buildPdf({ title: 'Red Pages', fill: [1, 0, 0], pages: 1 }));
  await writeSimpleEpub(lib.path('hidden', 'Secret.epub'), { title: 'Secret', authors: ['Spy'], cover: '#333333' });
  admin = await d.createUser('admin', { admin: true });
  const library = async (name: string, path: string): Promise<number> => (await post('/api/v1/libraries', { name, paths: [{ path }] })).json().id as number;
  const main = await library('Main', lib.path('main'));
  await library('Hidden', lib.path('hidden'));
  await idle();
  for (const row of await d.store.db.selectFrom('book_metadata').select(['book_id', 'title']).execute()) ids[row.title as string] = row.book_id;
  editor = await d.createUser('editor', { canEditMetadata: true, canBulkEditMetadata: true }, [main]);
  outsider = await d.createUser('outsider', { canEditMetadata: true }, []);
  regenerator = await d.createUser('regenerator', { canBulkRegenerateCover: true }, [main]);
}, 60_000);

afterAll(async () => {
  await d?.close();
  await strict?.close();
  server?.close();
  lib?.cleanup();
});

describe('cover upload', () => {
  it('takes a real image, stores the cover and thumbnail, and changes coverUpdatedOn and the ETag', async () => {
    const id = ids.Dune as number;
    const before = await metadata(id);
    const oldEtag = (await d.inject({ method: 'GET', url: `/api/v1/media/book/${id}/cover`, headers: auth(admin.token) })).headers.etag;
    const res = await upload(`/api/v1/books/${id}/metadata/cover/upload`, [{ name: 'file', filename: 'new.png', contentType: 'image/png', data: await png('#0000ff') }], editor.token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ bookId: id, title: 'Dune' });
    expect(res.json().coverUpdatedOn).not.toBe(before.coverUpdatedOn);
    const cover = await d.inject({ method: 'GET', url: `/api/v1/media/book/${id}/cover`, headers: auth(admin.token) });
    expect(cover.statusCode).toBe(200);
    expect(cover.headers.etag).not.toBe(oldEtag);
    expect((await sharp(cover.rawPayload).metadata()).format).toBe('jpeg');
    const [r, g, b] = await middleColour(coverFile(d.ctx.paths.covers, id, 'book', 'thumbnail'));
    expect(b).toBeGreaterThan(200);
    expect(r + g).toBeLessThan(60);
  });

  it('refuses what is not a usable image with a clear 400, and keeps the old cover', async () => {
    const id = ids.Dune as number;
    const coverBefore = readFileSync(coverFile(d.ctx.paths.covers, id, 'book', 'cover'));
    const text = await upload(`/api/v1/books/${id}/metadata/cover/upload`, [{ name: 'file', filename: 'cover.jpg', contentType: 'image/jpeg', data: 'GIF89a? no, just text' }]);
    expect(text.statusCode).toBe(400);
    expect(text.json()).toMatchObject({ status: 400, message: 'The file is not an image that can be read' });
    const gif = await sharp({ create: { width: 10, height: 10, channels: 3, background: '#fff' } }).gif().toBuffer();
    const wrongKind = await upload(`/api/v1/books/${id}/metadata/cover/upload`, [{ name: 'file', filename: 'x.gif', contentType: 'image/gif', data: gif }]);
    expect(wrongKind.statusCode).toBe(400);
    expect(wrongKind.json().message).toBe('Only JPEG, PNG and WebP images are allowed (this is gif)');
    const empty = await upload(`/api/v1/books/${id}/metadata/cover/upload`, [{ name: 'file', filename: 'x.png', contentType: 'image/png', data: Buffer.alloc(0) }]);
    expect(empty.statusCode).toBe(400);
    const noFile = await upload(`/api/v1/books/${id}/metadata/cover/upload`, [{ name: 'other', data: 'x' }]);
    expect(noFile.statusCode).toBe(400);
    expect(noFile.json().message).toBe('Uploaded file is missing.');
    const notMultipart = await post(`/api/v1/books/${id}/metadata/cover/upload`, { file: 'x' });
    expect(notMultipart.statusCode).toBe(400);
    expect(readFileSync(coverFile(d.ctx.paths.covers, id, 'book', 'cover')).equals(coverBefore)).toBe(true);
  });

  it('refuses an image over the upload limit', async () => {
    await d.store.db.insertInto('app_settings').values({ name: 'max_file_upload_size_in_mb', val: '1' }).onConflict((oc) => oc.column('name').doUpdateSet({ val: '1' })).execute();
    const noise = Buffer.alloc(700 * 700 * 3);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
    const big = await sharp(noise, { raw: { width: 700, height: 700, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
    expect(big.length).toBeGreaterThan(1024 * 1024);
    const res = await upload(`/api/v1/books/${ids.Dune}/metadata/cover/upload`, [{ name: 'file', filename: 'big.png', contentType: 'image/png', data: big }]);
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('File size exceeds the limit: 1 MB');
    await d.store.db.deleteFrom('app_settings').where('name', '=', 'max_file_upload_size_in_mb').execute();
  });

  it('respects the cover lock, the book visibility and the permission', async () => {
    const id = ids.Emma as number;
    await d.inject({ method: 'PUT', url: '/api/v1/books/metadata/toggle-field-locks', headers: auth(admin.token), payload: { bookIds: [id], fieldActions: { coverLocked: 'LOCK' } } });
    const locked = await upload(`/api/v1/books/${id}/metadata/cover/upload`, [{ name: 'file', filename: 'a.png', data: await png('#000') }]);
    expect(locked.statusCode).toBe(403);
    expect(locked.json().message).toBe('Attempt to update locked metadata');
    expect((await post(`/api/v1/books/${id}/generate-custom-cover`)).statusCode).toBe(403);
    expect((await post(`/api/v1/books/${id}/regenerate-cover`)).statusCode).toBe(403);
    await d.inject({ method: 'PUT', url: '/api/v1/books/metadata/toggle-field-locks', headers: auth(admin.token), payload: { bookIds: [id], fieldActions: { coverLocked: 'UNLOCK' } } });
    const hidden = await upload(`/api/v1/books/${ids.Secret}/metadata/cover/upload`, [{ name: 'file', filename: 'a.png', data: await png('#000') }], outsider.token);
    expect(hidden.statusCode).toBe(403);
    const noFlag = await upload(`/api/v1/books/${ids.Dune}/metadata/cover/upload`, [{ name: 'file', filename: 'a.png', data: await png('#000') }], regenerator.token);
    expect(noFlag.statusCode).toBe(403);
  });

  it('sets the audiobook cover separately, square', async () => {
    const id = ids['Plain Book'] as number;
    const res = await upload(`/api/v1/books/${id}/metadata/audiobook-cover/upload`, [{ name: 'file', filename: 'a.png', data: await png('#ff8800', 1200, 900) }]);
    expect(res.statusCode).toBe(200);
    expect(res.json().audiobookCoverUpdatedOn).toEqual(expect.any(String));
    const info = await sharp(readFileSync(coverFile(d.ctx.paths.covers, id, 'audiobook', 'cover'))).metadata();
    expect(info.width).toBe(info.height);
  });
});

describe('cover from a URL', () => {
  it('downloads through the outgoing client and stores it', async () => {
    const res = await post(`/api/v1/books/${ids['Plain Book']}/metadata/cover/from-url`, { url: `${origin}/cover.jpg` }, editor.token);
    expect(res.statusCode).toBe(200);
    expect(res.json().coverUpdatedOn).toEqual(expect.any(String));
    const [r, , b] = await middleColour(coverFile(d.ctx.paths.covers, ids['Plain Book'] as number, 'book', 'cover'));
    expect(b).toBeGreaterThan(200);
    expect(r).toBeLessThan(60);
    const audio = await post(`/api/v1/books/${ids['Plain Book']}/metadata/audiobook-cover/from-url`, { url: `${origin}/cover.jpg` });
    expect(audio.statusCode).toBe(200);
  });

  it("takes the metadata editor's thumbnailUrl as the cover, unless the cover is locked", async () => {
    const id = ids.Emma as number;
    const before = await metadata(id);
    const res = await d.inject({ method: 'PUT', url: `/api/v1/books/${id}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, headers: auth(admin.token), payload: { metadata: { thumbnailUrl: `${origin}/cover.jpg` } } });
    expect(res.statusCode).toBe(200);
    expect(res.json().coverUpdatedOn).not.toBe(before.coverUpdatedOn);
    const [, , b] = await middleColour(coverFile(d.ctx.paths.covers, id, 'book', 'thumbnail'));
    expect(b).toBeGreaterThan(200);
    // A URL that fails costs the cover only: the rest of the edit is saved.
    const failing = await d.inject({ method: 'PUT', url: `/api/v1/books/${id}/metadata?replaceMode=REPLACE_WHEN_PROVIDED`, headers: auth(admin.token), payload: { metadata: { thumbnailUrl: `${origin}/page.html`, publisher: 'Kept' } } });
    expect(failing.statusCode).toBe(200);
    expect(failing.json()).toMatchObject({ publisher: 'Kept', coverUpdatedOn: res.json().coverUpdatedOn });
  });

  it('answers clear errors for bad URLs, non-images and upstream failures', async () => {
    const url = `/api/v1/books/${ids['Plain Book']}/metadata/cover/from-url`;
    const html = await post(url, { url: `${origin}/page.html` });
    expect(html.statusCode).toBe(400);
    expect(html.json().message).toBe('The cover URL did not return an image');
    const liar = await post(url, { url: `${origin}/liar.jpg` });
    expect(liar.statusCode).toBe(400);
    expect(liar.json().message).toBe('The file is not an image that can be read');
    const missing = await post(url, { url: `${origin}/nothing-here.jpg` });
    expect(missing.statusCode).toBe(502);
    const invalid = await post(url, { url: 'file:///etc/passwd' });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().message).toMatch(/^The cover URL is not valid/);
    expect((await post(url, { url: '   ' })).statusCode).toBe(400);
    expect((await post(url, {})).statusCode).toBe(400);
  });

  it('refuses a private address unless the configuration allows it', async () => {
    const strictAdmin = await strict.createUser('admin', { admin: true });
    const { mkdirSync: mk } = await import('node:fs');
    mk(lib.path('strict'), { recursive: true });
    await writeSimpleEpub(lib.path('strict', 'One.epub'), { title: 'One' });
    await strict.inject({ method: 'POST', url: '/api/v1/libraries', headers: auth(strictAdmin.token), payload: { name: 'S', paths: [{ path: lib.path('strict') }] } });
    await idle(strict);
    const book = await strict.store.db.selectFrom('book').select('id').executeTakeFirstOrThrow();
    const res = await strict.inject({ method: 'POST', url: `/api/v1/books/${book.id}/metadata/cover/from-url`, headers: auth(strictAdmin.token), payload: { url: `${origin}/cover.jpg` } });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^The cover URL was refused: .*127\.0\.0\.1/);
  });
});

describe('regenerated and generated covers', () => {
  it('regenerates the cover from the book file', async () => {
    const id = ids.Dune as number;
    const res = await post(`/api/v1/books/${id}/regenerate-cover`, undefined, editor.token);
    expect(res.statusCode).toBe(200);
    const [r, g, b] = await middleColour(coverFile(d.ctx.paths.covers, id, 'book', 'thumbnail'));
    expect(g).toBeGreaterThan(r + 60);
    expect(g).toBeGreaterThan(b + 40);
    const pdf = await post(`/api/v1/books/${ids['Red Pages']}/regenerate-cover`);
    expect(pdf.statusCode).toBe(200);
    const [pr, pg] = await middleColour(coverFile(d.ctx.paths.covers, ids['Red Pages'] as number, 'book', 'thumbnail'));
    expect(pr).toBeGreaterThan(200);
    expect(pg).toBeLessThan(60);
  });

  it('says so when the file has no cover, or there is no audiobook to take one from', async () => {
    const none = await post(`/api/v1/books/${ids['Plain Book']}/regenerate-cover`);
    expect(none.statusCode).toBe(400);
    expect(none.json().message).toBe('Failed to regenerate cover: no embedded cover image found in the file');
    const noAudio = await post(`/api/v1/books/${ids['Plain Book']}/regenerate-audiobook-cover`);
    expect(noAudio.statusCode).toBe(400);
    expect(noAudio.json().message).toBe('Failed to regenerate cover: no audiobook file found');
  });

  it('generates a custom cover from title and author, the same one every time', async () => {
    const id = ids['Plain Book'] as number;
    const res = await post(`/api/v1/books/${id}/generate-custom-cover`);
    expect(res.statusCode).toBe(200);
    const first = readFileSync(coverFile(d.ctx.paths.covers, id, 'book', 'cover'));
    const info = await sharp(first).stats();
    // Not a flat colour: there is type on it.
    expect(info.channels.some((c) => c.stdev > 10)).toBe(true);
    const meta = await sharp(first).metadata();
    expect([meta.width, meta.height]).toEqual([1000, 1500]);
    await post(`/api/v1/books/${id}/generate-custom-cover`);
    expect(readFileSync(coverFile(d.ctx.paths.covers, id, 'book', 'cover')).equals(first)).toBe(true);
    const square = await post(`/api/v1/books/${id}/generate-custom-audiobook-cover`);
    expect(square.statusCode).toBe(200);
    const sq = await sharp(readFileSync(coverFile(d.ctx.paths.covers, id, 'audiobook', 'cover'))).metadata();
    expect(sq.width).toBe(sq.height);
  });
});

describe('covers for many books', () => {
  it('bulk-generates custom covers in the background, skipping locked and hidden books', async () => {
    await d.inject({ method: 'PUT', url: '/api/v1/books/metadata/toggle-field-locks', headers: auth(admin.token), payload: { bookIds: [ids.Emma], fieldActions: { coverLocked: 'LOCK' } } });
    const before = await metadata(ids.Emma as number);
    const duneBefore = await metadata(ids.Dune as number);
    const res = await post('/api/v1/books/bulk-generate-custom-covers', { bookIds: [ids.Dune, ids.Emma, ids.Secret] }, regenerator.token);
    expect(res.statusCode).toBe(200);
    await idle();
    expect((await metadata(ids.Dune as number)).coverUpdatedOn).not.toBe(duneBefore.coverUpdatedOn);
    expect((await metadata(ids.Emma as number)).coverUpdatedOn).toBe(before.coverUpdatedOn);
    await d.inject({ method: 'PUT', url: '/api/v1/books/metadata/toggle-field-locks', headers: auth(admin.token), payload: { bookIds: [ids.Emma], fieldActions: { coverLocked: 'UNLOCK' } } });
    expect((await post('/api/v1/books/bulk-generate-custom-covers', { bookIds: [] }, regenerator.token)).statusCode).toBe(400);
    expect((await post('/api/v1/books/bulk-generate-custom-covers', { bookIds: [ids.Dune] }, editor.token)).statusCode).toBe(403);
  });

  it('regenerates covers from files: selected books, or all (missing only on request)', async () => {
    const res = await post('/api/v1/books/bulk-regenerate-covers', { bookIds: [ids.Dune] }, regenerator.token);
    expect(res.statusCode).toBe(200);
    await idle();
    const [r, g] = await middleColour(coverFile(d.ctx.paths.covers, ids.Dune as number, 'book', 'thumbnail'));
    expect(g).toBeGreaterThan(r + 60);
    await d.store.db.updateTable('book').set({ book_cover_hash: null }).where('id', '=', ids.Emma as number).execute();
    const duneBefore = await metadata(ids.Dune as number);
    const missing = await post('/api/v1/books/regenerate-covers?missingOnly=true', undefined, regenerator.token);
    expect(missing.statusCode).toBe(200);
    await idle();
    expect((await d.store.db.selectFrom('book').select('book_cover_hash').where('id', '=', ids.Emma as number).executeTakeFirstOrThrow()).book_cover_hash).toMatch(/^BL-/);
    expect((await metadata(ids.Dune as number)).coverUpdatedOn).toBe(duneBefore.coverUpdatedOn);
    expect((await post('/api/v1/books/regenerate-covers')).statusCode).toBe(200);
    await idle();
    expect((await metadata(ids.Dune as number)).coverUpdatedOn).not.toBe(duneBefore.coverUpdatedOn);
  });

  it('bulk-uploads one cover for several books (bookIds as a form field)', async () => {
    const body = [{ name: 'file', filename: 'c.png', contentType: 'image/png', data: await png('#ffff00') }, { name: 'bookIds', data: `${ids.Dune},${ids['Red Pages']}` }];
    const res = await upload('/api/v1/books/bulk-upload-cover', body, editor.token);
    expect(res.statusCode).toBe(200);
    await idle();
    for (const id of [ids.Dune, ids['Red Pages']] as number[]) {
      const [r, g, b] = await middleColour(coverFile(d.ctx.paths.covers, id, 'book', 'thumbnail'));
      expect(r).toBeGreaterThan(200);
      expect(g).toBeGreaterThan(200);
      expect(b).toBeLessThan(60);
    }
    const noIds = await upload('/api/v1/books/bulk-upload-cover', [body[0] as Part], editor.token);
    expect(noIds.statusCode).toBe(400);
    const notImage = await upload('/api/v1/books/bulk-upload-cover', [{ name: 'file', filename: 'x.png', data: 'nope' }, { name: 'bookIds', data: String(ids.Dune) }], editor.token);
    expect(notImage.statusCode).toBe(400);
  });
});
