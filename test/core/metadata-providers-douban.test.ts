import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { doubanProvider } from '../../src/core/metadata/providers/douban.ts';
import { searchProvider } from '../../src/core/metadata/search.ts';
import { startFakeSite, type FakeSite } from '../helpers/fake-site.ts';
import { testContext, testRuntime } from '../helpers/provider-harness.ts';
import { doubanBlockedPage, doubanSearchPage, doubanSubjectPage, type DoubanSubject } from '../helpers/provider-pages.ts';

const HUOZHE: DoubanSubject = {
  id: '4913064',
  title: '活着',
  authors: ['余华'],
  publisher: '作家出版社',
  year: '2012-8',
  pages: '191',
  series: '余华作品',
  isbn: '9787506365437',
  rating: '9.4',
  votes: '792474',
  intro: '《活着》讲述了农村人福贵悲惨的人生遭遇。\n福贵本是个阔少爷。',
  tags: ['余华', '小说', '中国文学'],
  comments: [
    { name: '读者甲', stars: 5, time: '2019-03-14 10:22:01', text: '看完很难过。' },
    { name: '读者乙', stars: 4, time: '2020-01-02', text: '写得很好。' },
  ],
};

describe('Douban provider', () => {
  let site: FakeSite;
  beforeAll(async () => {
    site = await startFakeSite();
  });
  afterAll(async () => site.close());
  beforeEach(() => site.reset());

  it('finds a book by ISBN through the redirect to its subject page', async () => {
    site.on('GET', '/isbn/9787506365437/', { redirect: '/subject/4913064/' });
    site.on('GET', '/subject/4913064/', { html: doubanSubjectPage(HUOZHE) });
    const { candidates, searchedBy } = await searchProvider(doubanProvider, { isbn: '978-7-5063-6543-7', title: '活着' }, testRuntime(site));
    expect(searchedBy).toBe('isbn');
    expect(candidates[0]).toMatchObject({
      provider: 'Douban',
      providerItemId: '4913064',
      doubanId: '4913064',
      title: '活着',
      authors: ['余华'],
      publisher: '作家出版社',
      publishedDate: '2012-08-01',
      pageCount: 191,
      seriesName: '余华作品',
      isbn13: '9787506365437',
      categories: ['余华', '小说', '中国文学'],
      thumbnailUrl: 'https://img1.doubanio.com/view/subject/l/public/s4913064.jpg',
      doubanRating: 9.4,
      doubanReviewCount: 792474,
      externalUrl: `${site.url}/subject/4913064/`,
    });
    expect(candidates[0]?.description).toBe('《活着》讲述了农村人福贵悲惨的人生遭遇。\n\n福贵本是个阔少爷。');
    expect(candidates[0]?.bookReviews).toEqual([
      { metadataProvider: 'Douban', reviewerName: '读者甲', rating: 5, date: '2019-03-14T00:00:00Z', body: '看完很难过。' },
      { metadataProvider: 'Douban', reviewerName: '读者乙', rating: 4, date: '2020-01-02T00:00:00Z', body: '写得很好。' },
    ]);
  });

  it('searches by title and author through the embedded results, completing the first ones from their pages', async () => {
    site.on('GET', '/isbn/9780000000002/', { status: 404, html: '<html><body>页面不存在</body></html>' });
    site.on('GET', '/book/subject_search', {
      html: doubanSearchPage([
        { id: '4913064', title: '活着', abstract: '余华 / 作家出版社 / 2012-8-1 / 20.00元', rating: 9.4 },
        { id: '1000001', title: '活着（精装）', abstract: '余华 / 译者甲 / 北京十月文艺出版社 / 2017-6 / 45.00元' },
      ]),
    });
    site.on('GET', '/subject/4913064/', { html: doubanSubjectPage({ ...HUOZHE, translator: '白亚仁' }) });
    site.on('GET', '/subject/1000001/', { status: 404, html: '<html><body>页面不存在</body></html>' });
    const { candidates, searchedBy } = await searchProvider(doubanProvider, { isbn: '9780000000002', title: '活着', author: '余华' }, testRuntime(site));
    expect(searchedBy).toBe('title');
    const search = site.requests.find((r) => r.path === '/book/subject_search');
    expect(search?.query.get('search_text')).toBe('活着 余华');
    expect(search?.query.get('cat')).toBe('1001');
    expect(candidates.map((c) => c.doubanId)).toEqual(['4913064', '1000001']);
    expect(candidates[0]?.authors).toEqual(['余华', '白亚仁']);
    // The second page is gone; the search result is what is known.
    expect(candidates[1]).toMatchObject({ title: '活着（精装）', authors: ['余华', '译者甲'], publisher: '北京十月文艺出版社', publishedDate: '2017-06-01', doubanRating: 9.1 });
  });

  it('uses search.douban.com for the search when talking to the real site', () => {
    expect(doubanProvider.defaultBaseUrl({})).toBe('https://book.douban.com');
  });

  it('reports the abnormal-request page as BLOCKED and a search page without its data as CHANGED', async () => {
    site.on('GET', '/subject/1/', { html: doubanBlockedPage() });
    site.on('GET', '/isbn/9787506365437/', { redirect: '/misc/sorry' });
    site.on('GET', '/misc/sorry', { html: doubanBlockedPage() });
    site.on('GET', '/book/subject_search', (req) =>
      req.query.get('search_text') === 'encrypted'
        ? { html: '<html><body><script>window.__DATA__ = "9F2qB3xK0aY...";</script></body></html>' }
        : { html: '<html><body><div id="root">新版搜索</div></body></html>' },
    );
    const ctx = testContext(doubanProvider, site);
    await expect(doubanProvider.details?.('1', ctx)).rejects.toMatchObject({ code: 'BLOCKED', message: expect.stringMatching(/^Douban: /) });
    await expect(doubanProvider.search({ isbn: '9787506365437' }, ctx)).rejects.toMatchObject({ code: 'BLOCKED' });
    await expect(doubanProvider.search({ title: 'changed' }, ctx)).rejects.toMatchObject({ code: 'CHANGED', message: expect.stringContaining('no embedded results') });
    await expect(doubanProvider.search({ title: 'encrypted' }, ctx)).rejects.toMatchObject({ code: 'CHANGED', message: expect.stringContaining('encrypt') });
  });
});
