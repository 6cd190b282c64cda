// npm run bench:scan -- --books 10000 [--workers 2]
// Prints first-scan throughput (books/s, covers and thumbnails included), unchanged-rescan time and peak RSS.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildCorpus } from './corpus.ts';

const { values } = parseArgs({ options: { books: { type: 'string', default: '2000' }, workers: { type: 'string', default: String(availableParallelism()) }, keep: { type: 'boolean', default: false } } });
const books = Number(values.books);
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

interface Figures { seconds: number; added: number; unchanged: number; failed: number; peakRssMb: number }
const scan = (): Figures => JSON.parse(execFileSync(process.execPath, [join(here, 'scan-child.ts'), dataDir, corpus, values.workers as string], { encoding: 'utf8', maxBuffer: 1 << 26 })) as Figures;

const first = scan();
console.log(`first scan:     ${first.added} books in ${first.seconds.toFixed(1)} s = ${(first.added / first.seconds).toFixed(0)} books/s (workers ${values.workers}, failed ${first.failed}), peak RSS ${first.peakRssMb} MB`);
const again = scan();
console.log(`unchanged scan: ${again.unchanged} books in ${again.seconds.toFixed(2)} s, peak RSS ${again.peakRssMb} MB`);
if (!values.keep) rmSync(dataDir, { recursive: true, force: true });
