// node bench/search.ts [--books 100000] [--runs 40]
// Search at scale: a synthetic catalog (bench/book-catalog.ts) whose stored search text holds what a scanned book's
// does (title, subtitle, authors, series, ISBN), then one-word queries on every search surface (OPDS 1 and 2, the
// app API's book, author and series searches, Komga's `search`), each --runs times in process after a warm-up.
// Prints p50 / p99 wall time and the median CPU time per request, with the catalog unchanged and with a write before
// every request (remembered totals recounted). It runs on whatever the checkout stores: compare two checkouts by
// copying this file into the other one (it falls back to the lower-cased text older versions stored).
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { ACCESS_TOKEN_SECONDS, signToken } from '../src/core/auth/tokens.ts';
import { benchOptions, setUpBenchCatalog } from './inject-bench-setup.ts';
import { TABLE_HEAD, timingRow } from './inject-timing.ts';

type KeyModule = { searchKey(text: string): string; bookSearchText(fields: { title: string | null; subtitle: string | null; authors: string[]; seriesName: string | null; isbn13: string | null }): string };
const keys = (await import('../src/core/text/search-key.ts' as string).catch(() => undefined)) as KeyModule | undefined;

const { books, runs, only } = benchOptions(40);
const { dir, store, app, ctx, readerId, basic } = await setUpBenchCatalog('search', books, ['komga_api_enabled', 'opds_server_enabled']);
try {
  const started = performance.now();
  const rows = store.sqlite
    .prepare(
      `select m.book_id, m.title, m.subtitle, m.series_name, m.isbn_13,
              (select group_concat(a.name, char(31)) from book_metadata_author_mapping x join author a on a.id = x.author_id where x.book_id = m.book_id) as authors
         from book_metadata m`,
    )
    .all() as { book_id: number; title: string | null; subtitle: string | null; series_name: string | null; isbn_13: string | null; authors: string | null }[];
  const columns = new Set((store.sqlite.prepare("select name from pragma_table_info('book_metadata')").pluck().all() as string[]));
  const update = columns.has('series_key')
    ? store.sqlite.prepare('update book_metadata set search_text = ?, series_key = ? where book_id = ?')
    : store.sqlite.prepare('update book_metadata set search_text = ? where book_id = ?');
  store.sqlite.transaction(() => {
    for (const r of rows) {
      const fields = { title: r.title, subtitle: r.subtitle, authors: r.authors ? r.authors.split('\u001f') : [], seriesName: r.series_name, isbn13: r.isbn_13 };
      const text = keys ? keys.bookSearchText(fields) : [fields.title, fields.subtitle, ...fields.authors, fields.seriesName, fields.isbn13].filter(Boolean).join(' ').toLowerCase();
      if (columns.has('series_key')) update.run(text, r.series_name === null ? null : (keys as KeyModule).searchKey(r.series_name), r.book_id);
      else update.run(text, r.book_id);
    }
    if (keys && columns.has('series_key')) {
      const authors = store.sqlite.prepare('update author set name_key = ? where id = ?');
      for (const a of store.sqlite.prepare('select id, name from author').all() as { id: number; name: string }[]) authors.run(keys.searchKey(a.name), a.id);
    }
  })();
  console.log(`search text of ${rows.length} books written in ${((performance.now() - started) / 1000).toFixed(1)} s (${keys ? 'search keys' : 'lower-cased text'}); load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);

  const token = await signToken(ctx.jwtSecret, { userId: readerId, username: 'reader', isDefaultPassword: false, sessionVersion: 0 }, 'access', ACCESS_TOKEN_SECONDS);
  const cases: [label: string, url: string, headers: Record<string, string>][] = [
    ['OPDS 1 catalog q=orchard (common word)', '/api/v1/opds/catalog?q=orchard', { authorization: basic('kobo') }],
    ['OPDS 1 catalog q=orchard, library member with a restriction', '/api/v1/opds/catalog?q=orchard', { authorization: basic('phone') }],
    ['OPDS 1 catalog q=Orchärd (accented, capital)', '/api/v1/opds/catalog?q=Orch%C3%A4rd', { authorization: basic('kobo') }],
    ['OPDS 1 catalog q=zebra (no match: every book read)', '/api/v1/opds/catalog?q=zebra', { authorization: basic('kobo') }],
    ['OPDS 2 catalog q=orchard', '/api/v2/opds/catalog?q=orchard', { authorization: basic('kobo') }],
    ['app books search=orchard', '/api/v1/app/books?search=orchard', { authorization: `Bearer ${token}` }],
    ['app books search=zebra (no match)', '/api/v1/app/books?search=zebra', { authorization: `Bearer ${token}` }],
    ['app authors search=lantern', '/api/v1/app/authors?search=lantern', { authorization: `Bearer ${token}` }],
    ['app series search=series 50', '/api/v1/app/series?search=series%2050', { authorization: `Bearer ${token}` }],
    ['Komga books search=orchard', '/komga/api/v1/books?search=orchard', { authorization: basic('kobo') }],
    ['Komga books search=zebra (no match)', '/komga/api/v1/books?search=zebra', { authorization: basic('kobo') }],
  ];
  console.log(TABLE_HEAD.join('\n'));
  for (const [label, url, headers] of cases) {
    if (only && !label.includes(only)) continue;
    console.log(await timingRow(app, label, url, { runs, headers, sqlite: store.sqlite }));
  }
  console.log(`load average after: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  await app.close();
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
