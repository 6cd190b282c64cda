// node bench/app-api.ts [--books 100000] [--runs 30] [--only books]
// Mobile-app API latency on a synthetic catalog (bench/book-catalog.ts): each request --runs times in process (fastify
// inject: routing, JWT, SQL and JSON), after one warm-up request. Per request p50 / p99 wall time and the median CPU
// time, twice: with the catalog unchanged between requests (remembered totals hold) and with a write before each.
import { ACCESS_TOKEN_SECONDS, signToken } from '../src/core/auth/tokens.ts';
import { rmSync } from 'node:fs';
import { benchOptions, setUpBenchCatalog } from './inject-bench-setup.ts';
import { TABLE_HEAD, timingRow } from './inject-timing.ts';

const { books, runs, only } = benchOptions(30);
const { dir, store, app, ctx, adminId, readerId, catalog, magicId } = await setUpBenchCatalog('app', books, []);
try {
  const shelfId = store.sqlite.prepare("SELECT id FROM shelf WHERE name = 'Synthetic shelf'").pluck().get() as number;
  const authorId = store.sqlite.prepare('SELECT min(id) FROM author').pluck().get() as number;
  const token = (userId: number, username: string): Promise<string> => signToken(ctx.jwtSecret, { userId, username, isDefaultPassword: false, sessionVersion: 0 }, 'access', ACCESS_TOKEN_SECONDS);
  const tokens = { admin: await token(adminId, 'admin'), reader: await token(readerId, 'reader') };
  const middle = Math.floor((catalog.bookIds.first + catalog.bookIds.last) / 2);
  const lastPage = Math.ceil(books / 50) - 1;

  const cases: [label: string, url: string, account: keyof typeof tokens][] = [
    ['users/me', '/api/v1/app/users/me', 'reader'],
    ['libraries', '/api/v1/app/libraries', 'reader'],
    ['books page 0 (admin)', '/api/v1/app/books', 'admin'],
    ['books page 0 (library member, restriction)', '/api/v1/app/books', 'reader'],
    [`books last page ${lastPage} (deep OFFSET)`, `/api/v1/app/books?page=${lastPage}`, 'admin'],
    ['books sort=title asc', '/api/v1/app/books?sort=title&dir=asc', 'admin'],
    ['books sort=title asc, page 1000', '/api/v1/app/books?sort=title&dir=asc&page=1000', 'admin'],
    ['books sort=lastReadTime', '/api/v1/app/books?sort=lastReadTime', 'admin'],
    ['books status=READING', '/api/v1/app/books?status=READING', 'admin'],
    ['books authors=<one author>', `/api/v1/app/books?authors=${encodeURIComponent(store.sqlite.prepare('SELECT name FROM author WHERE id = ?').pluck().get(authorId) as string)}`, 'reader'],
    ['books category and/not + fileType', '/api/v1/app/books?category=Category%201&fileType=PDF&filterMode=not', 'reader'],
    ['books search=river night', '/api/v1/app/books?search=river%20night', 'reader'],
    ['books shelfId (5,000 books)', `/api/v1/app/books?shelfId=${shelfId}`, 'admin'],
    ['books magicShelfId', `/api/v1/app/books?magicShelfId=${magicId}`, 'admin'],
    ['books/ids (every id)', '/api/v1/app/books/ids', 'admin'],
    ['book detail', `/api/v1/app/books/${middle}`, 'reader'],
    ['book progress', `/api/v1/app/books/${catalog.bookIds.first}/progress`, 'admin'],
    ['search q=glass', '/api/v1/app/books/search?q=glass', 'reader'],
    ['continue-reading', '/api/v1/app/books/continue-reading', 'admin'],
    ['recently-added', '/api/v1/app/books/recently-added', 'reader'],
    ['recently-scanned', '/api/v1/app/books/recently-scanned', 'reader'],
    ['random', '/api/v1/app/books/random', 'reader'],
    ['authors page 0', '/api/v1/app/authors', 'reader'],
    ['authors sort=bookCount', '/api/v1/app/authors?sort=bookCount&dir=desc', 'admin'],
    ['author detail', `/api/v1/app/authors/${authorId}`, 'reader'],
    ['series page 0', '/api/v1/app/series', 'reader'],
    ['series in progress', '/api/v1/app/series?status=in-progress', 'admin'],
    ['series books', '/api/v1/app/series/Series%20500/books', 'reader'],
    ['filter-options (admin)', '/api/v1/app/filter-options', 'admin'],
    ['filter-options (library member, restriction)', '/api/v1/app/filter-options', 'reader'],
    ['filter-options shelfId', `/api/v1/app/filter-options?shelfId=${shelfId}`, 'admin'],
    ['shelves', '/api/v1/app/shelves', 'admin'],
    ['magic shelf books', `/api/v1/app/shelves/magic/${magicId}/books`, 'admin'],
    ['notebook books', '/api/v1/app/notebook/books', 'reader'],
  ];

  // Filter options are kept (for 30 s when expensive, as Grimmory keeps them): the table shows the kept answer. This is
  // the price of computing them, once per caller and scope.
  for (const [label, account] of [['filter-options computed (admin)', 'admin'], ['filter-options computed (library member, restriction)', 'reader']] as const) {
    if (only && !label.includes(only)) continue;
    const startCpu = process.cpuUsage();
    const start = performance.now();
    const res = await app.inject({ method: 'GET', url: `/api/v1/app/filter-options?libraryId=${catalog.libraryId}`, headers: { authorization: `Bearer ${tokens[account]}` } });
    const used = process.cpuUsage(startCpu);
    console.log(`${label}: ${res.statusCode}, ${(performance.now() - start).toFixed(0)} ms wall, ${((used.user + used.system) / 1000).toFixed(0)} ms CPU`);
  }
  console.log(TABLE_HEAD.join('\n'));
  for (const [label, url, account] of cases) {
    if (only && !label.includes(only)) continue;
    console.log(await timingRow(app, label, url, { runs, headers: { authorization: `Bearer ${tokens[account]}` }, sqlite: store.sqlite }));
  }
  await app.close();
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
