// node bench/opds.ts [--books 100000] [--runs 50] [--only catalog]
// OPDS feed latency on a synthetic catalog (bench/book-catalog.ts): each feed is requested --runs times in process
// (fastify inject: routing, HTTP Basic, the switch, the owner's rights, SQL and rendering, without the network), after
// one warm-up request that pays bcrypt. Per feed p50 / p99 wall time and the median CPU time, twice: "paging" (the
// reader pages on through an unchanged catalog, so the feed's total is remembered) and "changed" (a write to the
// catalog before every request, so the total is counted again each time). See bench/inject-timing.ts.
import { rmSync } from 'node:fs';
import { benchOptions, setUpBenchCatalog } from './inject-bench-setup.ts';
import { TABLE_HEAD, timingRow } from './inject-timing.ts';

const { books, runs, only } = benchOptions(50);
const { dir, store, app, catalog, magicId, basic } = await setUpBenchCatalog('opds', books, ['opds_server_enabled']);
try {
  const lastPage = Math.ceil(books / 50);

  const cases: [label: string, url: string, account: string, accept?: string][] = [
    ['root navigation', '/api/v1/opds', 'kobo'],
    ['catalog page 1 (admin)', '/api/v1/opds/catalog', 'kobo'],
    ['catalog page 1 (library member, restriction)', '/api/v1/opds/catalog', 'phone'],
    [`catalog last page ${lastPage} (deep OFFSET)`, `/api/v1/opds/catalog?page=${lastPage}`, 'kobo'],
    ['catalog size=100', '/api/v1/opds/catalog?size=100', 'kobo'],
    ['catalog page 1, OPDS 2 JSON', '/api/v2/opds/catalog', 'kobo', 'application/opds+json'],
    ['catalog page 1, OPDS 2 JSON (library member, restriction)', '/api/v2/opds/catalog', 'phone', 'application/opds+json'],
    ['catalog page 2 (library member, restriction)', '/api/v1/opds/catalog?page=2', 'phone'],
    ['catalog format facet (PDF)', '/api/v1/opds/catalog?format=PDF', 'kobo'],
    ['OPDS 2 start page (newest books group)', '/api/v2/opds', 'kobo', 'application/opds+json'],
    ['catalog search q=river night', '/api/v1/opds/catalog?q=river%20night', 'kobo'],
    ['catalog by library', `/api/v1/opds/catalog?libraryId=${catalog.libraryId}`, 'phone'],
    ['catalog by author', '/api/v1/opds/catalog?author=Author%2042%20glass', 'kobo'],
    ['catalog by series', '/api/v1/opds/catalog?series=Series%20500', 'kobo'],
    ['catalog magic shelf', `/api/v1/opds/catalog?magicShelfId=${magicId}`, 'kobo'],
    ['recent', '/api/v1/opds/recent', 'kobo'],
    ['surprise (25 random)', '/api/v1/opds/surprise', 'kobo'],
    ['libraries', '/api/v1/opds/libraries', 'phone'],
    ['authors page 1', '/api/v1/opds/authors', 'kobo'],
    ['authors page 1 (library member)', '/api/v1/opds/authors', 'phone'],
    ['series page 1', '/api/v1/opds/series', 'kobo'],
  ];
  console.log(TABLE_HEAD.join('\n'));
  const run = async (label: string, url: string, account: string, accept?: string): Promise<void> => {
    if (only && !label.includes(only)) return;
    const headers = { authorization: basic(account), ...(accept ? { accept } : {}) };
    console.log(await timingRow(app, label, url, { runs, headers, sqlite: store.sqlite }));
  };
  for (const [label, url, account, accept] of cases) await run(label, url, account, accept);
  for (const order of ['TITLE_ASC', 'AUTHOR_ASC', 'SERIES_ASC', 'RATING_DESC'] as const) {
    await store.db.updateTable('opds_user_v2').set({ sort_order: order }).where('username', '=', 'kobo').execute();
    await run(`catalog page 1, order ${order}`, '/api/v1/opds/catalog', 'kobo');
  }
  await app.close();
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
