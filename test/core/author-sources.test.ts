// The Audnexus author source on its own: parsing its answers and turning its failures into ProviderErrors.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAuthorSourceContext } from '../../src/core/authors/author-source.ts';
import { audnexusSource, parseAudnexusAuthor, parseAudnexusSearch } from '../../src/core/authors/sources/audnexus.ts';
import { ProviderError } from '../../src/core/metadata/provider.ts';
import { createHttpClient } from '../../src/core/net/http-client.ts';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.ts';

let site: FakeSite;
const context = (overrides: { timeoutMs?: number } = {}) =>
  createAuthorSourceContext(audnexusSource, { http: createHttpClient({ allowPrivateHosts: ['127.0.0.1'] }), baseUrls: { Audnexus: site.url }, minIntervalMs: 0, ...overrides });

beforeAll(async () => {
  site = await startFakeSite();
});
beforeEach(() => site.reset());
afterAll(async () => site?.close());

describe('parsing Audnexus answers', () => {
  it('reads an author record, keeping only web image URLs and dropping blanks', () => {
    expect(parseAudnexusAuthor({ asin: 'B000APZGGS', name: 'Stephen King', description: 'Horror author', image: 'https://img.example/king.jpg', genres: [] })).toEqual({
      source: 'AUDNEXUS',
      asin: 'B000APZGGS',
      name: 'Stephen King',
      description: 'Horror author',
      imageUrl: 'https://img.example/king.jpg',
    });
    expect(parseAudnexusAuthor({ asin: 'B1', name: ' ', description: null, image: 'javascript:alert(1)' })).toEqual({ source: 'AUDNEXUS', asin: 'B1' });
    expect(parseAudnexusAuthor({ name: 'No ASIN' })).toBeUndefined();
    expect(parseAudnexusAuthor('nonsense')).toBeUndefined();
  });

  it('lists each ASIN of a search once, in order; a non-list is a changed API', () => {
    expect(parseAudnexusSearch([{ asin: 'A1', name: 'One' }, { asin: 'A1', name: 'One again' }, { name: 'no asin' }, { asin: 'A2', name: 'Two' }]).map((r) => r.asin)).toEqual(['A1', 'A2']);
    expect(parseAudnexusSearch(undefined)).toEqual([]);
    expect(() => parseAudnexusSearch({ authors: [] })).toThrow(expect.objectContaining({ code: 'CHANGED' }));
  });
});

describe('asking Audnexus', () => {
  it('takes 400 and 404 as "no such author", and other failures as ProviderErrors', async () => {
    site.on('GET', '/authors/B000MISSING', { status: 404, json: { error: 'Author not found' } });
    site.on('GET', '/authors/B000BADASIN', { status: 400, json: { error: 'Bad ASIN' } });
    expect(await audnexusSource.byAsin('B000MISSING', 'us', context())).toBeNull();
    expect(await audnexusSource.byAsin('B000BADASIN', 'us', context())).toBeNull();
    site.on('GET', '/authors', (req) => (req.query.get('name') === 'slow' ? { delayMs: 500, json: [] } : { status: 429, headers: { 'retry-after': '30' }, json: {} }));
    await expect(audnexusSource.search('anyone', 'us', context())).rejects.toMatchObject({ code: 'RATE_LIMITED', message: 'Audnexus: asked to slow down (HTTP 429); retry after 30 s' });
    const slow = await audnexusSource.search('slow', 'us', context({ timeoutMs: 100 })).catch((e: unknown) => e);
    expect(slow).toBeInstanceOf(ProviderError);
    expect(slow).toMatchObject({ code: 'TIMEOUT' });
  });

  it('refuses an HTML page where JSON belongs', async () => {
    site.on('GET', '/authors', { html: '<html>Are you a robot?</html>' });
    await expect(audnexusSource.quickSearch('anyone', 'us', context())).rejects.toMatchObject({ code: 'BLOCKED' });
  });

  it('never reaches a private address it was not allowed', async () => {
    const strict = createAuthorSourceContext(audnexusSource, { http: createHttpClient(), baseUrls: { Audnexus: site.url }, minIntervalMs: 0 });
    await expect(audnexusSource.byAsin('B000APZGGS', 'us', strict)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(site.requests).toEqual([]);
  });
});
