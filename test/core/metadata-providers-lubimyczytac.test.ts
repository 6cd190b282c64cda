import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { lubimyczytacProvider, parseCykl } from '../../src/core/metadata/providers/lubimyczytac.ts';
import { searchProvider } from '../../src/core/metadata/search.ts';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.ts';
import { testContext, testRuntime } from '../helpers/provider-harness.ts';
import { lubimyczytacBookPage, lubimyczytacSearchPage, type LubimyczytacBook } from '../helpers/provider-pages.ts';

const WIEDZMIN: LubimyczytacBook = {
  id: '4804',
  title: 'Ostatnie życzenie',
  authors: ['Andrzej Sapkowski'],
  isbn: '9788375780635',
  date: '2014-09-25',
  pages: '332',
  rating: '7.90',
  cykl: 'Wiedźmin (tom 1)',
  publisher: 'SuperNOWA',
  description: 'Geralt z Rivii jest wiedźminem.<br /><br />Zabija potwory za pieniądze.',
  tags: ['fantasy', 'wiedźmin'],
  reviews: [
    { author: 'Czytelnik', date: '2016-06-23 19:38:03.856185', body: 'Świetne opowiadania.', rating: '9' },
    { author: 'Krytyk', date: '2018-01-05 08:00:00', body: 'Niezłe.', rating: '6' },
  ],
};

describe('Lubimyczytac provider', () => {
  let site: FakeSite;
  beforeAll(async () => {
    site = await startFakeSite();
  });
  afterAll(async () => site.close());
  beforeEach(() => site.reset());

  it('searches by ISBN and keeps only the editions whose page carries that ISBN', async () => {
    site.on('GET', '/szukaj/ksiazki', {
      html: lubimyczytacSearchPage([
        { id: '4804', title: 'Ostatnie życzenie', author: 'Andrzej Sapkowski' },
        { id: '5000', title: 'Ostatnie życzenie (wyd. ilustrowane)', author: 'Andrzej Sapkowski' },
      ]),
    });
    site.on('GET', '/ksiazka/4804', { html: lubimyczytacBookPage(WIEDZMIN) });
    site.on('GET', '/ksiazka/5000', { html: lubimyczytacBookPage({ ...WIEDZMIN, id: '5000', isbn: '9788375780000' }) });
    const { candidates, searchedBy } = await searchProvider(lubimyczytacProvider, { isbn: '978-83-7578-063-5', title: 'Ostatnie życzenie' }, testRuntime(site));
    expect(searchedBy).toBe('isbn');
    expect(site.requests[0]?.query.get('phrase')).toBe('9788375780635');
    // The promoted card outside the result list is never followed.
    expect(site.requests.some((r) => r.path.includes('999999'))).toBe(false);
    expect(candidates).toHaveLength(1);
    expect(candidates[0]).toMatchObject({
      provider: 'Lubimyczytac',
      providerItemId: '4804',
      lubimyczytacId: '4804',
      title: 'Ostatnie życzenie',
      authors: ['Andrzej Sapkowski'],
      publisher: 'SuperNOWA',
      publishedDate: '2014-09-25',
      pageCount: 332,
      language: 'pl',
      isbn13: '9788375780635',
      seriesName: 'Wiedźmin',
      seriesNumber: 1,
      categories: ['Klasyka'],
      tags: ['fantasy', 'wiedźmin'],
      thumbnailUrl: 'https://s.lubimyczytac.pl/upload/books/4804/cover-352x500.jpg',
      lubimyczytacRating: 3.95,
      externalUrl: 'https://lubimyczytac.pl/ksiazka/4804/slug',
    });
    expect(candidates[0]?.description).toBe('Geralt z Rivii jest wiedźminem.\n\nZabija potwory za pieniądze.');
    expect(candidates[0]?.bookReviews).toEqual([
      { metadataProvider: 'Lubimyczytac', reviewerName: 'Czytelnik', rating: 4.5, date: '2016-06-23T00:00:00Z', body: 'Świetne opowiadania.' },
      { metadataProvider: 'Lubimyczytac', reviewerName: 'Krytyk', rating: 3, date: '2018-01-05T00:00:00Z', body: 'Niezłe.' },
    ]);
  });

  it('searches by title with the author as its own parameter; an empty result page is no error', async () => {
    site.on('GET', '/szukaj/ksiazki', (req) =>
      req.query.get('phrase') === '9788300000003'
        ? { html: lubimyczytacSearchPage([]) }
        : { html: lubimyczytacSearchPage([{ id: '4804', title: 'Ostatnie życzenie', author: 'Andrzej Sapkowski', rating: '7,9' }]) },
    );
    site.on('GET', '/ksiazka/4804', { html: lubimyczytacBookPage(WIEDZMIN) });
    const { candidates, searchedBy } = await searchProvider(lubimyczytacProvider, { isbn: '9788300000003', title: 'Ostatnie życzenie', author: 'Andrzej Sapkowski' }, testRuntime(site));
    expect(searchedBy).toBe('title');
    const search = site.requests[1];
    expect(search?.query.get('phrase')).toBe('Ostatnie życzenie');
    expect(search?.query.get('author')).toBe('Andrzej Sapkowski');
    expect(candidates.map((c) => c.lubimyczytacId)).toEqual(['4804']);
  });

  it('reads "Cykl" lines with and without a volume', () => {
    expect(parseCykl('Cykl: Wiedźmin (tom 2)')).toEqual({ seriesName: 'Wiedźmin', seriesNumber: 2 });
    expect(parseCykl('Saga o ludziach lodu (tom 1,5)')).toEqual({ seriesName: 'Saga o ludziach lodu', seriesNumber: 1.5 });
    expect(parseCykl('Kroniki')).toEqual({ seriesName: 'Kroniki' });
  });

  it('reports a Cloudflare challenge as BLOCKED and a foreign page as CHANGED', async () => {
    site.on('GET', '/szukaj/ksiazki', { status: 503, html: '<html><head><title>Just a moment...</title></head><body><div id="cf-chl-widget">Checking your browser</div></body></html>' });
    site.on('GET', '/ksiazka/1', { html: '<html><body><main>Nowy wygląd strony</main></body></html>' });
    const ctx = testContext(lubimyczytacProvider, site);
    await expect(lubimyczytacProvider.search({ title: 'x' }, ctx)).rejects.toMatchObject({ code: 'BLOCKED', message: expect.stringMatching(/^Lubimyczytac: /) });
    await expect(lubimyczytacProvider.details?.('1', ctx)).rejects.toMatchObject({ code: 'CHANGED' });
  });
});
