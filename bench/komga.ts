// node bench/komga.ts [--books 100000] [--runs 50] [--only books]   (POST rows: Komelia's search bodies)
// Komga-compatible API latency on a synthetic catalog (bench/book-catalog.ts: a third of the books in 997 series):
// each request --runs times in process (fastify inject: routing, HTTP Basic, the switch, the owner's rights, SQL and
// JSON), after one warm-up request that pays bcrypt. Per request p50 / p99 wall time and the median CPU time, twice:
// with the catalog unchanged between requests (remembered totals hold) and with a write before every request.
import { rmSync } from 'node:fs';
import { benchOptions, setUpBenchCatalog } from './inject-bench-setup.ts';
import { TABLE_HEAD, timingRow } from './inject-timing.ts';

const { books, runs, only } = benchOptions(50);
const { dir, store, app, catalog, magicId, basic } = await setUpBenchCatalog('komga', books, ['komga_api_enabled', 'opds_server_enabled']);
try {
  const shelfId = store.sqlite.prepare("SELECT id FROM shelf WHERE name = 'Synthetic shelf'").pluck().get() as number;
  const lib = catalog.libraryId;
  const lastBooksPage = Math.ceil(books / 20) - 1;
  const middle = Math.floor((catalog.bookIds.first + catalog.bookIds.last) / 2);

  const is = (value: unknown) => ({ operator: 'is', value });
  const anAuthor = store.sqlite.prepare('SELECT name FROM author ORDER BY id LIMIT 1 OFFSET 7').pluck().get() as string;
  const cases: [label: string, url: string, account: string, body?: unknown][] = [
    ['users/me', '/komga/api/v2/users/me', 'kobo'],
    ['libraries', '/komga/api/v1/libraries', 'kobo'],
    ['books page 0 (admin)', '/komga/api/v1/books', 'kobo'],
    ['books page 0 (library member, restriction)', '/komga/api/v1/books', 'phone'],
    [`books last page ${lastBooksPage} (deep OFFSET)`, `/komga/api/v1/books?page=${lastBooksPage}`, 'kobo'],
    ['books page 0, size=100', '/komga/api/v1/books?size=100', 'kobo'],
    ['books by library, as Mihon asks', `/komga/api/v1/books?library_id=${lib}&page=0&deleted=false`, 'phone'],
    ['books search=river night', '/komga/api/v1/books?search=river%20night', 'kobo'],
    ['books read_status=IN_PROGRESS', '/komga/api/v1/books?read_status=IN_PROGRESS', 'kobo'],
    ['book by id', `/komga/api/v1/books/${middle}`, 'kobo'],
    ['series page 0, as Mihon asks', '/komga/api/v1/series?page=0&deleted=false&sort=metadata.titleSort,asc', 'kobo'],
    ['series page 0 (library member, restriction)', '/komga/api/v1/series?page=0', 'phone'],
    ['series page 40', '/komga/api/v1/series?page=40', 'kobo'],
    ['series search=series 50', '/komga/api/v1/series?search=series%2050', 'kobo'],
    ['one series', `/komga/api/v1/series/${lib}-series-500`, 'kobo'],
    ['series books unpaged (Mihon chapter list)', `/komga/api/v1/series/${lib}-series-500/books?unpaged=true&media_status=READY&deleted=false`, 'kobo'],
    ['Unknown Series books page 0', `/komga/api/v1/series/${lib}-unknown-series/books`, 'kobo'],
    ['series read progress (Mihon tracker)', `/komga/api/v2/series/${lib}-series-500/read-progress/tachiyomi`, 'kobo'],
    ['collections unpaged', '/komga/api/v1/collections?unpaged=true', 'kobo'],
    ['collection series (shelf of 5,000 books)', `/komga/api/v1/collections/${shelfId}/series`, 'kobo'],
    ['collection series (magic shelf)', `/komga/api/v1/collections/magic-${magicId}/series`, 'kobo'],
    // Komelia: search bodies and the home screen.
    ['POST books/list, library, by title (Komelia)', '/komga/api/v1/books/list?sort=metadata.title,asc', 'kobo', { condition: { allOf: [{ libraryId: is(String(lib)) }, { deleted: { operator: 'isFalse' } }] } }],
    ['POST books/list, series books by number', '/komga/api/v1/books/list?sort=metadata.numberSort,asc&unpaged=true', 'kobo', { condition: { allOf: [{ seriesId: is(`${lib}-series-500`) }] } }],
    ['POST books/list, keep reading (IN_PROGRESS by read date)', '/komga/api/v1/books/list?sort=readProgress.readDate,desc', 'kobo', { condition: { readStatus: is('IN_PROGRESS') } }],
    [
      'POST books/list, anyOf title / released before 2000',
      '/komga/api/v1/books/list',
      'phone',
      { condition: { anyOf: [{ title: { operator: 'contains', value: 'river' } }, { releaseDate: { operator: 'before', dateTime: '2000-01-01T00:00:00Z' } }] } },
    ],
    ['POST books/list, fullTextSearch', '/komga/api/v1/books/list', 'kobo', { fullTextSearch: 'river night' }],
    ['POST series/list, library by title (Komelia)', '/komga/api/v1/series/list?sort=metadata.titleSort,asc&size=50', 'kobo', { condition: { allOf: [{ libraryId: is(String(lib)) }, { deleted: { operator: 'isFalse' } }] } }],
    ['POST series/list, tag or author', '/komga/api/v1/series/list', 'phone', { condition: { anyOf: [{ tag: is('tag-3') }, { author: is({ name: anAuthor }) }] } }],
    ['books ondeck', '/komga/api/v1/books/ondeck', 'kobo'],
    ['books latest', '/komga/api/v1/books/latest', 'kobo'],
    ['series new', '/komga/api/v1/series/new', 'kobo'],
    ['series updated', '/komga/api/v1/series/updated', 'kobo'],
    ['languages', '/komga/api/v1/languages', 'kobo'],
    ['v2 authors page 0', '/komga/api/v2/authors?search=author', 'kobo'],
  ];

  console.log(TABLE_HEAD.join('\n'));
  for (const [label, url, account, body] of cases) {
    if (only && !label.includes(only)) continue;
    console.log(await timingRow(app, label, url, { runs, headers: { authorization: basic(account) }, sqlite: store.sqlite, body }));
  }
  await app.close();
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
