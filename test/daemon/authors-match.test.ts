// Author metadata from Audnexus (played by a local fake site): search, ASIN lookup, match, quick-match, auto-match as
// server-sent events, unmatch; and the photo search through DuckDuckGo's image search.
import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InjectOptions } from 'fastify';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorImagesRoot, authorPhotoFile } from '../../src/core/authors/author-photos.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { startFakeSite, type FakeRequest, type FakeSite } from '../helpers/fake-site.ts';
import { duckDuckGoImages, duckDuckGoResultsPage } from '../helpers/provider-pages.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

type Json = Record<string, unknown>;

let d: TestDaemon;
let site: FakeSite;
let tmp: TempDir;
let admin: string;
let editor: string;
let reader: string;
const authors: Record<string, number> = {};
let photo: Buffer;

const call = (token: string, options: InjectOptions) => d.inject({ ...options, headers: { ...(options.headers ?? {}), authorization: `Bearer ${token}` } });
const details = async (id: number): Promise<Json> => (await call(admin, { method: 'GET', url: `/api/v1/authors/${id}` })).json() as Json;
const root = (): string => authorImagesRoot(d.config.dataDir);
const audnexusCalls = (): FakeRequest[] => site.requests.filter((r) => r.path.startsWith('/authors'));

const AUTHOR_RECORDS: Record<string, Json> = {
  B000ANN001: { asin: 'B000ANN001', name: 'Ann Author', description: 'Ann writes long novels.', image: '', region: 'us', genres: [{ asin: '18580606011', name: 'Fiction', type: 'genre' }], similar: [] },
  B000ANN002: { asin: 'B000ANN002', name: 'Ann Authorson', description: 'Another Ann.', image: null, region: 'us' },
  B000BOB001: { asin: 'B000BOB001', name: 'Bob Writer', description: 'Bob writes short stories.', image: '', region: 'us' },
};

/** Audnexus as the fake site plays it: a name search (with a duplicate, as the real one sends) and author records. */
function playAudnexus(): void {
  AUTHOR_RECORDS.B000ANN001 = { ...AUTHOR_RECORDS.B000ANN001, image: `${site.url}/images/ann.jpg` };
  AUTHOR_RECORDS.B000BOB001 = { ...AUTHOR_RECORDS.B000BOB001, image: `${site.url}/images/bob.jpg` };
  site.on('GET', '/authors', (req) => {
    const name = req.query.get('name') ?? '';
    if (name === 'Broken Provider') return { status: 500, json: { error: 'boom' } };
    if (name.startsWith('Ann')) return { json: [{ asin: 'B000ANN001', name: 'Ann Author' }, { asin: 'B000ANN001', name: 'Ann Author' }, { asin: 'B000ANN002', name: 'Ann Authorson' }] };
    if (name === 'Bob Writer') return { json: [{ asin: 'B000BOB001', name: 'Bob Writer' }] };
    if (name.startsWith('Writer ')) return { json: [{ asin: 'B000ANN002', name }] };
    if (name === 'Nobody Known') return { status: 404, json: { error: 'Author not found' } };
    return { json: [] };
  });
  site.on('GET', /^\/authors\/[^/]+$/, (req) => {
    const record = AUTHOR_RECORDS[req.path.slice('/authors/'.length)];
    return record ? { json: { ...record, region: req.query.get('region') } } : { status: 404, json: { error: 'Author not found' } };
  });
  site.on('GET', /^\/images\//, { body: photo, contentType: 'image/jpeg' });
}

beforeAll(async () => {
  site = await startFakeSite();
  tmp = makeTempDir('bindery-author-match-');
  photo = await sharp({ create: { width: 400, height: 500, channels: 3, background: '#c03020' } }).jpeg().toBuffer();
  d = await startTestDaemon({ outgoingAllowPrivateHosts: '127.0.0.1', metadataProviderBaseUrls: JSON.stringify({ Audnexus: site.url, DuckDuckGo: site.url }) });
  admin = await d.setupAdmin();
  const open = await seedLibrary(d.store.db, tmp.dir, 'Open');
  const closed = await seedLibrary(d.store.db, tmp.dir, 'Closed');
  await seedBook(d.store.db, open, { title: 'One', authors: ['Ann Author', 'Bob Writer'] });
  await seedBook(d.store.db, open, { title: 'Two', authors: ['Nobody Known', 'Broken Provider'] });
  await seedBook(d.store.db, closed, { title: 'Three', authors: ['Cara Hidden'] });
  for (const row of await d.store.db.selectFrom('author').select(['id', 'name']).execute()) authors[row.name.split(' ')[0] as string] = row.id;
  editor = (await d.createUser('editor', { canEditMetadata: true }, [open])).token;
  reader = (await d.createUser('reader', {}, [open])).token;
}, 60_000);

beforeEach(() => {
  site.reset();
  playAudnexus();
});

afterAll(async () => {
  await d?.close();
  await site?.close();
  tmp?.remove();
});

describe('searching author metadata', () => {
  it('finds authors by name, each once and in detail, in the region asked', async () => {
    const res = await call(editor, { method: 'GET', url: `/api/v1/authors/${authors.Ann}/search-metadata?q=Ann%20Author&region=UK` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([
      { source: 'AUDNEXUS', asin: 'B000ANN001', name: 'Ann Author', description: 'Ann writes long novels.', imageUrl: `${site.url}/images/ann.jpg` },
      { source: 'AUDNEXUS', asin: 'B000ANN002', name: 'Ann Authorson', description: 'Another Ann.' },
    ]);
    expect(audnexusCalls().map((r) => `${r.path}?${r.query.toString()}`)).toEqual(['/authors?name=Ann+Author&region=uk', '/authors/B000ANN001?region=uk', '/authors/B000ANN002?region=uk']);
  });

  it('looks an ASIN up instead when one is given, and finds nothing for an unknown one', async () => {
    const res = await call(editor, { method: 'GET', url: `/api/v1/authors/${authors.Ann}/search-metadata?q=ignored&asin=B000BOB001` });
    expect(res.json()).toEqual([{ source: 'AUDNEXUS', asin: 'B000BOB001', name: 'Bob Writer', description: 'Bob writes short stories.', imageUrl: `${site.url}/images/bob.jpg` }]);
    expect((await call(editor, { method: 'GET', url: `/api/v1/authors/${authors.Ann}/search-metadata?asin=B000NONE00` })).json()).toEqual([]);
    expect((await call(editor, { method: 'GET', url: `/api/v1/authors/${authors.Ann}/search-metadata?q=Somebody%20Else` })).json()).toEqual([]);
  });

  it('refuses a search without q or asin, a bad region or ASIN; a failing source is a 502', async () => {
    const none = await call(editor, { method: 'GET', url: `/api/v1/authors/${authors.Ann}/search-metadata` });
    expect(none.statusCode).toBe(400);
    expect(none.json()).toMatchObject({ status: 400, message: "Either 'q' or 'asin' parameter is required" });
    expect((await call(editor, { method: 'GET', url: `/api/v1/authors/${authors.Ann}/search-metadata?q=Ann&region=mars` })).statusCode).toBe(400);
    expect((await call(editor, { method: 'GET', url: `/api/v1/authors/${authors.Ann}/search-metadata?asin=../../etc` })).statusCode).toBe(400);
    const broken = await call(editor, { method: 'GET', url: `/api/v1/authors/${authors.Ann}/search-metadata?q=Broken%20Provider` });
    expect(broken.statusCode).toBe(502);
    expect(broken.json().message).toBe('Audnexus: answered HTTP 500');
  });

  it('is for metadata editors, about authors they can see', async () => {
    expect((await call(reader, { method: 'GET', url: `/api/v1/authors/${authors.Ann}/search-metadata?q=Ann` })).statusCode).toBe(403);
    expect((await call(editor, { method: 'GET', url: `/api/v1/authors/${authors.Cara}/search-metadata?q=Cara` })).statusCode).toBe(404);
    expect(audnexusCalls()).toEqual([]);
  });
});

describe('matching an author', () => {
  it('takes the description, the ASIN and the photo of the chosen record', async () => {
    const id = authors.Ann as number;
    const res = await call(editor, { method: 'POST', url: `/api/v1/authors/${id}/match`, payload: { source: 'AUDNEXUS', asin: 'B000ANN001', region: 'us' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id, name: 'Ann Author', description: 'Ann writes long novels.', asin: 'B000ANN001', nameLocked: false, descriptionLocked: false, asinLocked: false, photoLocked: false });
    expect(site.requests.some((r) => r.path === '/images/ann.jpg')).toBe(true);
    const thumb = await sharp(authorPhotoFile(root(), id, 'thumbnail')).metadata();
    expect([thumb.width, thumb.height]).toEqual([250, 350]);
    const listed = ((await call(editor, { method: 'GET', url: '/api/v1/authors' })).json() as Json[]).find((a) => a.id === id);
    expect(listed).toEqual({ id, name: 'Ann Author', asin: 'B000ANN001', bookCount: 1, hasPhoto: true });
  });

  it('keeps locked fields and a locked photo', async () => {
    const id = authors.Bob as number;
    await call(admin, { method: 'PUT', url: `/api/v1/authors/${id}`, payload: { description: 'My own words.', descriptionLocked: true, photoLocked: true } });
    const res = await call(editor, { method: 'POST', url: `/api/v1/authors/${id}/match`, payload: { source: 'AUDNEXUS', asin: 'B000BOB001' } });
    expect(res.json()).toMatchObject({ description: 'My own words.', asin: 'B000BOB001', descriptionLocked: true, photoLocked: true });
    expect(site.requests.some((r) => r.path.startsWith('/images/'))).toBe(false);
    expect(existsSync(authorPhotoFile(root(), id, 'photo'))).toBe(false);
    await call(admin, { method: 'PUT', url: `/api/v1/authors/${id}`, payload: { description: '', descriptionLocked: false, photoLocked: false, asin: '' } });
  });

  it('refuses an unknown source, a record the source does not have and a missing ASIN', async () => {
    const id = authors.Bob as number;
    const source = await call(editor, { method: 'POST', url: `/api/v1/authors/${id}/match`, payload: { source: 'GOODREADS', asin: 'B000BOB001' } });
    expect(source.json()).toMatchObject({ status: 400, message: 'Unsupported author metadata source: GOODREADS' });
    const missing = await call(editor, { method: 'POST', url: `/api/v1/authors/${id}/match`, payload: { source: 'AUDNEXUS', asin: 'B000NONE00' } });
    expect(missing.json()).toMatchObject({ status: 400, message: 'Failed to fetch author metadata' });
    expect((await call(editor, { method: 'POST', url: `/api/v1/authors/${id}/match`, payload: { source: 'AUDNEXUS' } })).statusCode).toBe(400);
    expect((await call(editor, { method: 'POST', url: `/api/v1/authors/${authors.Cara}/match`, payload: { source: 'AUDNEXUS', asin: 'B000BOB001' } })).statusCode).toBe(404);
    expect(await details(id)).not.toHaveProperty('asin');
  });
});

describe('quick-matching an author', () => {
  it("matches the first result for the author's name", async () => {
    const id = authors.Bob as number;
    const res = await call(editor, { method: 'POST', url: `/api/v1/authors/${id}/quick-match` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id, name: 'Bob Writer', asin: 'B000BOB001', description: 'Bob writes short stories.' });
    expect(audnexusCalls().map((r) => r.path)).toEqual(['/authors', '/authors/B000BOB001']);
    expect(existsSync(authorPhotoFile(root(), id, 'thumbnail'))).toBe(true);
  });

  it('says so when nothing is found, and passes a failing source on', async () => {
    const nobody = await call(editor, { method: 'POST', url: `/api/v1/authors/${authors.Nobody}/quick-match?region=de` });
    expect(nobody.json()).toMatchObject({ status: 400, message: 'No metadata found for author: Nobody Known' });
    expect(audnexusCalls()[0]?.query.get('region')).toBe('de');
    expect((await call(editor, { method: 'POST', url: `/api/v1/authors/${authors.Broken}/quick-match` })).statusCode).toBe(502);
    expect((await call(reader, { method: 'POST', url: `/api/v1/authors/${authors.Bob}/quick-match` })).statusCode).toBe(403);
  });
});

describe('unmatching authors', () => {
  it('forgets the description, ASIN and photo, except what is locked; skips authors the caller cannot see', async () => {
    const ann = authors.Ann as number;
    const bob = authors.Bob as number;
    await call(admin, { method: 'POST', url: `/api/v1/authors/${authors.Cara}/match`, payload: { source: 'AUDNEXUS', asin: 'B000ANN002' } });
    await call(admin, { method: 'PUT', url: `/api/v1/authors/${bob}`, payload: { asinLocked: true } });
    const res = await call(editor, { method: 'POST', url: '/api/v1/authors/unmatch', payload: [ann, bob, authors.Cara, 31337] });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
    expect(await details(ann)).toEqual({ id: ann, name: 'Ann Author', nameLocked: false, descriptionLocked: false, asinLocked: false, photoLocked: false });
    expect(existsSync(authorPhotoFile(root(), ann, 'photo'))).toBe(false);
    expect(await details(bob)).toEqual({ id: bob, name: 'Bob Writer', asin: 'B000BOB001', nameLocked: false, descriptionLocked: false, asinLocked: true, photoLocked: false });
    expect(await details(authors.Cara as number)).toMatchObject({ asin: 'B000ANN002' });
    expect((await call(reader, { method: 'POST', url: '/api/v1/authors/unmatch', payload: [ann] })).statusCode).toBe(403);
    expect((await call(editor, { method: 'POST', url: '/api/v1/authors/unmatch' })).statusCode).toBe(400);
    await call(admin, { method: 'PUT', url: `/api/v1/authors/${bob}`, payload: { asinLocked: false } });
  });
});

/** The `data:` events of a server-sent event stream, parsed. */
const dataEvents = (body: string): Json[] =>
  body
    .split('\n\n')
    .filter((block) => block.startsWith('data:'))
    .map((block) => JSON.parse(block.slice(5)) as Json);

describe('auto-matching authors', () => {
  it('streams an AuthorSummary per matched author, skipping the unmatched, the hidden and the unknown', async () => {
    const res = await call(editor, { method: 'POST', url: '/api/v1/authors/auto-match', payload: [authors.Ann, authors.Nobody, authors.Cara, 999_999, authors.Bob] });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(dataEvents(res.body)).toEqual([
      { id: authors.Ann, name: 'Ann Author', asin: 'B000ANN001', bookCount: 1, hasPhoto: true },
      { id: authors.Bob, name: 'Bob Writer', asin: 'B000BOB001', bookCount: 1, hasPhoto: true },
    ]);
    expect(audnexusCalls().some((r) => r.query.get('name') === 'Cara Hidden')).toBe(false);
    // Each request to the source waits its turn, and authors follow one another at a walking pace.
    const searches = audnexusCalls().filter((r) => r.path === '/authors').map((r) => r.at);
    for (let i = 1; i < searches.length; i++) expect((searches[i] as number) - (searches[i - 1] as number)).toBeGreaterThanOrEqual(450);
    const times = audnexusCalls().map((r) => r.at);
    // 150 ms apart as sent; arrival times on a loaded machine wobble by some milliseconds either way.
    for (let i = 1; i < times.length; i++) expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(100);
    expect(d.ctx.background.size).toBe(0);
  });

  it('reports a failing author as a comment and goes on', async () => {
    const res = await call(editor, { method: 'POST', url: '/api/v1/authors/auto-match', payload: [authors.Broken, authors.Bob] });
    expect(dataEvents(res.body).map((e) => e.id)).toEqual([authors.Bob]);
    expect(res.body).toContain(`: author ${authors.Broken}: Audnexus: answered HTTP 500`);
  });

  it('stops after the author in hand when the client goes away', async () => {
    const open = (await d.store.db.selectFrom('library').select('id').where('name', '=', 'Open').executeTakeFirstOrThrow()).id;
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) {
      await seedBook(d.store.db, open, { title: `Extra ${i}`, authors: [`Writer ${i}`] });
      ids.push((await d.store.db.selectFrom('author').select('id').where('name', '=', `Writer ${i}`).executeTakeFirstOrThrow()).id);
    }
    await d.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = d.app.server.address() as AddressInfo;
    const first = await new Promise<string>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/api/v1/authors/auto-match', headers: { authorization: `Bearer ${editor}`, 'content-type': 'application/json' } }, (res) => {
        let seen = '';
        res.on('data', (chunk: Buffer) => {
          seen += chunk.toString('utf8');
          if (seen.includes('\n\n')) {
            req.destroy();
            resolve(seen);
          }
        });
      });
      req.on('error', (error) => (error.message.includes('aborted') || error.message.includes('socket hang up') ? undefined : reject(error)));
      req.end(JSON.stringify(ids));
    });
    expect(dataEvents(first)[0]).toMatchObject({ id: ids[0], name: 'Writer 0', asin: 'B000ANN002' });
    while (d.ctx.background.size > 0) await Promise.allSettled([...d.ctx.background]);
    const searched = audnexusCalls().filter((r) => r.path === '/authors').length;
    expect(searched).toBeGreaterThanOrEqual(1);
    expect(searched).toBeLessThanOrEqual(2);
  });
});

describe('searching author photos', () => {
  const TOKEN = '4-27182818284590452353602874713526';

  it('streams CoverImages from the image search, Amazon and Goodreads images first, numbered from 1', async () => {
    site.on('GET', '/', (req) => ({ html: duckDuckGoResultsPage(req.query.get('q') ?? '', TOKEN) }));
    site.on('GET', '/i.js', {
      json: duckDuckGoImages([
        { url: 'https://example.org/ann.jpg', width: 400, height: 600 },
        { url: 'https://m.media-amazon.com/images/ann.jpg', width: 500, height: 500 },
        { url: 'https://images.goodreads.com/authors/ann.jpg', width: 300, height: 400 },
      ]),
    });
    const res = await call(editor, { method: 'GET', url: `/api/v1/authors/${authors.Ann}/search-photos?q=Ann%20Author` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(dataEvents(res.body)).toEqual([
      { url: 'https://m.media-amazon.com/images/ann.jpg', width: 500, height: 500, index: 1 },
      { url: 'https://images.goodreads.com/authors/ann.jpg', width: 300, height: 400, index: 2 },
      { url: 'https://example.org/ann.jpg', width: 400, height: 600, index: 3 },
    ]);
    expect(site.requests.find((r) => r.path === '/')?.query.get('q')).toBe('Ann Author author photo portrait');
  });

  it('answers a failed search with a comment and no images; refuses a blank query', async () => {
    site.on('GET', '/', { html: '<html>no token</html>' });
    const res = await call(editor, { method: 'GET', url: `/api/v1/authors/${authors.Ann}/search-photos?q=Ann` });
    expect(res.statusCode).toBe(200);
    expect(dataEvents(res.body)).toEqual([]);
    expect(res.body.startsWith(': DuckDuckGo')).toBe(true);
    expect((await call(editor, { method: 'GET', url: `/api/v1/authors/${authors.Ann}/search-photos?q=%20` })).statusCode).toBe(400);
    expect((await call(editor, { method: 'GET', url: `/api/v1/authors/${authors.Ann}/search-photos` })).statusCode).toBe(400);
    expect((await call(reader, { method: 'GET', url: `/api/v1/authors/${authors.Ann}/search-photos?q=Ann` })).statusCode).toBe(403);
  });
});
