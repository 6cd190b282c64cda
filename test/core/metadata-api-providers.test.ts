// The API providers (Google Books, Open Library, Hardcover, Comic Vine) against a fake server answering in each API's
// documented shapes; the search order (ISBN, then title and author); and how the shared request pipeline reports
// refusals, throttling, slowness and answers that changed shape.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createProviderContext, type ProviderRuntime } from '../../src/core/metadata/provider-context.ts';
import { ProviderError, type MetadataProvider } from '../../src/core/metadata/provider.ts';
import { comicvineProvider } from '../../src/core/metadata/providers/comicvine.ts';
import { googleProvider } from '../../src/core/metadata/providers/google.ts';
import { hardcoverProvider } from '../../src/core/metadata/providers/hardcover.ts';
import { openLibraryProvider } from '../../src/core/metadata/providers/open-library.ts';
import { createRateLimiter } from '../../src/core/metadata/rate-limiter.ts';
import { bestCandidate, providerDetails, searchProvider, searchProviders, titleSimilarity } from '../../src/core/metadata/search.ts';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.ts';
import { ALL_ON, departureRecordingHttp, SPACED, testRuntime } from '../helpers/provider-harness.ts';

const SETTINGS = { ...ALL_ON, hardcover: { enabled: true, apiKey: 'hc-token' }, comicvine: { enabled: true, apiKey: 'cv-key' }, google: { enabled: true, language: null, apiKey: 'g-key' } };

let site: FakeSite;
let runtime: ProviderRuntime;
const ctxFor = (provider: MetadataProvider, overrides: Partial<ProviderRuntime> = {}) => createProviderContext(provider, { ...runtime, ...overrides });

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ProviderError)) throw new Error(`expected a ProviderError, got ${String(error)}`);
  return error;
}

beforeAll(async () => {
  site = await startFakeSite();
  runtime = testRuntime(site, { providerSettings: SETTINGS });
});
afterAll(async () => site.close());
beforeEach(() => site.reset());

// https://developers.google.com/books/docs/v1/reference/volumes
const DUNE_VOLUME = {
  kind: 'books#volume',
  id: 'B1hSG45JCX4C',
  volumeInfo: {
    title: 'Dune',
    subtitle: 'Deluxe Edition',
    authors: ['Frank Herbert'],
    publisher: 'Penguin',
    publishedDate: '2005-08-02',
    description: '<p>Set on the desert planet <b>Arrakis</b>, Dune is the story&nbsp;of Paul.</p><p>Second paragraph.</p>',
    industryIdentifiers: [
      { type: 'ISBN_10', identifier: '0441013597' },
      { type: 'ISBN_13', identifier: '9780441013593' },
    ],
    pageCount: 896,
    printedPageCount: 544,
    printType: 'BOOK',
    categories: ['Fiction / Science Fiction / General', 'Fiction / Classics'],
    averageRating: 4,
    ratingsCount: 31,
    language: 'en',
    imageLinks: {
      smallThumbnail: 'http://books.google.com/books/content?id=B1hSG45JCX4C&printsec=frontcover&img=1&zoom=5&edge=curl&source=gbs_api',
      thumbnail: 'http://books.google.com/books/content?id=B1hSG45JCX4C&printsec=frontcover&img=1&zoom=1&edge=curl&source=gbs_api',
    },
    infoLink: 'http://books.google.com/books?id=B1hSG45JCX4C&dq=isbn:9780441013593',
    canonicalVolumeLink: 'https://books.google.com/books/about/Dune.html?id=B1hSG45JCX4C',
  },
};

describe('Google Books', () => {
  it('searches volumes by isbn: with the API key and reads a volume', async () => {
    site.on('GET', '/volumes', { json: { kind: 'books#volumes', totalItems: 1, items: [DUNE_VOLUME] } });
    const found = await googleProvider.search({ isbn: '978-0-441-01359-3' }, ctxFor(googleProvider));
    expect(site.requests[0]?.query.get('q')).toBe('isbn:9780441013593');
    expect(site.requests[0]?.query.get('key')).toBe('g-key');
    expect(found).toEqual([
      {
        provider: 'Google',
        providerItemId: 'B1hSG45JCX4C',
        googleId: 'B1hSG45JCX4C',
        title: 'Dune',
        subtitle: 'Deluxe Edition',
        authors: ['Frank Herbert'],
        publisher: 'Penguin',
        publishedDate: '2005-08-02',
        description: 'Set on the desert planet Arrakis, Dune is the story of Paul.\n\nSecond paragraph.',
        isbn13: '9780441013593',
        isbn10: '0441013597',
        pageCount: 544,
        categories: ['Fiction', 'Science Fiction', 'General', 'Classics'],
        language: 'en',
        thumbnailUrl: 'https://books.google.com/books/content?id=B1hSG45JCX4C&printsec=frontcover&img=1&zoom=1&source=gbs_api',
        externalUrl: 'https://books.google.com/books/about/Dune.html?id=B1hSG45JCX4C',
      },
    ]);
  });

  it('searches by intitle:/inauthor: and fetches one volume by id', async () => {
    site.on('GET', '/volumes', { json: { kind: 'books#volumes', totalItems: 1, items: [DUNE_VOLUME] } });
    site.on('GET', '/volumes/B1hSG45JCX4C', { json: DUNE_VOLUME });
    await googleProvider.search({ title: 'Dune: Deluxe', author: 'Frank Herbert' }, ctxFor(googleProvider));
    expect(site.requests[0]?.query.get('q')).toBe('intitle:Dune Deluxe inauthor:Frank Herbert');
    const one = await googleProvider.details?.('B1hSG45JCX4C', ctxFor(googleProvider));
    expect(one).toMatchObject({ googleId: 'B1hSG45JCX4C', title: 'Dune' });
  });

  it('answers [] for no items, and CHANGED when items is not a list', async () => {
    site.on('GET', '/volumes', { json: { kind: 'books#volumes', totalItems: 0 } });
    expect(await googleProvider.search({ isbn: '9780000000002' }, ctxFor(googleProvider))).toEqual([]);
    site.reset();
    site.on('GET', '/volumes', { json: { items: { id: 'x' } } });
    expect((await failure(googleProvider.search({ isbn: '9780000000002' }, ctxFor(googleProvider)))).code).toBe('CHANGED');
  });
});

describe('Open Library', () => {
  // https://openlibrary.org/dev/docs/api/books — /isbn/{isbn}.json redirects to the edition.
  const edition = {
    key: '/books/OL26242482M',
    title: 'Dune',
    authors: [{ key: '/authors/OL79034A' }],
    publishers: ['Ace Books'],
    publish_date: 'Aug 02, 2005',
    number_of_pages: 528,
    isbn_10: ['0441013597'],
    isbn_13: ['9780441013593'],
    covers: [12345],
    languages: [{ key: '/languages/eng' }],
    works: [{ key: '/works/OL893415W' }],
    series: ['Dune Chronicles #1'],
    identifiers: { goodreads: ['44767458'] },
  };
  const work = { key: '/works/OL893415W', title: 'Dune', description: { type: '/type/text', value: 'Paul Atreides on Arrakis.' }, subjects: ['Science fiction', 'Deserts'] };

  it('reads an edition by ISBN (following the redirect), with its work and authors', async () => {
    site.on('GET', '/isbn/9780441013593.json', { status: 302, redirect: '/books/OL26242482M.json' });
    site.on('GET', '/books/OL26242482M.json', { json: edition });
    site.on('GET', '/works/OL893415W.json', { json: work });
    site.on('GET', '/authors/OL79034A.json', { json: { key: '/authors/OL79034A', name: 'Frank Herbert' } });
    const [found] = await openLibraryProvider.search({ isbn: '9780441013593' }, ctxFor(openLibraryProvider));
    expect(found).toEqual({
      provider: 'OpenLibrary',
      providerItemId: 'OL26242482M',
      title: 'Dune',
      authors: ['Frank Herbert'],
      publisher: 'Ace Books',
      publishedDate: '2005-08-02',
      description: 'Paul Atreides on Arrakis.',
      isbn13: '9780441013593',
      isbn10: '0441013597',
      pageCount: 528,
      language: 'en',
      categories: ['Science fiction', 'Deserts'],
      goodreadsId: '44767458',
      thumbnailUrl: 'https://covers.openlibrary.org/b/id/12345-L.jpg',
      externalUrl: 'https://openlibrary.org/works/OL893415W',
      seriesName: 'Dune Chronicles',
      seriesNumber: 1,
    });
  });

  it('answers [] for an ISBN it does not know, and searches search.json by title and author', async () => {
    expect(await openLibraryProvider.search({ isbn: '9780000000002' }, ctxFor(openLibraryProvider))).toEqual([]);
    site.on('GET', '/search.json', {
      json: {
        numFound: 1,
        start: 0,
        docs: [{ key: '/works/OL893415W', title: 'Dune', author_name: ['Frank Herbert'], first_publish_year: 1965, publisher: ['Chilton Books'], isbn: ['9780441013593', '0441013597'], number_of_pages_median: 612, cover_i: 11481354, language: ['eng', 'spa'], id_goodreads: ['234225'], ratings_average: 4.2 }],
      },
    });
    const [found] = await openLibraryProvider.search({ title: 'Dune', author: 'Frank Herbert' }, ctxFor(openLibraryProvider));
    const asked = site.requests.find((r) => r.path === '/search.json');
    expect(asked?.query.get('title')).toBe('Dune');
    expect(asked?.query.get('author')).toBe('Frank Herbert');
    expect(asked?.query.get('fields')).toContain('author_name');
    expect(found).toMatchObject({ providerItemId: 'OL893415W', authors: ['Frank Herbert'], publishedDate: '1965-01-01', isbn13: '9780441013593', isbn10: '0441013597', pageCount: 612, language: 'en', goodreadsId: '234225', thumbnailUrl: 'https://covers.openlibrary.org/b/id/11481354-L.jpg' });
  });

  it('gives the details of a work', async () => {
    site.on('GET', '/works/OL893415W.json', { json: { ...work, authors: [{ author: { key: '/authors/OL79034A' }, type: { key: '/type/author_role' } }], covers: [7] } });
    site.on('GET', '/authors/OL79034A.json', { json: { name: 'Frank Herbert' } });
    expect(await openLibraryProvider.details?.('OL893415W', ctxFor(openLibraryProvider))).toMatchObject({ title: 'Dune', authors: ['Frank Herbert'], description: 'Paul Atreides on Arrakis.', thumbnailUrl: 'https://covers.openlibrary.org/b/id/7-L.jpg' });
  });
});

describe('Hardcover', () => {
  const book = {
    id: 312460,
    slug: 'dune',
    title: 'Dune',
    subtitle: null,
    description: 'A desert planet.',
    rating: 4.3456,
    ratings_count: 5012,
    pages: 617,
    release_date: '1965-08-01',
    cached_contributors: [{ author: { name: 'Frank Herbert' }, contribution: null }, { author: { name: 'John Schoenherr' }, contribution: 'Illustrator' }],
    cached_tags: { Genre: [{ tag: 'Science Fiction', count: 90 }, { tag: 'Classics', count: 40 }], Mood: [{ tag: 'adventurous', count: 12 }], Tag: [{ tag: 'Space Opera', count: 5 }] },
    image: { url: 'https://assets.hardcover.app/dune.jpg' },
    featured_book_series: { position: 1, series: { name: 'Dune', primary_books_count: 6 } },
    editions: [{ id: 1, title: 'Dune', pages: 896, release_date: '2019-10-01', isbn_10: '0593099320', isbn_13: '9780593099322', cached_contributors: [{ author: { name: 'Frank Herbert' }, contribution: null }], image: { url: 'https://assets.hardcover.app/dune-ed.jpg' }, publisher: { name: 'Ace' }, language: { code2: 'en' } }],
  };

  it('asks the GraphQL endpoint with the bearer token and reads books by ISBN', async () => {
    site.on('POST', '/graphql', { json: { data: { books: [book] } } });
    const [found] = await hardcoverProvider.search({ isbn: '9780593099322' }, ctxFor(hardcoverProvider));
    const asked = site.requests[0];
    expect(asked?.headers.authorization).toBe('Bearer hc-token');
    const body = JSON.parse(asked?.body ?? '{}') as { query: string; variables: Record<string, unknown> };
    expect(body.query).toContain('isbn_13: {_eq: $isbn}');
    expect(body.variables).toEqual({ isbn: '9780593099322' });
    expect(found).toEqual({
      provider: 'Hardcover',
      providerItemId: '312460',
      hardcoverId: 'dune',
      hardcoverBookId: '312460',
      title: 'Dune',
      authors: ['Frank Herbert'],
      description: 'A desert planet.',
      publisher: 'Ace',
      publishedDate: '2019-10-01',
      pageCount: 896,
      isbn13: '9780593099322',
      isbn10: '0593099320',
      language: 'en',
      categories: ['Science Fiction', 'Classics'],
      moods: ['adventurous'],
      tags: ['Space Opera'],
      hardcoverRating: 4.35,
      hardcoverReviewCount: 5012,
      thumbnailUrl: 'https://assets.hardcover.app/dune-ed.jpg',
      externalUrl: 'https://hardcover.app/books/dune',
      seriesName: 'Dune',
      seriesNumber: 1,
      seriesTotal: 6,
    });
  });

  it('reads the search index for a title', async () => {
    site.on('POST', '/graphql', {
      json: { data: { search: { results: { found: 1, hits: [{ document: { id: '312460', slug: 'dune', title: 'Dune', author_names: ['Frank Herbert'], isbns: ['9780441013593'], rating: 4.3, ratings_count: 10, release_year: 1965, genres: ['Fiction'], moods: ['dark'], image: { url: 'https://x/y.jpg' }, featured_series: { position: 1, series: { name: 'Dune' } } } }] } } } },
    });
    const [found] = await hardcoverProvider.search({ title: 'Dune', author: 'Frank Herbert' }, ctxFor(hardcoverProvider));
    expect((JSON.parse(site.requests[0]?.body ?? '{}') as { variables: unknown }).variables).toEqual({ q: 'Dune Frank Herbert', limit: 10 });
    expect(found).toMatchObject({ hardcoverBookId: '312460', hardcoverId: 'dune', isbn13: '9780441013593', publishedDate: '1965-01-01', categories: ['Fiction'], moods: ['dark'], seriesName: 'Dune', seriesNumber: 1 });
  });

  it('turns a refused token into NOT_CONFIGURED and a missing key into a refusal before any request', async () => {
    site.on('POST', '/graphql', { json: { errors: [{ message: 'Unable to verify token' }] } });
    expect((await failure(hardcoverProvider.search({ isbn: '9780593099322' }, ctxFor(hardcoverProvider)))).code).toBe('NOT_CONFIGURED');
    const noKey = { ...runtime, providerSettings: { ...SETTINGS, hardcover: { enabled: true, apiKey: null } } };
    site.reset();
    const refused = await failure(searchProvider(hardcoverProvider, { isbn: '9780593099322' }, noKey));
    expect(refused.code).toBe('NOT_CONFIGURED');
    expect(refused.message).toBe('Hardcover: needs "apiKey" in the metadata provider settings');
    expect(site.requests).toHaveLength(0);
  });
});

describe('Comic Vine', () => {
  const issue = {
    resource_type: 'issue',
    id: 317385,
    name: 'Chapter One',
    issue_number: '1',
    volume: { id: 45589, name: 'Saga' },
    cover_date: '2012-03-31',
    store_date: '2012-03-14',
    description: '<p>From the creators.</p>',
    image: { original_url: 'https://comicvine.gamespot.com/a/uploads/original/saga1.jpg', medium_url: 'https://comicvine.gamespot.com/a/uploads/medium/saga1.jpg' },
    site_detail_url: 'https://comicvine.gamespot.com/saga-1-chapter-one/4000-317385/',
  };

  it('searches issues and volumes with the API key, the issue asked for first', async () => {
    site.on('GET', '/search/', {
      json: {
        error: 'OK', limit: 10, offset: 0, number_of_page_results: 3, number_of_total_results: 3, status_code: 1, version: '1.0',
        results: [
          { resource_type: 'volume', id: 45589, name: 'Saga', start_year: '2012', count_of_issues: 66, publisher: { name: 'Image' } },
          { ...issue, id: 1, issue_number: '2', name: 'Chapter Two' },
          issue,
        ],
      },
    });
    const found = await comicvineProvider.search({ title: 'Saga #1' }, ctxFor(comicvineProvider));
    const asked = site.requests[0];
    expect(asked?.query.get('api_key')).toBe('cv-key');
    expect(asked?.query.get('format')).toBe('json');
    expect(asked?.query.get('resources')).toBe('issue,volume');
    expect(found.map((c) => c.comicvineId)).toEqual(['4000-317385', '4000-1', '4050-45589']);
    expect(found[0]).toMatchObject({ title: 'Saga #1: Chapter One', seriesName: 'Saga', seriesNumber: 1, publishedDate: '2012-03-14', description: 'From the creators.', thumbnailUrl: 'https://comicvine.gamespot.com/a/uploads/original/saga1.jpg' });
    expect(found[2]).toMatchObject({ title: 'Saga', publisher: 'Image', seriesTotal: 66, publishedDate: '2012-01-01' });
    expect(await comicvineProvider.search({ isbn: '9781607066019', title: 'Saga' }, ctxFor(comicvineProvider))).toEqual([]);
  });

  it('gives an issue with its credits and its volume', async () => {
    site.on('GET', '/issue/4000-317385/', {
      json: {
        error: 'OK', status_code: 1,
        results: {
          ...issue,
          person_credits: [{ id: 1, name: 'Brian K. Vaughan', role: 'writer' }, { id: 2, name: 'Fiona Staples', role: 'artist, cover' }, { id: 3, name: 'Fonografiks', role: 'letterer' }],
          character_credits: [{ id: 9, name: 'Alana' }, { id: 10, name: 'Marko' }],
          story_arc_credits: [{ id: 5, name: 'Saga Book One' }],
        },
      },
    });
    site.on('GET', '/volume/4050-45589/', { json: { error: 'OK', status_code: 1, results: { id: 45589, name: 'Saga', count_of_issues: 66, publisher: { name: 'Image' } } } });
    const found = await comicvineProvider.details?.('4000-317385', ctxFor(comicvineProvider));
    expect(found).toMatchObject({ authors: ['Brian K. Vaughan'], publisher: 'Image', seriesTotal: 66 });
    expect(found?.comicMetadata).toMatchObject({ issueNumber: '1', volumeName: 'Saga', storyArc: 'Saga Book One', pencillers: ['Fiona Staples'], coverArtists: ['Fiona Staples'], letterers: ['Fonografiks'], characters: ['Alana', 'Marko'] });
  });

  it('reads its own status codes: 100 bad key, 101 not found, 107 rate limit', async () => {
    let code = 100;
    site.on('GET', /.*/, () => ({ json: { error: code === 100 ? 'Invalid API Key' : code === 101 ? 'Object Not Found' : 'Rate limit exceeded', status_code: code, results: [] } }));
    expect((await failure(comicvineProvider.search({ title: 'Saga' }, ctxFor(comicvineProvider)))).code).toBe('NOT_CONFIGURED');
    code = 101;
    expect(await providerDetails('Comicvine', '4000-1', runtime)).toBeNull();
    code = 107;
    expect((await failure(comicvineProvider.search({ title: 'Saga' }, ctxFor(comicvineProvider)))).code).toBe('RATE_LIMITED');
  });
});

describe('the search order', () => {
  it('asks by ISBN first and by title and author only when the ISBN found nothing', async () => {
    site.on('GET', '/volumes', (r) => ({ json: r.query.get('q')?.startsWith('isbn:') ? { totalItems: 0 } : { totalItems: 1, items: [DUNE_VOLUME] } }));
    const { candidates, searchedBy } = await searchProvider(googleProvider, { isbn: '9780441013593', title: 'Dune', author: 'Frank Herbert' }, runtime);
    expect(site.requests.map((r) => r.query.get('q'))).toEqual(['isbn:9780441013593', 'intitle:Dune inauthor:Frank Herbert']);
    expect(searchedBy).toBe('title');
    expect(candidates).toHaveLength(1);
  });

  it('stops at the ISBN when it found the book', async () => {
    site.on('GET', '/volumes', { json: { totalItems: 1, items: [DUNE_VOLUME] } });
    const { searchedBy } = await searchProvider(googleProvider, { isbn: '9780441013593', title: 'Dune' }, runtime);
    expect(searchedBy).toBe('isbn');
    expect(site.requests).toHaveLength(1);
  });

  it('takes a title hit only when its title and authors fit the book', () => {
    const candidates = [
      { provider: 'Google' as const, providerItemId: 'a', title: 'Dune Messiah', authors: ['Frank Herbert'] },
      { provider: 'Google' as const, providerItemId: 'b', title: 'Dune', authors: ['Frank Herbert'] },
      { provider: 'Google' as const, providerItemId: 'c', title: 'Dune', authors: ['Someone Else'] },
    ];
    expect(bestCandidate({ candidates, searchedBy: 'title' }, { title: 'Dune', author: 'Frank Herbert' })?.providerItemId).toBe('b');
    expect(bestCandidate({ candidates, searchedBy: 'title' }, { title: 'Children of Dune', author: 'Brian Herbert' })).toBeUndefined();
    expect(bestCandidate({ candidates, searchedBy: 'isbn' }, { title: 'anything' })?.providerItemId).toBe('a');
    expect(titleSimilarity('The Lord of the Rings', 'Lord of the Rings')).toBe(1);
  });
});

describe('when a provider fails', () => {
  it('403 → BLOCKED, 429 → RATE_LIMITED with the wait, naming the provider', async () => {
    let status = 403;
    site.on('GET', /.*/, () => ({ status, headers: status === 429 ? { 'retry-after': '30' } : {}, json: { error: { code: status, message: status === 403 ? 'The request is missing a valid API key.' : 'Quota exceeded' } } }));
    const blocked = await failure(googleProvider.search({ isbn: '9780441013593' }, ctxFor(googleProvider)));
    expect(blocked.code).toBe('BLOCKED');
    expect(blocked.message).toBe('Google Books: refused access (HTTP 403); it may be blocking automated requests from this server: The request is missing a valid API key.');
    status = 429;
    const limited = await failure(openLibraryProvider.search({ title: 'Dune' }, ctxFor(openLibraryProvider)));
    expect(limited.code).toBe('RATE_LIMITED');
    expect(limited.message).toMatch(/^Open Library: asked to slow down \(HTTP 429\); retry after 30 s/);
  });

  it('an HTML page where JSON was expected → BLOCKED; broken JSON → CHANGED; 5xx → UNAVAILABLE', async () => {
    let mode = 'html';
    site.on('GET', /.*/, () => (mode === 'html' ? { html: '<html><body>Please verify you are a human (captcha)</body></html>' } : mode === 'broken' ? { body: '{"items": [', contentType: 'application/json' } : { status: 502, html: 'bad gateway' }));
    const html = await failure(googleProvider.search({ isbn: '9780441013593' }, ctxFor(googleProvider)));
    expect(html.code).toBe('BLOCKED');
    expect(html.message).toMatch(/^Google Books: .*text\/html, expected application\/json.*blocking requests/);
    mode = 'broken';
    expect((await failure(googleProvider.search({ isbn: '9780441013593' }, ctxFor(googleProvider)))).code).toBe('CHANGED');
    mode = '5xx';
    expect((await failure(comicvineProvider.search({ title: 'Saga' }, ctxFor(comicvineProvider)))).code).toBe('UNAVAILABLE');
  });

  it('gives up after the timeout with TIMEOUT', async () => {
    site.on('GET', /.*/, { delayMs: 1500, json: { totalItems: 0 } });
    const started = Date.now();
    const slow = await failure(googleProvider.search({ isbn: '9780441013593' }, ctxFor(googleProvider, { timeoutMs: 300 })));
    expect(slow.code).toBe('TIMEOUT');
    expect(slow.message).toBe('Google Books: did not answer within 300 ms');
    expect(Date.now() - started).toBeLessThan(1400);
  });

  it('reports one failing provider without losing the others', async () => {
    site.on('GET', '/volumes', { status: 403, html: 'no' });
    site.on('GET', '/search.json', { json: { numFound: 1, docs: [{ key: '/works/OL1W', title: 'Dune', author_name: ['Frank Herbert'] }] } });
    const outcomes = await searchProviders(['Google', 'OpenLibrary'], { title: 'Dune', author: 'Frank Herbert' }, runtime);
    expect(outcomes.map((o) => [o.provider, o.error?.code ?? null, o.candidates.length])).toEqual([
      ['Google', 'BLOCKED', 0],
      ['OpenLibrary', null, 1],
    ]);
  });

  it('refuses a provider switched off in the settings', async () => {
    const off = { ...runtime, providerSettings: { ...SETTINGS, google: { enabled: false } } };
    const refused = await failure(searchProvider(googleProvider, { title: 'Dune' }, off));
    expect(refused.code).toBe('DISABLED');
    expect(refused.message).toBe('Google Books: is not enabled in the metadata provider settings');
  });
});

describe('rate limits', () => {
  it('keep the spacing between two requests to one provider', async () => {
    site.on('GET', '/volumes', { json: { totalItems: 0 } });
    const limiter = createRateLimiter(300);
    // The limiter spaces departures; arrivals also carry connection set-up and a busy machine's delays.
    const { http: recording, sentAt } = departureRecordingHttp();
    const ctx = ctxFor(googleProvider, { limiterFor: () => limiter, http: recording });
    await Promise.all([googleProvider.search({ isbn: '9780441013593' }, ctx), googleProvider.search({ isbn: '9780441013593' }, ctx), googleProvider.search({ isbn: '9780441013593' }, ctx)]);
    expect(site.requests).toHaveLength(3);
    expect(sentAt).toHaveLength(3);
    for (let i = 1; i < sentAt.length; i++) expect((sentAt[i] ?? 0) - (sentAt[i - 1] ?? 0)).toBeGreaterThanOrEqual(SPACED);
  });

  it('hand out slots one interval apart, without waiting when the provider was idle', async () => {
    let now = 1000;
    const limiter = createRateLimiter(100, () => now);
    const waits: number[] = [];
    const started = Date.now();
    await limiter.acquire();
    waits.push(Date.now() - started);
    now += 500;
    await limiter.acquire();
    waits.push(Date.now() - started);
    await limiter.acquire();
    waits.push(Date.now() - started);
    expect(waits[0]).toBeLessThan(50);
    expect(waits[1]).toBeLessThan(50);
    expect(waits[2]).toBeGreaterThanOrEqual(90);
  });

  it('are declared by every API provider', () => {
    for (const p of [googleProvider, openLibraryProvider, hardcoverProvider, comicvineProvider]) {
      expect(p.minIntervalMs).toBeGreaterThanOrEqual(1000);
      expect(p.timeoutMs).toBeGreaterThanOrEqual(10_000);
    }
  });
});
