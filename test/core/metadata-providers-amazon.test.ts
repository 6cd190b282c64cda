import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/core/metadata/provider.ts';
import { amazonProvider, fullSizeImage } from '../../src/core/metadata/providers/amazon.ts';
import { searchProvider } from '../../src/core/metadata/search.ts';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.ts';
import { ALL_ON, testContext, testRuntime } from '../helpers/provider-harness.ts';
import { amazonCaptchaPage, amazonProductPage, amazonSearchPage, type AmazonProduct } from '../helpers/provider-pages.ts';

const HOBBIT: AmazonProduct = {
  title: 'The Hobbit: Or There and Back Again',
  authors: [{ name: 'J. R. R. Tolkien' }, { name: 'Alan Lee', role: 'Illustrator' }],
  isbn13: '978-0547928227',
  isbn10: '054792822X',
  publisherLine: 'Mariner Books; Reprint edition (September 18, 2012)',
  publicationDate: 'September 18, 2012',
  pages: '300 pages',
  language: 'English',
  series: { name: 'The Lord of the Rings', label: 'Book 0 of 4' },
  rating: '4.8',
  ratings: '123,456',
  image: 'https://m.media-amazon.com/images/I/712cDO7d73L._SY466_.jpg',
  description: '<span>A great modern classic and the prelude to <span class="a-text-italic">The Lord of the Rings</span>.</span><br><br><span>Bilbo Baggins is a hobbit.</span>',
  categories: ['Classic Literature', 'Fantasy'],
  reviews: [
    { name: 'Reader One', title: 'A timeless adventure', stars: '5.0 out of 5 stars', dateLine: 'Reviewed in the United States on March 3, 2023', body: 'Loved every page of it.' },
    { name: 'Leser Zwei', title: 'Schön', stars: '4,0 von 5 Sternen', dateLine: 'Reviewed in Germany on 12 January 2022', body: 'Sehr gut.' },
  ],
};

describe('Amazon provider', () => {
  let site: FakeSite;
  beforeAll(async () => {
    site = await startFakeSite();
  });
  afterAll(async () => site.close());
  beforeEach(() => site.reset());

  it('searches by ISBN, prefers the print edition and reads the product page in full', async () => {
    site.on('GET', '/s', {
      html: amazonSearchPage([
        { asin: 'B007978NPG', paperbackAsin: '054792822X', title: 'The Hobbit', author: 'J. R. R. Tolkien' },
        { asin: '0007458428', title: 'The Hobbit (Collins Modern Classics)', author: 'J. R. R. Tolkien' },
      ]),
    });
    site.on('GET', '/dp/054792822X', { html: amazonProductPage(HOBBIT) });
    site.on('GET', '/dp/0007458428', { html: amazonProductPage({ ...HOBBIT, title: 'The Hobbit', reviews: [] }) });

    const { candidates, searchedBy } = await searchProvider(amazonProvider, { isbn: '978-0-547-92822-7', title: 'The Hobbit' }, testRuntime(site));
    expect(searchedBy).toBe('isbn');
    expect(site.requests[0]?.path).toBe('/s');
    expect(site.requests[0]?.query.get('k')).toBe('9780547928227');
    expect(site.requests.map((r) => r.path)).toEqual(['/s', '/dp/054792822X', '/dp/0007458428']);
    expect(candidates).toHaveLength(2);
    const hobbit = candidates[0];
    expect(hobbit).toMatchObject({
      provider: 'Amazon',
      providerItemId: '054792822X',
      asin: '054792822X',
      title: 'The Hobbit',
      subtitle: 'Or There and Back Again',
      authors: ['J. R. R. Tolkien'],
      isbn13: '9780547928227',
      isbn10: '054792822X',
      publisher: 'Mariner Books',
      publishedDate: '2012-09-18',
      pageCount: 300,
      language: 'en',
      seriesName: 'The Lord of the Rings',
      seriesNumber: 0,
      seriesTotal: 4,
      categories: ['Classic Literature', 'Fantasy'],
      amazonRating: 4.8,
      amazonReviewCount: 123456,
      thumbnailUrl: 'https://m.media-amazon.com/images/I/712cDO7d73L._SY466_.jpg',
      externalUrl: `${site.url}/dp/054792822X`,
    });
    expect(hobbit?.description).toBe('A great modern classic and the prelude to The Lord of the Rings.\n\nBilbo Baggins is a hobbit.');
    expect(hobbit?.bookReviews).toEqual([
      { metadataProvider: 'Amazon', reviewerName: 'Reader One', title: 'A timeless adventure', rating: 5, country: 'United States', date: '2023-03-03T00:00:00Z', body: 'Loved every page of it.' },
      { metadataProvider: 'Amazon', reviewerName: 'Leser Zwei', title: 'Schön', rating: 4, country: 'Germany', date: '2022-01-12T00:00:00Z', body: 'Sehr gut.' },
    ]);
  });

  it('falls back to title and author, sending the terms without punctuation and the browser headers', async () => {
    site.on('GET', '/s', (req) =>
      req.query.get('k') === '9780000000002' ? { html: amazonSearchPage([]) } : { html: amazonSearchPage([{ asin: '0261102214', title: 'The Hobbit', author: 'J.R.R. Tolkien' }]) },
    );
    site.on('GET', '/dp/0261102214', { html: amazonProductPage({ ...HOBBIT, title: 'The Hobbit', reviews: [] }) });
    const runtime = testRuntime(site, { providerSettings: { ...ALL_ON, amazon: { enabled: true, domain: 'co.uk', cookie: 'session-id=123-456' } } });
    const { candidates, searchedBy } = await searchProvider(amazonProvider, { isbn: '9780000000002', title: 'The Hobbit!', author: 'J.R.R. Tolkien' }, runtime);
    expect(searchedBy).toBe('title');
    expect(site.requests[1]?.query.get('k')).toBe('The Hobbit JRR Tolkien');
    expect(site.requests[1]?.headers.cookie).toBe('session-id=123-456');
    expect(site.requests[1]?.headers['accept-language']).toBe('en-GB,en;q=0.9');
    expect(site.requests[1]?.headers['user-agent']).toMatch(/Mozilla/);
    expect(candidates.map((c) => c.asin)).toEqual(['0261102214']);
  });

  it('keeps the search results beyond the first three as light candidates without fetching their pages', async () => {
    const items = ['A', 'B', 'C', 'D', 'E'].map((l, i) => ({ asin: `00000000${i}${l}`, title: `Book ${l}`, author: 'Someone', rating: '3.9', ratings: '1,002' }));
    site.on('GET', '/s', { html: amazonSearchPage(items) });
    site.on('GET', /^\/dp\//, (req) => ({ html: amazonProductPage({ ...HOBBIT, title: `Full ${req.path.slice(4)}`, reviews: [] }) }));
    const found = await amazonProvider.search({ title: 'Book', limit: 10 }, testContext(amazonProvider, site));
    expect(found).toHaveLength(5);
    expect(site.requests.filter((r) => r.path.startsWith('/dp/'))).toHaveLength(3);
    expect(found[3]).toEqual({
      provider: 'Amazon',
      providerItemId: '000000003D',
      asin: '000000003D',
      title: 'Book D',
      authors: ['Someone'],
      thumbnailUrl: 'https://m.media-amazon.com/images/I/71img3.jpg',
      amazonRating: 3.9,
      amazonReviewCount: 1002,
      externalUrl: `${site.url}/dp/000000003D`,
    });
  });

  it('goes straight to the product page when the book already has an ASIN', async () => {
    site.on('GET', '/dp/B00KNOWN12', { html: amazonProductPage({ ...HOBBIT, reviews: [] }) });
    const found = await amazonProvider.search({ isbn: '9780547928227', knownIds: { asin: 'b00known12' } }, testContext(amazonProvider, site));
    expect(found.map((c) => c.asin)).toEqual(['B00KNOWN12']);
    expect(site.requests.map((r) => r.path)).toEqual(['/dp/B00KNOWN12']);
  });

  it('answers a robot check with BLOCKED, whether it comes as 200 or 503', async () => {
    site.on('GET', '/s', { html: amazonCaptchaPage() });
    site.on('GET', '/dp/054792822X', { status: 503, html: amazonCaptchaPage() });
    const ctx = testContext(amazonProvider, site);
    await expect(amazonProvider.search({ isbn: '9780547928227' }, ctx)).rejects.toMatchObject({ code: 'BLOCKED', message: expect.stringMatching(/^Amazon: .*robot check/) });
    await expect(amazonProvider.details?.('054792822X', ctx)).rejects.toMatchObject({ code: 'BLOCKED' });
  });

  it('answers a page without the expected markers with CHANGED, and an unknown item with null', async () => {
    site.on('GET', '/s', { html: '<html><body><div id="search"><div class="s-main-slot">new layout</div></div></body></html>' });
    site.on('GET', '/dp/0547928227', { html: '<html><body><div id="dp"><h2>Something else</h2></div></body></html>' });
    const ctx = testContext(amazonProvider, site);
    const error = await amazonProvider.search({ title: 'The Hobbit' }, ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: 'CHANGED', message: expect.stringContaining('no result list') });
    await expect(amazonProvider.details?.('0547928227', ctx)).rejects.toMatchObject({ code: 'CHANGED' });
    await expect(amazonProvider.details?.('0000000000', ctx)).resolves.toBeNull();
    await expect(amazonProvider.details?.('not-an-asin', ctx)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('uses the store of the domain setting and full-size images', () => {
    expect(amazonProvider.defaultBaseUrl({ domain: 'de' })).toBe('https://www.amazon.de');
    expect(amazonProvider.defaultBaseUrl({ domain: 'evil.example/x' })).toBe('https://www.amazon.com');
    expect(fullSizeImage('https://m.media-amazon.com/images/I/71abc._AC_UY218_.jpg')).toBe('https://m.media-amazon.com/images/I/71abc.jpg');
  });
});
