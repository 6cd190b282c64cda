// npm run bench:expensive-inputs [-- --before <git ref>] [--rounds 2] [--timeout 120]
// The audit's expensive inputs, before and after, interleaved in one run, each measurement in a fresh process:
// `page-dimensions` of a CBZ with 100,000 one-byte entries, of one at the 10,000-page cap, and of an ordinary
// 120-page comic; and `POST /api/v1/icons/batch` with 1,000 icons of 60 KB and with 200 of them. Prints CPU seconds
// (all threads), wall seconds, peak RSS and the outcome, with the load average. "Before" runs the sources of
// <git ref> (default: the commit this branch started from), extracted to a temporary folder; a run that passes the
// timeout is killed and shown as such.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { storedZip, zipBuffer } from '../test/helpers/comic-fixtures.ts';

const { values } = parseArgs({ options: { before: { type: 'string', default: 'd6cd93c' }, rounds: { type: 'string', default: '2' }, timeout: { type: 'string', default: '120' } } });
const here = import.meta.dirname;
const repo = join(here, '..');
const corpus = join(here, '.corpus', 'archives');
mkdirSync(corpus, { recursive: true });

const pageNames = (count: number): string[] => Array.from({ length: count }, (_, i) => `p${String(i + 1).padStart(6, '0')}.jpg`);
const archives: Record<string, string> = {
  'hostile: 100,000 one-byte entries': join(corpus, 'hostile-100k.cbz'),
  'at the cap: 10,000 tiny PNG pages': join(corpus, 'cap-10k.cbz'),
  'ordinary: 120 JPEG pages 1200×1800': join(corpus, 'ordinary-120.cbz'),
};
if (!existsSync(archives['hostile: 100,000 one-byte entries'] as string)) {
  writeFileSync(archives['hostile: 100,000 one-byte entries'] as string, storedZip(pageNames(100_000).map((name, i) => ({ name, data: Buffer.from([i & 0xff]) }))));
}
if (!existsSync(archives['at the cap: 10,000 tiny PNG pages'] as string)) {
  const tiny = await sharp({ create: { width: 30, height: 20, channels: 3, background: '#c63' } }).png().toBuffer();
  writeFileSync(archives['at the cap: 10,000 tiny PNG pages'] as string, storedZip(pageNames(10_000).map((name) => ({ name, data: tiny }))));
}
if (!existsSync(archives['ordinary: 120 JPEG pages 1200×1800'] as string)) {
  const pages = await Promise.all(
    pageNames(120).map(async (name, i) => ({
      name,
      data: await sharp({ create: { width: 1200, height: 1800, channels: 3, background: '#888', noise: { type: 'gaussian', mean: 100 + (i % 50), sigma: 40 } } }).jpeg({ quality: 80 }).toBuffer(),
      compress: true,
    })),
  );
  writeFileSync(archives['ordinary: 120 JPEG pages 1200×1800'] as string, await zipBuffer(pages));
}

// The older sources, runnable with this checkout's dependencies.
const beforeRoot = mkdtempSync(join(tmpdir(), 'bindery-before-'));
execFileSync('sh', ['-c', `git -C "${repo}" archive ${values.before} src | tar -x -C "${beforeRoot}"`]);
symlinkSync(join(repo, 'node_modules'), join(beforeRoot, 'node_modules'));
writeFileSync(join(beforeRoot, 'package.json'), '{"type":"module"}');

interface Figures { cpuSeconds: number; seconds: number; rssBeforeMb: number; peakRssMb: number; outcome: string }
const timeoutMs = Number(values.timeout) * 1000;
function measure(root: string, args: string[]): Figures | string {
  const run = spawnSync(process.execPath, ['--expose-gc', join(here, 'expensive-inputs-child.ts'), args[0] as string, root, ...args.slice(1)], { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 1 << 24 });
  if (run.signal) return `killed after ${values.timeout} s`;
  try {
    return JSON.parse(run.stdout) as Figures;
  } catch {
    return `failed: ${(run.stderr || run.stdout).trim().split('\n').slice(-1)[0] ?? ''}`;
  }
}

const row = (label: string, which: string, f: Figures | string): string =>
  typeof f === 'string'
    ? `| ${label} | ${which} | ${f} | | | |`
    : `| ${label} | ${which} | ${f.cpuSeconds.toFixed(2)} | ${f.seconds.toFixed(2)} | ${f.peakRssMb} (from ${f.rssBeforeMb}) | ${f.outcome.slice(0, 70)} |`;

const cases: [string, string[]][] = [
  ...Object.entries(archives).map(([label, path]) => [`page-dimensions, ${label}`, ['page-dimensions', path]] as [string, string[]]),
  ['icons/batch, 1,000 × 60 KB', ['icons-batch', '1000', String(60 * 1024)]],
  ['icons/batch, 200 × 60 KB', ['icons-batch', '200', String(60 * 1024)]],
];

console.log(`load average at start: ${loadavg().map((l) => l.toFixed(2)).join(' ')} (${values.rounds} rounds, before = ${values.before})`);
console.log('| case | code | CPU s | wall s | peak RSS MB | outcome |');
console.log('|---|---|---|---|---|---|');
for (let round = 1; round <= Number(values.rounds); round++) {
  for (const [label, args] of cases) {
    console.log(row(label, `before #${round}`, measure(beforeRoot, args)));
    console.log(row(label, `after #${round}`, measure(repo, args)));
  }
}
console.log(`load average at end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
rmSync(beforeRoot, { recursive: true, force: true });
