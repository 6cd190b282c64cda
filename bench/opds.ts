// node bench/opds.ts [--books 100000] [--runs 50] [--only catalog]
// OPDS feed latency on a synthetic catalog (bench/book-catalog.ts): each feed is requested --runs times in process
// (fastify inject: routing, HTTP Basic, the switch, the owner's rights, SQL and rendering, without the network), after
// one warm-up request that pays bcrypt. Per feed p50 / p99 wall time and the median CPU time, twice: "paging" (the
// reader pages on through an unchanged catalog, so the feed's total is remembered) and "changed" (a write to the
// catalog before every request, so the total is counted again each time). See bench/inject-timing.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/core/config.ts';
import { openStore } from '../src/core/store/store.ts';
import { createUser, hashPassword } from '../src/core/users/users.ts';
import { buildApp } from '../src/daemon/app.ts';
import { fillCatalog } from './book-catalog.ts';
import { measure, TABLE_HEAD, tableRow } from './inject-timing.ts';

const { values } = parseArgs({ options: { books: { type: 'string', default: '100000' }, runs: { type: 'string', default: '50' }, only: { type: 'string', default: '' } } });
const books = Number(values.books);
const runs = Number(values.runs);

console.log(`machine: ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, node ${process.version}, load ${loadavg()[0]?.toFixed(1)}`);
const dir = mkdtempSync(join(tmpdir(), 'bindery-opds-bench-'));
try {
  const store = await openStore(join(dir, 'bindery.sqlite'));
  const adminId = await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'Admin', permissions: { admin: true } });
  const started = performance.now();
  const catalog = fillCatalog(store.sqlite, books, join(dir, 'library'), adminId);
  console.log(`catalog: ${books} books written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const readerId = await createUser(store.db, { username: 'reader', password: 'reader-password', name: 'Reader', permissions: { canAccessOpds: true }, libraryIds: [catalog.libraryId] });
  await store.sqlite.prepare("INSERT INTO user_content_restriction (user_id, restriction_type, mode, value) VALUES (?, 'CATEGORY', 'EXCLUDE', 'Category 7')").run(readerId);
  for (const [userId, name] of [[adminId, 'kobo'], [readerId, 'phone']] as const) {
    await store.db.insertInto('opds_user_v2').values({ user_id: userId, username: name, password_hash: await hashPassword(`${name}-password`) }).execute();
  }
  await store.db.insertInto('app_settings').values({ name: 'opds_server_enabled', val: 'true' }).onConflict((oc) => oc.column('name').doUpdateSet({ val: 'true' })).execute();
  const magic = JSON.stringify({ type: 'group', join: 'and', rules: [{ field: 'seriesName', operator: 'starts_with', value: 'series 1' }, { field: 'pageCount', operator: 'greater_than', value: 300 }] });
  const magicId = Number(store.sqlite.prepare("INSERT INTO magic_shelf (user_id, name, filter_json) VALUES (?, 'Long series books', ?)").run(adminId, magic).lastInsertRowid);
  store.sqlite.pragma('optimize');

  const config = { ...loadConfig({ env: {}, flags: { dataDir: dir } }), logLevel: 'silent' as const };
  const { app } = await buildApp({ config, store });
  await app.ready();
  const basic = (name: string): string => `Basic ${Buffer.from(`${name}:${name}-password`).toString('base64')}`;
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
    if (values.only && !label.includes(values.only)) return;
    const headers = { authorization: basic(account), ...(accept ? { accept } : {}) };
    console.log(tableRow(label, await measure(app, url, { runs, headers }), await measure(app, url, { runs, headers, changed: { sqlite: store.sqlite } })));
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
