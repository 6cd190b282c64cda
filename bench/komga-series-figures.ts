// node bench/komga-series-figures.ts [--books 100000] [--rounds 5] [--pages 50]
// Komga series pages summarized in process, from the books (summarizeMany, what a page did before migration 044) and
// from the kept figures (summarizePage), interleaved page by page on one synthetic catalog (bench/book-catalog.ts),
// for the admin and for the library member with a category restriction: median CPU ms per page of 20 series. Also:
// what the catalog write costs with the triggers (printed by the catalog writer), the first page of a catalog whose
// series are all stale (as the migration leaves it) and the background filling that follows it, and the first page
// after a book of it was renamed.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { allPermissions, PERMISSION_NAMES, type Permissions } from '../src/core/auth/permissions.ts';
import type { Principal } from '../src/core/auth/principal.ts';
import { figuresStored, summarizePage } from '../src/core/komga/series-figures.ts';
import { refOf, seriesIndex, summarizeMany, type SeriesRef } from '../src/core/komga/series.ts';
import { writeBenchCatalog } from './inject-bench-setup.ts';

const { values } = parseArgs({ options: { books: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '5' }, pages: { type: 'string', default: '50' } } });
const books = Number(values.books);
const rounds = Number(values.rounds);
const pages = Number(values.pages);
const dir = mkdtempSync(join(tmpdir(), 'bindery-bench-series-figures-'));
const load = (): string => loadavg().map((l) => l.toFixed(1)).join(' ');
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const { store, adminId, catalog } = await writeBenchCatalog(dir, books);
try {
  const admin: Principal = { userId: adminId, username: 'admin', isDefaultPassword: false, sessionVersion: 0, permissions: allPermissions(), libraryIds: [], restrictions: [] };
  const member: Principal = {
    ...admin,
    username: 'reader',
    permissions: Object.fromEntries(PERMISSION_NAMES.map((p) => [p, false])) as Permissions,
    libraryIds: [catalog.libraryId],
    restrictions: [{ type: 'CATEGORY', mode: 'EXCLUDE', value: 'Category 7' }],
  };
  const pageRefs = async (principal: Principal): Promise<SeriesRef[][]> => {
    const heads = (await seriesIndex(store, principal, true)).heads;
    return Array.from({ length: pages }, (_, p) => heads.slice(p * 20, p * 20 + 20).map((h) => refOf(store.dialect, h)));
  };
  const readers = [
    { label: 'admin', principal: admin, refs: await pageRefs(admin) },
    { label: 'member, category restriction', principal: member, refs: await pageRefs(member) },
  ];
  const stale = async (): Promise<number> => Number((await store.exec.get('SELECT count(*) AS n FROM (SELECT DISTINCT library_id, series_key FROM komga_series_stale) s'))?.n);
  const logged = Number((await store.exec.get('SELECT count(*) AS n FROM komga_series_stale'))?.n);
  console.log(`load ${load()}; series stale after the write: ${await stale()} (${logged} log rows)`);
  // The first page of a catalog whose series are all stale, then the filling it starts.
  let t = cpuMs();
  await summarizePage(store, admin, readers[0]?.refs[0] as SeriesRef[], adminId);
  const firstPage = cpuMs() - t;
  t = cpuMs();
  const wall = performance.now();
  await figuresStored(store);
  console.log(`first page, every series stale: ${firstPage.toFixed(2)} ms CPU; filling the rest in the background: ${(cpuMs() - t).toFixed(0)} ms CPU, ${(performance.now() - wall).toFixed(0)} ms wall; stale left ${await stale()}`);
  for (const { label, principal, refs } of readers) {
    const before: number[] = [];
    const after: number[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const page of refs) {
        const order = round % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
        for (const which of order) {
          t = cpuMs();
          if (which === 'before') await summarizeMany(store, principal, page, principal.userId);
          else await summarizePage(store, principal, page, principal.userId);
          (which === 'before' ? before : after).push(cpuMs() - t);
        }
      }
    }
    console.log(`${label}: per page of 20 series, median CPU ms: from the books ${median(before).toFixed(2)} → kept figures ${median(after).toFixed(2)} (load ${load()})`);
  }
  // A book of page 0 renamed: its series is worked out again by the next page.
  const [firstSeries] = readers[0]?.refs[0] ?? [];
  const bookId = (await store.exec.get(`SELECT m.book_id AS id FROM book_metadata m WHERE lower(m.series_name) = lower(?) LIMIT 1`, [firstSeries?.name ?? '']))?.id;
  const afterChange: number[] = [];
  for (let i = 0; i < 10; i++) {
    await store.exec.run('UPDATE book_metadata SET title = ? WHERE book_id = ?', [`Renamed ${i}`, bookId as number]);
    t = cpuMs();
    await summarizePage(store, admin, readers[0]?.refs[0] as SeriesRef[], adminId);
    afterChange.push(cpuMs() - t);
    await figuresStored(store);
  }
  console.log(`page 0 right after one of its books was renamed: median ${median(afterChange).toFixed(2)} ms CPU (load ${load()})`);
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
