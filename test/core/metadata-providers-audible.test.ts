import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { audibleProvider } from '../../src/core/metadata/providers/audible.ts';
import { searchProvider } from '../../src/core/metadata/search.ts';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.ts';
import { ALL_ON, testContext, testRuntime } from '../helpers/provider-harness.ts';
import { audibleProduct } from '../helpers/provider-pages.ts';

const FELLOWSHIP = audibleProduct({
  asin: '1705047572',
  title: 'The Fellowship of the Ring',
  authors: ['J. R. R. Tolkien'],
  narrators: ['Andy Serkis'],
  minutes: 1358,
  series: { title: 'The Lord of the Rings', sequence: '1' },
});

describe('Audible provider', () => {
  let site: FakeSite;
  beforeAll(async () => {
    site = await startFakeSite();
  });
  afterAll(async () => site.close());
  beforeEach(() => site.reset());

  it('asks nothing for an ISBN alone, then searches the catalog by title and author', async () => {
    site.on('GET', '/1.0/catalog/products', {
      json: {
        product_filters: [],
        products: [FELLOWSHIP, audibleProduct({ asin: 'B0PODCAST1', title: 'Tolkien Talk', authors: ['Host'], narrators: [], contentType: 'Podcast' })],
        response_groups: ['always-returned', 'contributors'],
        total_results: 2,
      },
    });
    const { candidates, searchedBy } = await searchProvider(audibleProvider, { isbn: '9780547928227', title: 'The Fellowship of the Ring', author: 'J.R.R. Tolkien' }, testRuntime(site));
    expect(searchedBy).toBe('title');
    expect(site.requests).toHaveLength(1);
    const query = site.requests[0]?.query;
    expect(query?.get('keywords')).toBe('The Fellowship of the Ring JRR Tolkien');
    expect(query?.get('response_groups')).toContain('contributors');
    expect(query?.get('response_groups')).toContain('series');
    expect(query?.get('products_sort_by')).toBe('Relevance');
    // The podcast is not a book.
    expect(candidates).toHaveLength(1);
    expect(candidates[0]).toMatchObject({
      provider: 'Audible',
      providerItemId: '1705047572',
      audibleId: '1705047572',
      asin: '1705047572',
      title: 'The Fellowship of the Ring',
      authors: ['J. R. R. Tolkien'],
      narrator: 'Andy Serkis',
      abridged: false,
      seriesName: 'The Lord of the Rings',
      seriesNumber: 1,
      publisher: 'Recorded Books',
      publishedDate: '2021-09-16',
      language: 'en',
      categories: ['Science Fiction & Fantasy', 'Fantasy'],
      thumbnailUrl: 'https://m.media-amazon.com/images/I/1705047572._SL1000_.jpg',
      audibleRating: 4.923878299988162,
      audibleReviewCount: 2955,
      externalUrl: 'https://www.audible.com/pd/1705047572',
      audiobookMetadata: { durationSeconds: 81480 },
    });
    expect(candidates[0]?.description).toBe('Brand-new unabridged recording.\n\nSecond paragraph.');
  });

  it('looks up a known ASIN, on the store of the domain setting', async () => {
    site.on('GET', '/1.0/catalog/products/1705047572', { json: { product: FELLOWSHIP, response_groups: ['always-returned'] } });
    const ctx = testContext(audibleProvider, site, { providerSettings: { ...ALL_ON, audible: { enabled: true, domain: 'co.uk' } } });
    const found = await audibleProvider.search({ title: 'anything', knownIds: { audibleId: '1705047572' } }, ctx);
    expect(found.map((c) => c.audibleId)).toEqual(['1705047572']);
    expect(found[0]?.externalUrl).toBe('https://www.audible.co.uk/pd/1705047572');
    expect(site.requests[0]?.query.get('image_sizes')).toBe('500,1000');
    expect(audibleProvider.defaultBaseUrl({ domain: 'de' })).toBe('https://api.audible.de');
    expect(audibleProvider.defaultBaseUrl({ domain: 'nowhere' })).toBe('https://api.audible.com');
  });

  it('answers an unknown ASIN (a product with only its asin) with null', async () => {
    site.on('GET', '/1.0/catalog/products/B000000000', { json: { product: { asin: 'B000000000' }, response_groups: ['always-returned'] } });
    await expect(audibleProvider.details?.('B000000000', testContext(audibleProvider, site))).resolves.toBeNull();
  });

  it('reports an answer without products as CHANGED and an HTML page as BLOCKED', async () => {
    site.on('GET', '/1.0/catalog/products', (req) => (req.query.get('keywords') === 'html' ? { html: '<html><body>Sorry, something went wrong</body></html>' } : { json: { message: 'Unsupported' } }));
    const ctx = testContext(audibleProvider, site);
    await expect(audibleProvider.search({ title: 'changed' }, ctx)).rejects.toMatchObject({ code: 'CHANGED', message: expect.stringMatching(/^Audible: .*products/) });
    await expect(audibleProvider.search({ title: 'html' }, ctx)).rejects.toMatchObject({ code: 'BLOCKED' });
  });
});
