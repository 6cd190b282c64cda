import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fullSizeCover, goodreadsProvider } from '../../src/core/metadata/providers/goodreads.ts';
import { searchProvider } from '../../src/core/metadata/search.ts';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.ts';
import { testContext, testRuntime } from '../helpers/provider-harness.ts';
import { goodreadsAutocomplete, goodreadsBookPage, type GoodreadsBook } from '../helpers/provider-pages.ts';

const HOBBIT: GoodreadsBook = {
  legacyId: 5907,
  title: 'The Hobbit: or There and Back Again',
  author: 'J.R.R. Tolkien',
  illustrator: 'Alan Lee',
  seriesTitle: 'The Lord of the Rings',
  seriesPosition: '0',
  genres: ['Fantasy', 'Classics', 'Fiction'],
  isbn: '0618260307',
  isbn13: '9780618260300',
  pages: 366,
  publicationTime: 1032879600000,
  publisher: 'Houghton Mifflin',
  averageRating: 4.29,
  ratingsCount: 4123456,
  description: '<b>In a hole in the ground there lived a hobbit.</b><br /><br />Not a nasty, dirty, wet hole.',
  reviews: [
    { name: 'Reader Two', text: 'A <i>delight</i> from start to finish.', rating: 5, updatedAt: 1690000000000, followers: 120, textReviews: 45 },
    { name: 'Spoiler Fan', text: 'The dragon <b>dies</b>.', rating: 3, updatedAt: 1680000000000, spoiler: true },
    { name: 'Silent', text: '', rating: 4, updatedAt: 1670000000000 },
  ],
};

describe('Goodreads provider', () => {
  let site: FakeSite;
  beforeAll(async () => {
    site = await startFakeSite();
  });
  afterAll(async () => site.close());
  beforeEach(() => site.reset());

  it('finds a book by ISBN through the redirect to its page and reads the embedded data', async () => {
    site.on('GET', '/book/isbn/9780618260300', { redirect: '/book/show/5907.The_Hobbit' });
    site.on('GET', '/book/show/5907.The_Hobbit', { html: goodreadsBookPage(HOBBIT) });
    const { candidates, searchedBy } = await searchProvider(goodreadsProvider, { isbn: '978-0-618-26030-0', title: 'The Hobbit' }, testRuntime(site));
    expect(searchedBy).toBe('isbn');
    expect(candidates).toHaveLength(1);
    expect(candidates[0]).toMatchObject({
      provider: 'GoodReads',
      providerItemId: '5907',
      goodreadsId: '5907',
      title: 'The Hobbit',
      subtitle: 'or There and Back Again',
      authors: ['J.R.R. Tolkien'],
      seriesName: 'The Lord of the Rings',
      seriesNumber: 0,
      categories: ['Fantasy', 'Classics', 'Fiction'],
      pageCount: 366,
      publishedDate: '2002-09-24',
      publisher: 'Houghton Mifflin',
      isbn13: '9780618260300',
      isbn10: '0618260307',
      language: 'en',
      goodreadsRating: 4.29,
      goodreadsReviewCount: 4123456,
      thumbnailUrl: 'https://images-na.ssl-images-amazon.com/images/S/compressed.photo.goodreads.com/books/1546071216i/5907.jpg',
      externalUrl: 'https://www.goodreads.com/book/show/5907',
    });
    expect(candidates[0]?.description).toBe('In a hole in the ground there lived a hobbit.\n\nNot a nasty, dirty, wet hole.');
    expect(candidates[0]?.bookReviews).toEqual([
      { metadataProvider: 'GoodReads', reviewerName: 'Reader Two', rating: 5, date: '2023-07-22T04:26:40Z', body: 'A delight from start to finish.', spoiler: false, followersCount: 120, textReviewsCount: 45 },
      { metadataProvider: 'GoodReads', reviewerName: 'Spoiler Fan', rating: 3, date: '2023-03-28T10:40:00Z', body: 'The dragon dies.', spoiler: true, followersCount: 10, textReviewsCount: 5 },
    ]);
  });

  it('treats an ISBN that lands on the search page as not found, then searches the title and orders by author', async () => {
    site.on('GET', '/book/isbn/9780000000002', { redirect: '/search?q=9780000000002' });
    site.on('GET', '/search', { html: '<html><body><h1>Search</h1><p>No results.</p></body></html>' });
    site.on('GET', '/book/auto_complete', {
      json: goodreadsAutocomplete([
        { bookId: '100', title: 'The Hobbit Companion', author: 'David Day' },
        { bookId: '5907', title: 'The Hobbit', author: 'J.R.R. Tolkien', avgRating: '4.29' },
      ]),
    });
    site.on('GET', '/book/show/5907', { html: goodreadsBookPage(HOBBIT) });
    site.on('GET', '/book/show/100', { html: goodreadsBookPage({ ...HOBBIT, legacyId: 100, title: 'The Hobbit Companion', author: 'David Day', reviews: [] }) });
    const { candidates, searchedBy } = await searchProvider(goodreadsProvider, { isbn: '9780000000002', title: 'The Hobbit', author: 'J.R.R. Tolkien' }, testRuntime(site));
    expect(searchedBy).toBe('title');
    const search = site.requests.find((r) => r.path === '/book/auto_complete');
    expect(search?.query.get('q')).toBe('The Hobbit');
    expect(search?.query.get('format')).toBe('json');
    expect(candidates.map((c) => c.goodreadsId)).toEqual(['5907', '100']);
  });

  it('returns light candidates from the search beyond the first three, with full-size covers', async () => {
    const entries = [1, 2, 3, 4].map((n) => ({ bookId: String(n), title: `Book ${n}`, author: 'A' }));
    site.on('GET', '/book/auto_complete', { json: goodreadsAutocomplete(entries) });
    site.on('GET', /^\/book\/show\//, (req) => ({ html: goodreadsBookPage({ ...HOBBIT, legacyId: Number(req.path.split('/').pop()), title: 'Full', reviews: [] }) }));
    const found = await goodreadsProvider.search({ title: 'Book' }, testContext(goodreadsProvider, site));
    expect(found).toHaveLength(4);
    expect(found[3]).toMatchObject({ goodreadsId: '4', title: 'Book 4', authors: ['A'], thumbnailUrl: 'https://i.gr-assets.com/images/S/compressed.photo.goodreads.com/books/1549260060i/4.jpg', pageCount: 240 });
    expect(fullSizeCover('https://x.example/b/1._SY75_.jpg')).toBe('https://x.example/b/1.jpg');
  });

  it('reads a stored id such as "5907.The_Hobbit" straight from the book page', async () => {
    site.on('GET', '/book/show/5907', { html: goodreadsBookPage(HOBBIT) });
    const record = await goodreadsProvider.details?.('5907.The_Hobbit', testContext(goodreadsProvider, site));
    expect(record?.title).toBe('The Hobbit');
    expect(site.requests.map((r) => r.path)).toEqual(['/book/show/5907']);
  });

  it('reports a sign-in wall or robot check as BLOCKED and a page without its data as CHANGED', async () => {
    site.on('GET', '/book/show/1', { html: '<html><head><title>Robot Check</title></head><body><p>Please complete the captcha to continue.</p></body></html>' });
    site.on('GET', '/book/show/2', { html: '<html><body><div id="__next">Redesigned page</div></body></html>' });
    site.on('GET', '/book/show/3', { html: '<html><body><script id="__NEXT_DATA__" type="application/json">{"props":{"pageProps":{}}}</script></body></html>' });
    site.on('GET', '/book/auto_complete', { html: '<html><body>Access Denied</body></html>' });
    const ctx = testContext(goodreadsProvider, site);
    await expect(goodreadsProvider.details?.('1', ctx)).rejects.toMatchObject({ code: 'BLOCKED', message: expect.stringMatching(/^Goodreads: /) });
    await expect(goodreadsProvider.details?.('2', ctx)).rejects.toMatchObject({ code: 'CHANGED', message: expect.stringContaining('no embedded book data') });
    await expect(goodreadsProvider.details?.('3', ctx)).rejects.toMatchObject({ code: 'CHANGED', message: expect.stringContaining('Apollo state') });
    // JSON was asked for and HTML came back.
    await expect(goodreadsProvider.search({ title: 'x' }, ctx)).rejects.toMatchObject({ code: 'BLOCKED' });
    await expect(goodreadsProvider.details?.('404', ctx)).resolves.toBeNull();
  });
});
