// The author editor, photos (upload, URL, media with validators), deletion, and who may do what to which author.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { InjectOptions } from 'fastify';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorImagesRoot, authorPhotoFile } from '../../src/core/authors/author-photos.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

type Json = Record<string, unknown>;

let d: TestDaemon;
let site: FakeSite;
let tmp: TempDir;
let admin: string;
let editor: string;
let reader: string;
let deleter: string;
const authors: Record<string, number> = {};
const books: Record<string, number> = {};
let openLibrary: number;

const call = (token: string | undefined, options: InjectOptions) => d.inject({ ...options, headers: { ...(options.headers ?? {}), ...(token ? { authorization: `Bearer ${token}` } : {}) } });
const put = (token: string, id: number, payload: Json) => call(token, { method: 'PUT', url: `/api/v1/authors/${id}`, payload });
const png = (colour: string, width = 600, height = 400): Promise<Buffer> => sharp({ create: { width, height, channels: 3, background: colour } }).png().toBuffer();
const root = (): string => authorImagesRoot(d.config.dataDir);
const searchText = async (bookId: number): Promise<string | null> =>
  (await d.store.db.selectFrom('book_metadata').select('search_text').where('book_id', '=', bookId).executeTakeFirstOrThrow()).search_text;
const listed = async (token: string): Promise<Json[]> => (await call(token, { method: 'GET', url: '/api/v1/authors' })).json() as Json[];

interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer | string;
}

function upload(token: string, authorId: number, parts: Part[]) {
  const boundary = '----bindery-author-boundary-2b6f1c';
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.contentType ? `Content-Type: ${part.contentType}\r\n` : ''}\r\n`));
    chunks.push(typeof part.data === 'string' ? Buffer.from(part.data) : part.data);
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return call(token, { method: 'POST', url: `/api/v1/authors/${authorId}/photo/upload`, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: Buffer.concat(chunks) });
}

beforeAll(async () => {
  site = await startFakeSite();
  tmp = makeTempDir('bindery-authors-');
  const photo = await sharp({ create: { width: 300, height: 300, channels: 3, background: '#1e90ff' } }).jpeg().toBuffer();
  site.on('GET', '/photo.jpg', { body: photo, contentType: 'image/jpeg' });
  site.on('GET', '/page.html', { html: '<html>not an image</html>' });
  site.on('GET', '/liar.jpg', { body: 'text pretending to be a JPEG', contentType: 'image/jpeg' });
  d = await startTestDaemon({ outgoingAllowPrivateHosts: '127.0.0.1' });
  admin = await d.setupAdmin();
  openLibrary = await seedLibrary(d.store.db, tmp.dir, 'Open');
  const closed = await seedLibrary(d.store.db, tmp.dir, 'Closed');
  books.shared = (await seedBook(d.store.db, openLibrary, { title: 'Shared Work', authors: ['Ann Author', 'Bob Writer'] })).bookId;
  books.solo = (await seedBook(d.store.db, openLibrary, { title: 'Solo Work', authors: ['Ann Author'] })).bookId;
  books.bobs = (await seedBook(d.store.db, openLibrary, { title: 'Bob Alone', authors: ['Bob Writer'] })).bookId;
  books.hidden = (await seedBook(d.store.db, closed, { title: 'Closed Work', authors: ['Ann Author', 'Cara Hidden'] })).bookId;
  for (const row of await d.store.db.selectFrom('author').select(['id', 'name']).execute()) authors[row.name.split(' ')[0] as string] = row.id;
  await d.store.db.updateTable('book_metadata').set({ search_text: 'shared work ann author bob writer' }).where('book_id', '=', books.shared as number).execute();
  editor = (await d.createUser('editor', { canEditMetadata: true }, [openLibrary])).token;
  reader = (await d.createUser('reader', {}, [openLibrary])).token;
  deleter = (await d.createUser('deleter', { canDeleteBook: true }, [openLibrary])).token;
}, 60_000);

afterAll(async () => {
  await d?.close();
  await site?.close();
  tmp?.remove();
});

describe('the author editor', () => {
  it('changes the name, description, ASIN and locks, and answers AuthorDetails', async () => {
    const id = authors.Ann as number;
    const res = await put(editor, id, { name: 'Ann B. Author', description: 'Writes things.', asin: 'B000TEST01', descriptionLocked: true, photoLocked: true });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id, name: 'Ann B. Author', description: 'Writes things.', asin: 'B000TEST01', nameLocked: false, descriptionLocked: true, asinLocked: false, photoLocked: true });
    expect((await call(reader, { method: 'GET', url: `/api/v1/authors/${id}` })).json()).toMatchObject({ name: 'Ann B. Author', description: 'Writes things.' });
    // The books that credit her are found by the new name.
    expect(await searchText(books.shared as number)).toContain('ann b. author');
    expect(await searchText(books.shared as number)).not.toMatch(/ann author/);
  });

  it('leaves what is not sent, clears a blank description or ASIN, and edits locked fields (locks only stop matching)', async () => {
    const id = authors.Ann as number;
    const res = await put(editor, id, { description: '  ', asin: '', descriptionLocked: null });
    expect(res.json()).toEqual({ id, name: 'Ann B. Author', nameLocked: false, descriptionLocked: true, asinLocked: false, photoLocked: true });
    const back = await put(editor, id, { name: 'Ann Author', descriptionLocked: false, photoLocked: false, unknownField: 1 });
    expect(back.json()).toEqual({ id, name: 'Ann Author', nameLocked: false, descriptionLocked: false, asinLocked: false, photoLocked: false });
  });

  it("refuses a blank name, another author's name and bad types, and changes nothing", async () => {
    const id = authors.Bob as number;
    const blank = await put(editor, id, { name: '   ' });
    expect(blank.statusCode).toBe(400);
    expect(blank.json()).toMatchObject({ status: 400, message: 'name: must not be blank' });
    const taken = await put(editor, id, { name: 'Ann Author', description: 'should not stick' });
    expect(taken.statusCode).toBe(400);
    expect(taken.json().message).toBe('Another author is already named "Ann Author"');
    expect((await put(editor, id, { nameLocked: 'yes' })).statusCode).toBe(400);
    expect((await put(editor, id, { asin: 'X'.repeat(21) })).statusCode).toBe(400);
    expect((await call(admin, { method: 'GET', url: `/api/v1/authors/${id}` })).json()).toEqual({ id, name: 'Bob Writer', nameLocked: false, descriptionLocked: false, asinLocked: false, photoLocked: false });
  });

  it('is for metadata editors, on authors they can see', async () => {
    expect((await put(reader, authors.Bob as number, { description: 'x' })).statusCode).toBe(403);
    const hidden = await put(editor, authors.Cara as number, { description: 'x' });
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json()).toMatchObject({ status: 404, message: `Author not found with ID: ${authors.Cara}` });
    expect((await put(editor, 987654, { description: 'x' })).statusCode).toBe(404);
    expect((await put(admin, authors.Cara as number, { description: 'Seen by admins' })).json()).toMatchObject({ description: 'Seen by admins' });
  });
});

describe('author photos', () => {
  it('refuses an upload that is not a usable image, and stores nothing', async () => {
    const id = authors.Bob as number;
    const text = await upload(editor, id, [{ name: 'file', filename: 'me.jpg', contentType: 'image/jpeg', data: 'no image here' }]);
    expect(text.statusCode).toBe(400);
    expect(text.json()).toMatchObject({ status: 400, message: 'The file is not an image that can be read' });
    const gif = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } }).gif().toBuffer();
    expect((await upload(editor, id, [{ name: 'file', filename: 'x.gif', data: gif }])).json().message).toBe('Only JPEG, PNG and WebP images are allowed (this is gif)');
    expect((await upload(editor, id, [{ name: 'file', filename: 'x.png', data: Buffer.alloc(0) }])).statusCode).toBe(400);
    const missing = await upload(editor, id, [{ name: 'other', data: 'x' }]);
    expect(missing.json().message).toBe('Uploaded file is missing.');
    expect((await call(editor, { method: 'POST', url: `/api/v1/authors/${id}/photo/upload`, payload: { file: 'x' } })).statusCode).toBe(400);
    expect(existsSync(authorPhotoFile(root(), id, 'photo'))).toBe(false);
    expect((await listed(admin)).find((a) => a.id === id)).toMatchObject({ hasPhoto: false });
  });

  it('stores an uploaded image as a bounded photo and a 250×350 thumbnail, and lists the author with a photo', async () => {
    const id = authors.Bob as number;
    const res = await upload(editor, id, [{ name: 'file', filename: 'bob.png', contentType: 'image/png', data: await png('#00aa00', 2400, 1200) }]);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    const photo = await sharp(readFileSync(authorPhotoFile(root(), id, 'photo'))).metadata();
    expect([photo.format, photo.width, photo.height]).toEqual(['jpeg', 1000, 500]);
    const thumb = await sharp(readFileSync(authorPhotoFile(root(), id, 'thumbnail'))).metadata();
    expect([thumb.format, thumb.width, thumb.height]).toEqual(['jpeg', 250, 350]);
    expect((await listed(reader)).find((a) => a.id === id)).toEqual({ id, name: 'Bob Writer', bookCount: 2, hasPhoto: true });
  });

  it('refuses an upload over the size limit', async () => {
    await d.store.db.insertInto('app_settings').values({ name: 'max_file_upload_size_in_mb', val: '1' }).onConflict((oc) => oc.column('name').doUpdateSet({ val: '1' })).execute();
    const noise = Buffer.alloc(700 * 700 * 3);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
    const big = await sharp(noise, { raw: { width: 700, height: 700, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
    const res = await upload(editor, authors.Ann as number, [{ name: 'file', filename: 'big.png', data: big }]);
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('File size exceeds the limit: 1 MB');
    await d.store.db.deleteFrom('app_settings').where('name', '=', 'max_file_upload_size_in_mb').execute();
  });

  it('downloads a photo from a URL through the outgoing client', async () => {
    const id = authors.Ann as number;
    const res = await call(editor, { method: 'POST', url: `/api/v1/authors/${id}/photo/url?url=${encodeURIComponent(`${site.url}/photo.jpg`)}` });
    expect(res.statusCode).toBe(200);
    const { data, info } = await sharp(readFileSync(authorPhotoFile(root(), id, 'thumbnail'))).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([250, 350]);
    expect(data[2] as number).toBeGreaterThan(200);
  });

  it('refuses a private address, a page that is not an image and a liar, keeping the photo it has', async () => {
    const id = authors.Ann as number;
    const before = readFileSync(authorPhotoFile(root(), id, 'photo'));
    const asked = site.requests.length;
    const privateUrl = await call(editor, { method: 'POST', url: `/api/v1/authors/${id}/photo/url?url=${encodeURIComponent('http://192.168.1.20/photo.jpg')}` });
    expect(privateUrl.statusCode).toBe(400);
    expect(privateUrl.json().message).toMatch(/^The photo URL was refused/);
    const metadataAddress = await call(editor, { method: 'POST', url: `/api/v1/authors/${id}/photo/url?url=${encodeURIComponent('http://169.254.169.254/latest/meta-data')}` });
    expect(metadataAddress.statusCode).toBe(400);
    const page = await call(editor, { method: 'POST', url: `/api/v1/authors/${id}/photo/url?url=${encodeURIComponent(`${site.url}/page.html`)}` });
    expect(page.json()).toMatchObject({ status: 400, message: 'The photo URL did not return an image' });
    const liar = await call(editor, { method: 'POST', url: `/api/v1/authors/${id}/photo/url?url=${encodeURIComponent(`${site.url}/liar.jpg`)}` });
    expect(liar.json()).toMatchObject({ status: 400, message: 'The file is not an image that can be read' });
    expect((await call(editor, { method: 'POST', url: `/api/v1/authors/${id}/photo/url?url=not%20a%20url` })).statusCode).toBe(400);
    expect((await call(editor, { method: 'POST', url: `/api/v1/authors/${id}/photo/url` })).statusCode).toBe(400);
    expect(site.requests.length - asked).toBe(2);
    expect(readFileSync(authorPhotoFile(root(), id, 'photo')).equals(before)).toBe(true);
  });

  it('are for metadata editors on authors they can see', async () => {
    const cara = authors.Cara as number;
    expect((await upload(editor, cara, [{ name: 'file', filename: 'c.png', data: await png('#000') }])).statusCode).toBe(404);
    expect((await call(editor, { method: 'POST', url: `/api/v1/authors/${cara}/photo/url?url=${encodeURIComponent(`${site.url}/photo.jpg`)}` })).statusCode).toBe(404);
    expect((await upload(reader, authors.Bob as number, [{ name: 'file', filename: 'c.png', data: await png('#000') }])).statusCode).toBe(403);
    expect(existsSync(authorPhotoFile(root(), cara, 'photo'))).toBe(false);
  });
});

describe('author photo media', () => {
  it('serves the photo and thumbnail as JPEG with validators, and answers 304 to a current copy', async () => {
    const id = authors.Bob as number;
    for (const variant of ['photo', 'thumbnail']) {
      const res = await call(reader, { method: 'GET', url: `/api/v1/media/author/${id}/${variant}` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('image/jpeg');
      expect(res.rawPayload.equals(readFileSync(authorPhotoFile(root(), id, variant as 'photo')))).toBe(true);
      const etag = res.headers.etag as string;
      expect(etag).toMatch(/^"author-\d+-(photo|thumbnail)-/);
      expect(res.headers['last-modified']).toEqual(expect.any(String));
      const again = await call(reader, { method: 'GET', url: `/api/v1/media/author/${id}/${variant}`, headers: { 'if-none-match': etag } });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
      const since = await call(reader, { method: 'GET', url: `/api/v1/media/author/${id}/${variant}`, headers: { 'if-modified-since': res.headers['last-modified'] as string } });
      expect(since.statusCode).toBe(304);
    }
  });

  it('changes the ETag when the photo is replaced', async () => {
    const id = authors.Bob as number;
    const old = (await call(reader, { method: 'GET', url: `/api/v1/media/author/${id}/thumbnail` })).headers.etag as string;
    await upload(editor, id, [{ name: 'file', filename: 'b.png', data: await png('#aa0000', 500, 700) }]);
    const res = await call(reader, { method: 'GET', url: `/api/v1/media/author/${id}/thumbnail`, headers: { 'if-none-match': old } });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).not.toBe(old);
  });

  it('takes ?token=, answers an empty 404 without a photo or for an author the caller cannot see, 401 anonymously', async () => {
    const id = authors.Bob as number;
    expect((await d.inject({ method: 'GET', url: `/api/v1/media/author/${id}/photo?token=${reader}` })).statusCode).toBe(200);
    expect((await d.inject({ method: 'GET', url: `/api/v1/media/author/${id}/photo` })).statusCode).toBe(401);
    await d.store.db.insertInto('author').values({ name: 'No Photo Person' }).execute();
    const nophoto = (await d.store.db.selectFrom('author').select('id').where('name', '=', 'No Photo Person').executeTakeFirstOrThrow()).id;
    const none = await call(admin, { method: 'GET', url: `/api/v1/media/author/${nophoto}/thumbnail` });
    expect(none.statusCode).toBe(404);
    expect(none.body).toBe('');
    await call(admin, { method: 'POST', url: `/api/v1/authors/${authors.Cara}/photo/url?url=${encodeURIComponent(`${site.url}/photo.jpg`)}` });
    expect((await call(admin, { method: 'GET', url: `/api/v1/media/author/${authors.Cara}/photo` })).statusCode).toBe(200);
    expect((await call(reader, { method: 'GET', url: `/api/v1/media/author/${authors.Cara}/photo` })).statusCode).toBe(404);
  });
});

describe('deleting authors', () => {
  it('takes the author off their books and removes them and their photo; the books and files stay', async () => {
    const bob = authors.Bob as number;
    const file = await d.store.db.selectFrom('book_file').select('file_name').where('book_id', '=', books.shared as number).executeTakeFirstOrThrow();
    const onDisk = join(tmp.dir, 'Open', file.file_name);
    writeFileSync(onDisk, 'the book itself');
    expect(existsSync(authorPhotoFile(root(), bob, 'photo'))).toBe(true);
    const res = await call(deleter, { method: 'DELETE', url: '/api/v1/authors', payload: [bob, 424242] });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    expect(await d.store.db.selectFrom('author').select('id').where('id', '=', bob).executeTakeFirst()).toBeUndefined();
    expect((await call(reader, { method: 'GET', url: `/api/v1/authors/book/${books.shared}` })).json()).toEqual(['Ann Author']);
    expect((await call(reader, { method: 'GET', url: `/api/v1/authors/book/${books.bobs}` })).json()).toEqual([]);
    expect((await call(reader, { method: 'GET', url: `/api/v1/books/${books.bobs}` })).statusCode).toBe(200);
    expect(readFileSync(onDisk, 'utf8')).toBe('the book itself');
    expect(existsSync(join(root(), String(bob)))).toBe(false);
    expect(await searchText(books.shared as number)).not.toContain('bob');
    expect((await call(reader, { method: 'GET', url: `/api/v1/authors/${bob}` })).statusCode).toBe(404);
  });

  it('is for admins and users who may delete books, and skips authors the caller cannot see', async () => {
    expect((await call(editor, { method: 'DELETE', url: '/api/v1/authors', payload: [authors.Ann] })).statusCode).toBe(403);
    expect((await call(deleter, { method: 'DELETE', url: '/api/v1/authors', payload: [authors.Cara] })).statusCode).toBe(200);
    expect((await call(admin, { method: 'GET', url: `/api/v1/authors/${authors.Cara}` })).statusCode).toBe(200);
    expect((await call(deleter, { method: 'DELETE', url: '/api/v1/authors', payload: ['x'] })).statusCode).toBe(400);
    expect((await call(deleter, { method: 'DELETE', url: '/api/v1/authors' })).statusCode).toBe(400);
    expect((await call(admin, { method: 'DELETE', url: '/api/v1/authors', payload: [authors.Cara] })).statusCode).toBe(200);
    expect((await call(admin, { method: 'GET', url: `/api/v1/authors/${authors.Cara}` })).statusCode).toBe(404);
    expect((await call(admin, { method: 'GET', url: `/api/v1/authors/book/${books.hidden}` })).json()).toEqual(['Ann Author']);
  });
});
