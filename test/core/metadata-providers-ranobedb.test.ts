import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isbn13Of, ranobeDate, ranobedbProvider } from '../../src/core/metadata/providers/ranobedb.ts';
import { searchProvider } from '../../src/core/metadata/search.ts';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.ts';
import { testContext, testRuntime } from '../helpers/provider-harness.ts';
import { ranobeBook } from '../helpers/provider-pages.ts';

const KONOSUBA = ranobeBook({
  id: 812,
  title: 'この素晴らしい世界に祝福を！ あぁ、駄女神さま',
  englishTitle: 'Konosuba: God’s Blessing on This Wonderful World!, Vol. 1: Oh! My Useless Goddess!',
  series: { title: 'Konosuba: God’s Blessing on This Wonderful World!', bookIds: [812, 813, 814] },
  author: 'Natsume Akatsuki',
  isbn13: '9780316553377',
  releaseDate: 20170221,
  score: 7.8,
});

describe('RanobeDB provider', () => {
  let site: FakeSite;
  beforeAll(async () => {
    site = await startFakeSite();
  });
  afterAll(async () => site.close());
  beforeEach(() => site.reset());

  it('finds a book by ISBN through the release that carries it', async () => {
    site.on('GET', '/releases', { json: { releases: [{ id: 9001, title: 'Konosuba Vol. 1', lang: 'en', format: 'print', isbn13: '9780316553377', release_date: 20170221 }], count: '1', currentPage: 1, totalPages: 1 } });
    site.on('GET', '/release/9001', { json: { release: { id: 9001, isbn13: '9780316553377', lang: 'en', publishers: [], books: [{ id: 812, title: 'Konosuba', title_orig: null, romaji: null, romaji_orig: null }] } } });
    site.on('GET', '/book/812', { json: KONOSUBA });
    const { candidates, searchedBy } = await searchProvider(ranobedbProvider, { isbn: '0316553379' }, testRuntime(site));
    expect(searchedBy).toBe('isbn');
    // An ISBN-10 is asked as its ISBN-13.
    expect(site.requests[0]?.query.get('q')).toBe('9780316553377');
    expect(candidates).toHaveLength(1);
    expect(candidates[0]).toEqual({
      provider: 'Ranobedb',
      providerItemId: '812',
      ranobedbId: '812',
      title: 'Konosuba: God’s Blessing on This Wonderful World!, Vol. 1',
      subtitle: 'Oh! My Useless Goddess!',
      authors: ['Natsume Akatsuki'],
      description: 'A boy wakes up in another world.',
      publisher: 'Yen On',
      publishedDate: '2017-02-21',
      language: 'en',
      pageCount: 240,
      isbn13: '9780316553377',
      seriesName: 'Konosuba: God’s Blessing on This Wonderful World!',
      seriesNumber: 1,
      seriesTotal: 3,
      categories: ['Fantasy', 'Slice Of Life'],
      thumbnailUrl: 'https://images.ranobedb.org/812.jpg',
      ranobedbRating: 3.9,
      externalUrl: 'https://ranobedb.org/book/812',
    });
  });

  it('searches books by title when the ISBN is unknown', async () => {
    site.on('GET', '/releases', { json: { releases: [], count: '0', currentPage: 1, totalPages: 0 } });
    site.on('GET', '/books', { json: { books: [{ id: 813, title: 'Vol 2' }, { id: 812, title: 'Vol 1' }], count: '2', currentPage: 1, totalPages: 1 } });
    site.on('GET', '/book/812', { json: KONOSUBA });
    site.on('GET', '/book/813', { json: ranobeBook({ id: 813, title: 'Konosuba 2', author: 'Natsume Akatsuki' }) });
    const { candidates, searchedBy } = await searchProvider(ranobedbProvider, { isbn: '9780000000002', title: 'Konosuba' }, testRuntime(site));
    expect(searchedBy).toBe('title');
    const search = site.requests.find((r) => r.path === '/books');
    expect(search?.query.get('q')).toBe('Konosuba');
    expect(candidates.map((c) => c.ranobedbId)).toEqual(['813', '812']);
    expect(candidates[0]).toMatchObject({ title: 'Konosuba 2', language: 'en', publishedDate: '2015-04-21' });
    expect(candidates[0]?.ranobedbRating).toBeUndefined();
  });

  it('reads its dates and ISBNs', () => {
    expect(ranobeDate(20170221)).toBe('2017-02-21');
    expect(ranobeDate(20179999)).toBe('2017-01-01');
    expect(ranobeDate(0)).toBeUndefined();
    expect(isbn13Of('0316553379')).toBe('9780316553377');
  });

  it('reports an answer of another shape as CHANGED and a missing book as null', async () => {
    site.on('GET', '/books', { json: { results: [] } });
    site.on('GET', '/book/1', { status: 404, json: { message: 'Not Found' } });
    site.on('GET', '/book/2', { json: { book: { id: 2 } } });
    const ctx = testContext(ranobedbProvider, site);
    await expect(ranobedbProvider.search({ title: 'x' }, ctx)).rejects.toMatchObject({ code: 'CHANGED', message: expect.stringMatching(/^RanobeDB: .*"books"/) });
    await expect(ranobedbProvider.details?.('1', ctx)).resolves.toBeNull();
    await expect(ranobedbProvider.details?.('2', ctx)).rejects.toMatchObject({ code: 'CHANGED', message: expect.stringContaining('no title') });
  });
});
