// npm run bench:scan -- --books 10000 [--workers N] [--node-options '--max-semi-space-size=4'] [--keep]
// Prints first-scan throughput (books/s, covers and thumbnails included), unchanged-rescan time and peak RSS, each
// with the CPU time it took (all threads, and per kind of thread) and the load average before/after: on a shared
// machine, CPU ms per book is the steadier figure. --workers defaults to the scanWorkers setting
// (BINDERY_SCAN_WORKERS, else CPUs - 1). The scanning process runs as `bindery scan` does (bin/bindery): with
// MALLOC_ARENA_MAX=2 unless the environment sets it, and with --max-semi-space-size=4 unless --node-options gives
// other V8/Node flags ('' for none).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/core/config.ts';
import { buildCorpus } from './corpus.ts';

const { values } = parseArgs({ options: { books: { type: 'string', default: '2000' }, workers: { type: 'string' }, 'node-options': { type: 'string', default: '--max-semi-space-size=4' }, keep: { type: 'boolean', default: false } } });
const books = Number(values.books);
const workers = values.workers ?? String(loadConfig().scanWorkers);
const nodeOptions = (values['node-options'] as string).split(' ').filter(Boolean);
const here = import.meta.dirname;
const corpus = join(here, '.corpus', `books-${books}`);
const dataDir = join(here, '.corpus', `data-${books}`);

if (!existsSync(join(corpus, '.complete'))) {
  const t = performance.now();
  rmSync(corpus, { recursive: true, force: true });
  mkdirSync(corpus, { recursive: true });
  await buildCorpus(corpus, books);
  execFileSync('touch', [join(corpus, '.complete')]);
  console.log(`corpus: ${books} books built in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}
rmSync(dataDir, { recursive: true, force: true });

interface Figures { seconds: number; cpuSeconds: number; threadCpuSeconds: Record<string, number>; load: [number, number]; added: number; unchanged: number; failed: number; peakRssMb: number }
const env = { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2' };
const scan = (): Figures => JSON.parse(execFileSync(process.execPath, [...nodeOptions, join(here, 'scan-child.ts'), dataDir, corpus, workers], { encoding: 'utf8', maxBuffer: 1 << 26, env })) as Figures;
const load = (f: Figures): string => `load ${f.load[0].toFixed(1)} → ${f.load[1].toFixed(1)}`;
const perThread = (f: Figures, books: number): string =>
  Object.entries(f.threadCpuSeconds)
    .filter(([, seconds]) => seconds > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([name, seconds]) => `${name} ${((seconds * 1000) / books).toFixed(2)}`)
    .join(', ');

const first = scan();
console.log(
  `first scan:     ${first.added} books in ${first.seconds.toFixed(1)} s = ${(first.added / first.seconds).toFixed(0)} books/s, CPU ${first.cpuSeconds.toFixed(1)} s = ${((first.cpuSeconds * 1000) / first.added).toFixed(1)} ms/book (workers ${workers}${nodeOptions.length > 0 ? `, ${nodeOptions.join(' ')}` : ''}, MALLOC_ARENA_MAX=${env.MALLOC_ARENA_MAX}, failed ${first.failed}), peak RSS ${first.peakRssMb} MB, ${load(first)}`,
);
console.log(`  CPU ms/book by thread: ${perThread(first, first.added)}`);
const again = scan();
console.log(`unchanged scan: ${again.unchanged} books in ${again.seconds.toFixed(2)} s, CPU ${again.cpuSeconds.toFixed(2)} s, peak RSS ${again.peakRssMb} MB, ${load(again)}`);
if (!values.keep) rmSync(dataDir, { recursive: true, force: true });
