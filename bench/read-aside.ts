// The longest stretch the main thread is blocked while the first page of a feed is built right after another
// connection changed the catalog (what every other request waits for), and that first page's wall time. Whole-catalog
// reads go through Store.readAside (a worker thread on SQLite): run this against an older commit's tree to compare.
//   node bench/read-aside.ts [--books 100000] [--rounds 8]
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { appOrder, pageOfAppBooks } from '../src/core/app/book-query.ts';
import { loadPrincipal } from '../src/core/auth/principal.ts';
import { seriesIndex } from '../src/core/komga/series.ts';
import { pageOfBooks } from '../src/core/opds/catalog.ts';
import { openStore } from '../src/core/store/store.ts';
import { createUser } from '../src/core/users/users.ts';
import { fillCatalog } from './book-catalog.ts';

const { values } = parseArgs({ options: { books: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '8' } } });
const books = Number(values.books);
const rounds = Number(values.rounds);
const dir = mkdtempSync(join(tmpdir(), 'bindery-read-aside-'));
const store = await openStore(join(dir, 'bindery.sqlite'));
const other = await openStore(join(dir, 'bindery.sqlite'));
try {
  const userId = await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'Admin', permissions: { admin: true } });
  await fillCatalog(store, books, join(dir, 'library'), userId);
  const principal = (await loadPrincipal(store.db, userId))!;
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  console.log(`${books.toLocaleString('en')} books, ${rounds} rounds, load ${loadavg()[0]!.toFixed(1)}\n`);
  console.log('| first page after a change | longest main-thread block, median / max ms | wall median ms |');
  console.log('|---|---|---|');
  const measure = async (label: string, page: () => Promise<unknown>): Promise<void> => {
    const blocks: number[] = [];
    const walls: number[] = [];
    for (let round = 0; round < rounds; round++) {
      await other.exec.run("UPDATE book_metadata SET title = title || '.' WHERE book_id = ?", [1 + round]);
      const delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
      // The histogram counts from its second tick on.
      await pause(20);
      const started = performance.now();
      await page();
      walls.push(performance.now() - started);
      await pause(5);
      delay.disable();
      blocks.push(delay.max / 1e6);
    }
    console.log(`| ${label} | ${median(blocks).toFixed(1)} / ${Math.max(...blocks).toFixed(1)} | ${median(walls).toFixed(1)} |`);
  };
  await measure('OPDS, newest first', () => pageOfBooks(store, principal, {}, 'RECENT', 1, 50));
  await measure('OPDS, by title', () => pageOfBooks(store, principal, {}, 'TITLE_ASC', 1, 50));
  await measure('app API, page 0', () => pageOfAppBooks(store, principal, [], appOrder(undefined, undefined), { offset: 0, limit: 50 }));
  await measure('app API, page 1500', () => pageOfAppBooks(store, principal, [], appOrder(undefined, undefined), { offset: 75_000, limit: 50 }));
  await measure('Komga series index', () => seriesIndex(store, principal, false));
  await measure('app API by page count, page 0', () => pageOfAppBooks(store, principal, [], appOrder('pageCount', 'desc'), { offset: 0, limit: 50 }));
} finally {
  await other.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
