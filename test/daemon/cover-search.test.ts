import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import sharp from 'sharp';
import { coverShapeFits, rankWebImages } from '../../src/core/metadata/cover-search.ts';
import { parseImageResults, vqdToken } from '../../src/core/metadata/duckduckgo-images.ts';
import { PROVIDER_IDS } from '../../src/core/metadata/provider.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.ts';
import { audibleProduct, duckDuckGoImages, duckDuckGoResultsPage, goodreadsAutocomplete, goodreadsBookPage } from '../helpers/provider-pages.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

let d: TestDaemon;
let site: FakeSite;
let tmp: TempDir;
let admin: string;
let reader: string;
let outsider: string;
let bookId: number;
let untitledBookId: number;
const TOKEN = '4-31415926535897932384626433832795';
const images: Record<string, Buffer> = {};

const jpeg = (width: number, height: number): Promise<Buffer> => sharp({ create: { width, height, channels: 3, background: '#8a5' } }).jpeg().toBuffer();
const call = (token: string, options: InjectOptions) => d.inject({ ...options, headers: { ...(options.headers ?? {}), authorization: `Bearer ${token}` } });
const covers = (token: string, payload: unknown, id = bookId) => call(token, { method: 'POST', url: `/api/v1/books/${id}/metadata/covers`, payload: payload as Record<string, unknown> });

function events(body: string): { data: { url: string; width: number; height: number; index: number }[]; comments: string[] } {
  const blocks = body.split('\n\n').filter((b) => b.trim() !== '');
  return {
    data: blocks.filter((b) => b.startsWith('data:')).map((b) => JSON.parse(b.slice(5)) as { url: string; width: number; height: number; index: number }),
    comments: blocks.filter((b) => b.startsWith(':')).map((b) => b.slice(1).trim()),
  };
}

beforeAll(async () => {
  site = await startFakeSite();
  tmp = makeTempDir('bindery-covers-');
  images.tall = await jpeg(400, 600);
  images.square = await jpeg(500, 500);
  images.small = await jpeg(100, 150);
  images.wide = await jpeg(600, 400);
  d = await startTestDaemon({
    outgoingAllowPrivateHosts: '127.0.0.1',
    metadataProviderBaseUrls: JSON.stringify(Object.fromEntries([...PROVIDER_IDS, 'DuckDuckGo'].map((id) => [id, site.url]))),
  });
  admin = await d.setupAdmin();
  const library = await seedLibrary(d.store.db, tmp.dir, 'Main');
  bookId = (await seedBook(d.store.db, library, { title: 'The Hobbit', authors: ['J.R.R. Tolkien'] })).bookId;
  untitledBookId = (await seedBook(d.store.db, library, { title: 'x' })).bookId;
  await d.store.db.updateTable('book_metadata').set({ title: null }).where('book_id', '=', untitledBookId).execute();
  reader = (await d.createUser('reader', {}, [library])).token;
  outsider = (await d.createUser('outsider', { canEditMetadata: true }, [])).token;
  // Only the two providers the fake site plays are on.
  const off = { enabled: false };
  const val = JSON.stringify({
    amazon: { enabled: false, cookie: null, domain: 'com' },
    google: { enabled: false, language: null, apiKey: null },
    goodReads: { enabled: true },
    hardcover: { enabled: false, apiKey: null },
    comicvine: { enabled: false, apiKey: null },
    ranobedb: off,
    douban: off,
    lubimyczytac: off,
    audible: { enabled: true, domain: 'com' },
    openLibrary: off,
  });
  await d.store.db.insertInto('app_settings').values({ name: 'metadata_provider_settings', val }).onConflict((oc) => oc.column('name').doUpdateSet({ val })).execute();
}, 60_000);

afterAll(async () => {
  await d?.close();
  await site?.close();
  tmp?.remove();
});

beforeEach(() => {
  site.reset();
  site.on('GET', /^\/img\//, (req) => ({ body: images[req.path.slice(5).replace('.jpg', '')] ?? Buffer.alloc(0), contentType: 'image/jpeg' }));
  site.on('GET', '/book/auto_complete', { json: goodreadsAutocomplete([{ bookId: '5907', title: 'The Hobbit', author: 'J.R.R. Tolkien' }]) });
  site.on('GET', '/book/show/5907', { html: goodreadsBookPage({ legacyId: 5907, title: 'The Hobbit', author: 'J.R.R. Tolkien', imageUrl: `${site.url}/img/tall.jpg` }) });
  site.on('GET', '/1.0/catalog/products', {
    json: {
      products: [
        audibleProduct({ asin: '1705047572', title: 'The Hobbit', authors: ['J. R. R. Tolkien'], narrators: ['Andy Serkis'], imageUrl: `${site.url}/img/square.jpg` }),
        audibleProduct({ asin: '1705047573', title: 'The Hobbit (Dramatised)', authors: ['J. R. R. Tolkien'], narrators: ['Cast'], imageUrl: `${site.url}/img/small.jpg` }),
      ],
    },
  });
});

function duckDuckGo(sites: { url: string; width: number; height: number }[], web: { url: string; width: number; height: number }[]): void {
  site.on('GET', '/', (req) => ({ html: duckDuckGoResultsPage(req.query.get('q') ?? '', TOKEN), headers: { 'set-cookie': 'ah=us-en; Path=/; Secure' } }));
  site.on('GET', '/i.js', (req) => {
    if (req.query.get('vqd') !== TOKEN || req.headers['x-vqd-4'] !== TOKEN) return { status: 403, html: '<html>bad token</html>' };
    return { json: duckDuckGoImages((req.query.get('q') ?? '').includes('site:amazon.com') ? sites : web) };
  });
}

describe('candidate cover search', () => {
  it('streams provider covers with their measured sizes and DuckDuckGo images, store sites first, as Grimmory does', async () => {
    duckDuckGo(
      [
        { url: 'https://m.media-amazon.com/images/I/hobbit-1.jpg', width: 500, height: 750 },
        { url: 'https://m.media-amazon.com/images/I/hobbit-wide.jpg', width: 900, height: 600 },
        { url: 'https://m.media-amazon.com/images/I/hobbit-tiny.jpg', width: 200, height: 300 },
      ],
      [
        { url: 'https://m.media-amazon.com/images/I/hobbit-1.jpg', width: 500, height: 750 },
        { url: 'https://example.org/hobbit-poster.jpg', width: 600, height: 900 },
        { url: 'https://images.gr-assets.com/books/hobbit.jpg', width: 400, height: 640 },
      ],
    );
    const res = await covers(admin, { bookId, title: 'The Hobbit', author: 'J.R.R. Tolkien', coverType: 'ebook' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const { data, comments } = events(res.body);
    expect(comments).toEqual([]);
    expect(data.map((e) => e.index).sort((a, b) => a - b)).toEqual([1, 2, 3, 4]);
    const byUrl = Object.fromEntries(data.map((e) => [e.url, [e.width, e.height]]));
    expect(byUrl).toEqual({
      // Goodreads' cover, downloaded and measured; Audible's square cover is not a book shape.
      [`${site.url}/img/tall.jpg`]: [400, 600],
      'https://m.media-amazon.com/images/I/hobbit-1.jpg': [500, 750],
      'https://images.gr-assets.com/books/hobbit.jpg': [400, 640],
      'https://example.org/hobbit-poster.jpg': [600, 900],
    });
    // Within DuckDuckGo's share, the store images come before the rest of the web.
    const web = data.filter((e) => !e.url.startsWith(site.url)).sort((a, b) => a.index - b.index).map((e) => e.url);
    expect(web).toEqual(['https://m.media-amazon.com/images/I/hobbit-1.jpg', 'https://images.gr-assets.com/books/hobbit.jpg', 'https://example.org/hobbit-poster.jpg']);
    const searches = site.requests.filter((r) => r.path === '/');
    expect(searches.map((r) => r.query.get('q'))).toEqual(['The Hobbit J.R.R. Tolkien book (site:amazon.com OR site:goodreads.com)', 'The Hobbit J.R.R. Tolkien book']);
    expect(searches[0]?.query.get('iaf')).toBe('size:Large,layout:Tall');
    expect(site.requests.find((r) => r.path === '/i.js')?.headers.cookie).toBe('ah=us-en');
  });

  it('asks for square images for an audiobook and keeps only covers about as wide as tall', async () => {
    duckDuckGo([{ url: 'https://m.media-amazon.com/images/I/hobbit-audio.jpg', width: 1000, height: 1000 }], [{ url: 'https://example.org/tall.jpg', width: 600, height: 900 }]);
    const res = await covers(admin, { title: 'The Hobbit', coverType: 'audiobook' });
    const { data } = events(res.body);
    expect(data.map((e) => e.url).sort()).toEqual([`${site.url}/img/square.jpg`, 'https://m.media-amazon.com/images/I/hobbit-audio.jpg'].sort());
    expect(site.requests.find((r) => r.path === '/')?.query.get('iaf')).toBe('size:Large,layout:Square');
    expect(site.requests.find((r) => r.path === '/')?.query.get('q')).toContain('The Hobbit audiobook');
  });

  it('still streams the provider covers when DuckDuckGo blocks, saying so in an SSE comment', async () => {
    site.on('GET', '/', { status: 403, html: '<html><body>blocked</body></html>' });
    const res = await covers(admin, { title: 'The Hobbit' });
    expect(res.statusCode).toBe(200);
    const { data, comments } = events(res.body);
    expect(data).toEqual([{ url: `${site.url}/img/tall.jpg`, width: 400, height: 600, index: 1 }]);
    expect(comments).toEqual([expect.stringMatching(/^DuckDuckGo: refused access \(HTTP 403\)/)]);
  });

  it('reports a results page without its token as a changed page', async () => {
    site.on('GET', '/', { html: '<html><body>new design</body></html>' });
    const { comments } = events((await covers(admin, { title: 'The Hobbit' })).body);
    expect(comments).toEqual([expect.stringContaining('DuckDuckGo: unexpected response (the results page has no search token)')]);
  });

  it('takes the title and author from the book when the request has none, and refuses a book with neither title nor ISBN', async () => {
    duckDuckGo([], []);
    const res = await covers(admin, {});
    expect(res.statusCode).toBe(200);
    expect(site.requests.find((r) => r.path === '/')?.query.get('q')).toBe('The Hobbit J.R.R. Tolkien book (site:amazon.com OR site:goodreads.com)');
    const none = await covers(admin, { title: '  ' }, untitledBookId);
    expect(none.statusCode).toBe(400);
    expect(none.json()).toMatchObject({ status: 400, message: expect.stringContaining('title or an ISBN') });
  });

  it('needs canEditMetadata and the book’s library', async () => {
    expect((await covers(reader, { title: 'x' })).statusCode).toBe(403);
    expect((await covers(outsider, { title: 'x' })).statusCode).toBe(403);
    expect((await covers(admin, { title: 'x' }, 999999)).statusCode).toBe(404);
    expect(site.requests).toHaveLength(0);
  });
});

describe('cover search pieces', () => {
  it('judge shapes and rank store images first', () => {
    expect(coverShapeFits(400, 600, false, 350)).toBe(true);
    expect(coverShapeFits(600, 400, false, 350)).toBe(false);
    expect(coverShapeFits(300, 450, false, 350)).toBe(false);
    expect(coverShapeFits(500, 540, true, 350)).toBe(true);
    expect(coverShapeFits(500, 700, true, 350)).toBe(false);
    const ranked = rankWebImages(
      [
        { url: 'https://a.example/1.jpg', width: 400, height: 600 },
        { url: 'https://images-na.ssl-images-amazon.com/2.jpg', width: 400, height: 600 },
      ],
      false,
    );
    expect(ranked.map((h) => h.url)).toEqual(['https://images-na.ssl-images-amazon.com/2.jpg', 'https://a.example/1.jpg']);
  });

  it('read the token and the results', () => {
    expect(vqdToken(`x vqd="4-123-456" y`)).toBe('4-123-456');
    expect(vqdToken('vqd=4-98765&p=1')).toBe('4-98765');
    expect(vqdToken('nothing here')).toBeUndefined();
    expect(parseImageResults({ results: [{ image: 'https://x/1.jpg', width: 10, height: 20 }, { image: 'javascript:alert(1)' }] })).toEqual([{ url: 'https://x/1.jpg', width: 10, height: 20 }]);
    expect(() => parseImageResults({ nope: [] })).toThrow(/DuckDuckGo: unexpected response/);
  });
});
