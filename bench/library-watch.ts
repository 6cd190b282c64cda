// node bench/library-watch.ts [--corpus bench/.corpus/real-1000-seed14] [--rounds 5] [--workers N]
// What the library watcher costs on a real library: the corpus is scanned into a fresh catalog (read-only use of the
// corpus), then, alternately, an unchanged rescan of the whole library and a rescan limited to one changed folder
// (what the watcher asks for), CPU per scan (all threads of this process) and wall time; then the watcher is started
// over the library: time and CPU until its folders are watched, resident memory it adds, and the folders watched.
// Prints the load average before and after.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/core/config.ts';
import { createLibrary } from '../src/core/libraries/libraries.ts';
import { scanLibrary, type ScanOptions } from '../src/core/scan/scanner.ts';
import { openStore } from '../src/core/store/store.ts';
import { startLibraryWatcher } from '../src/daemon/library-watcher.ts';

const { values } = parseArgs({
  options: {
    corpus: { type: 'string', default: join(import.meta.dirname, '.corpus', 'real-1000-seed14') },
    rounds: { type: 'string', default: '5' },
    workers: { type: 'string' },
  },
});
const corpus = resolve(values.corpus);
const workers = Number(values.workers ?? loadConfig({ env: {} }).scanWorkers);
const load = (): string => loadavg().map((l) => l.toFixed(2)).join(' ');
const cpuMs = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

const dir = mkdtempSync(join(tmpdir(), 'bench-library-watch-'));
const store = await openStore(join(dir, 'bindery.sqlite'));
try {
  console.log(`corpus ${corpus}, workers ${workers}, load average before: ${load()}`);
  const library = await createLibrary(store.db, { name: 'Bench', paths: [corpus] });
  const options: ScanOptions = { coversRoot: join(dir, 'covers'), workers };
  const first = await scanLibrary(store, library, options);
  console.log(`first scan: ${first.added} books in ${(first.durationMs / 1000).toFixed(1)} s`);

  const someFolder = join(corpus, readdirSync(corpus, { withFileTypes: true }).find((e) => e.isDirectory())!.name);
  const figures: Record<string, { cpu: number[]; wall: number[] }> = { 'whole library': { cpu: [], wall: [] }, 'one changed folder': { cpu: [], wall: [] } };
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [name, extra] of [['whole library', {}], ['one changed folder', { folders: [someFolder] }]] as const) {
      const cpu = cpuMs();
      const wall = performance.now();
      const summary = await scanLibrary(store, library, { ...options, ...extra });
      if (summary.added + summary.updated + summary.missing > 0) throw new Error(`an unchanged rescan changed something: ${JSON.stringify(summary)}`);
      figures[name]!.cpu.push(cpuMs() - cpu);
      figures[name]!.wall.push(performance.now() - wall);
    }
  }
  const median = (list: number[]): number => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
  console.log('\nunchanged rescan          CPU ms (median)   wall ms (median)');
  for (const [name, f] of Object.entries(figures)) console.log(`${name.padEnd(26)}${median(f.cpu).toFixed(0).padStart(14)}${median(f.wall).toFixed(0).padStart(19)}`);

  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const cpu = cpuMs();
  const wall = performance.now();
  const watcher = await startLibraryWatcher({ store, log: () => undefined, rescan: () => undefined }, { polling: false });
  await store.db.updateTable('library').set({ watch: 1 }).execute();
  await watcher.refresh();
  const readyMs = performance.now() - wall;
  const readyCpu = cpuMs() - cpu;
  global.gc?.();
  const rssAfter = process.memoryUsage().rss;
  const folders = Number((await import('node:child_process')).execFileSync('find', [corpus, '-type', 'd'], { encoding: 'utf8' }).trim().split('\n').length);
  console.log(`\nwatcher over ${folders} folders: watching after ${readyMs.toFixed(0)} ms, ${readyCpu.toFixed(0)} ms CPU, RSS +${((rssAfter - rssBefore) / 1048576).toFixed(1)} MB`);
  await watcher.close();
  console.log(`load average after: ${load()}`);
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
