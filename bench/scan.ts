// npm run bench:scan [-- --entries 1000] [--seed 14] [--baseline main] [--rounds 1] [--workers N] [--formats all|each|both] [--only EPUB,CBZ]
//                    [--node-options '--max-semi-space-size=4 --initial-old-space-size=48'] [--synthetic --books 10000] [--keep] [--database postgres://…] [--calibre]
// Scans the realistic corpus of bench/real-corpus.ts (built once under bench/.corpus/) into a fresh catalog, covers
// and thumbnails included, then scans it again unchanged, and prints a table per format (EPUB, PDF, scanned PDF,
// CBZ, CBR, M4B, MP3 folder; each format scanned on its own from a tree of hard links) and for the whole library:
// books/s, CPU ms per book (all threads of the process), wall time and peak RSS, with the load average.
// --baseline REF runs the same scans with the code of git REF (exported once into bench/.corpus/baseline-<commit>,
// using this tree's node_modules) alternately with this tree's, so both see the same machine: before, after, after,
// before, ... --synthetic scans the old synthetic corpus of bench/corpus.ts instead (--books N, for continuity).
// The scanning process runs as `bindery scan` does (bin/bindery): MALLOC_ARENA_MAX=2 unless the environment sets it,
// and --max-semi-space-size=4 --initial-old-space-size=48 unless --node-options gives other flags ('' for none); a
// --baseline version runs with the same flags, so the before/after compares code alone. --workers defaults to the
// scanWorkers setting. --database URL (a PostgreSQL server the user may create databases on) adds this tree's code on
// PostgreSQL to the versions compared: each scan gets a fresh database there (bench_scan_<pid>, dropped afterwards).
// A scan that leaves its thumbnails to be made afterwards (this tree's) then makes them in the same process as bindery
// serve would, while the web UI's first page asks for its 50: both times are printed, apart from the scan's own.
// --calibre adds, in each round of the whole library, `calibredb add -r` of the same folder into an empty calibre
// library (calibre's own figures: wall, user + system CPU and peak RSS by /usr/bin/time).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../src/core/config.ts';
import { baselineTree } from './baseline-tree.ts';
import { syntheticCorpus } from './corpus.ts';
import { CORPUS_FORMATS, realCorpus, type CorpusEntry } from './real-corpus.ts';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '1000' },
    seed: { type: 'string', default: '14' },
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    formats: { type: 'string', default: 'both' },
    only: { type: 'string', default: '' },
    workers: { type: 'string' },
    'node-options': { type: 'string', default: '--max-semi-space-size=4 --initial-old-space-size=48' },
    synthetic: { type: 'boolean', default: false },
    books: { type: 'string', default: '2000' },
    keep: { type: 'boolean', default: false },
    database: { type: 'string' },
    calibre: { type: 'boolean', default: false },
  },
});
const here = import.meta.dirname;
const workers = values.workers ?? String(loadConfig().scanWorkers);
const nodeOptions = (values['node-options'] as string).split(' ').filter(Boolean);
const env = { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2' };
const loadNow = (): string => loadavg()[0]!.toFixed(1);

interface ThumbnailFigures { pending: number; firstPageSeconds: number; allSeconds: number; cpuSeconds: number; peakRssMb: number }
interface Figures { seconds: number; cpuSeconds: number; threadCpuSeconds: Record<string, number>; load: [number, number]; added: number; unchanged: number; failed: number; peakRssMb: number; thumbnails?: ThumbnailFigures }

/** A set of book files to scan on its own. */
interface Subset { name: string; root: string; entries: number; bytes: number }

async function subsets(): Promise<Subset[]> {
  if (values.synthetic) {
    const books = Number(values.books);
    return [{ name: 'synthetic', root: await syntheticCorpus(books), entries: books, bytes: 0 }];
  }
  const { root, entries } = await realCorpus(Number(values.entries), Number(values.seed));
  const all: Subset = { name: 'whole library', root, entries: entries.length, bytes: entries.reduce((sum, e) => sum + sizeOf(join(root, e.path)), 0) };
  if (values.formats === 'all') return [all];
  const each = CORPUS_FORMATS.map((format) => formatTree(root, format, entries.filter((e) => e.format === format)));
  return values.formats === 'each' ? each : [...each, all];
}

function sizeOf(path: string): number {
  const info = statSync(path);
  return info.isDirectory() ? readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name)), 0) : info.size;
}

/** The entries of one format, as hard links in the corpus's own layout (made once). */
function formatTree(root: string, format: string, entries: CorpusEntry[]): Subset {
  const tree = join(`${root}-by-format`, format.replace(/ /g, '-'));
  if (!existsSync(join(tree, '.complete'))) {
    rmSync(tree, { recursive: true, force: true });
    for (const entry of entries) {
      const from = join(root, entry.path);
      const files = statSync(from).isDirectory() ? readdirSync(from).map((name) => join(entry.path, name)) : [entry.path];
      for (const file of files) {
        mkdirSync(dirname(join(tree, file)), { recursive: true });
        linkSync(join(root, file), join(tree, file));
      }
    }
    writeFileSync(join(tree, '.complete'), '');
  }
  return { name: format, root: tree, entries: entries.length, bytes: entries.reduce((sum, e) => sum + sizeOf(join(root, e.path)), 0) };
}

function scan(tree: string, subset: Subset, dataDir: string, database?: string): Figures {
  const child = join(tree, 'bench', 'scan-child.ts');
  const args = [...nodeOptions, child, dataDir, subset.root, workers, ...(database ? [database] : [])];
  return JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 26, env, cwd: tree })) as Figures;
}

/** calibredb add -r of the folder into an empty library, timed by /usr/bin/time. */
function calibre(subset: Subset): Figures {
  const library = join(here, '.corpus', `calibre-${process.pid}`);
  rmSync(library, { recursive: true, force: true });
  mkdirSync(library);
  const load = loadavg()[0] as number;
  const timing = join(library, '..', `calibre-time-${process.pid}.txt`);
  const result = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', '-o', timing, 'calibredb', 'add', '-r', '--library-path', library, subset.root], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const [wall, user, system, peakKb] = readFileSync(timing, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number) as [number, number, number, number];
  const added = (result.stdout.match(/^Added book ids: (.*)$/m)?.[1] ?? '').split(',').filter((id) => id.trim() !== '').length;
  rmSync(library, { recursive: true, force: true });
  rmSync(timing, { force: true });
  return { seconds: wall, cpuSeconds: user + system, threadCpuSeconds: {}, load: [load, loadavg()[0] as number], added, unchanged: 0, failed: 0, peakRssMb: Math.round(peakKb / 1024) };
}

interface Version { label: string; tree: string; server?: string; calibre?: boolean }
const versions: Version[] = [{ label: 'after', tree: join(here, '..') }];
if (values.baseline) versions.unshift({ label: `before (${values.baseline})`, tree: baselineTree(values.baseline) });
if (values.database) versions.push({ label: 'after, postgres', tree: join(here, '..'), server: values.database });
if (values.calibre) versions.push({ label: 'calibredb add -r', tree: '', calibre: true });

/** A fresh, empty database on the server for one scan (its catalog is migrated when the scan opens it). */
async function freshDatabase(server: string, create: boolean): Promise<string> {
  const name = `bench_scan_${process.pid}`;
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    if (create) await client.query(`CREATE DATABASE ${name} TEMPLATE template0`);
  } finally {
    await client.end();
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}
const rounds = Number(values.rounds);
const wanted = values.only ? values.only.split(',') : undefined;
const sets = (await subsets()).filter((set) => !wanted || wanted.includes(set.name));
console.log(`workers ${workers}, ${nodeOptions.join(' ') || 'no node options'}, MALLOC_ARENA_MAX=${env.MALLOC_ARENA_MAX}, ${rounds} round(s), load ${loadNow()}`);

interface Row { subset: Subset; version: string; first: Figures; again?: Figures }
const rows: Row[] = [];
for (let round = 0; round < rounds; round++) {
  for (const [n, subset] of sets.entries()) {
    // Alternate which version goes first, so neither always meets the machine in the same state.
    const order = (round + n) % 2 === 0 ? versions : [...versions].reverse();
    for (const version of order) {
      if (version.calibre) {
        if (subset.name !== 'whole library') continue;
        const f = calibre(subset);
        rows.push({ subset, version: version.label, first: f });
        console.log(
          `${subset.name.padEnd(14)} ${version.label.padEnd(16)} ${String(subset.entries).padStart(5)} entries: wall ${f.seconds.toFixed(1)} s, CPU ${f.cpuSeconds.toFixed(1)} s, ` +
            `peak ${f.peakRssMb} MB, added ${f.added}, load ${f.load[0].toFixed(1)}→${f.load[1].toFixed(1)}`,
        );
        continue;
      }
      const dataDir = join(here, '.corpus', `data-${process.pid}`);
      rmSync(dataDir, { recursive: true, force: true });
      const database = version.server ? await freshDatabase(version.server, true) : undefined;
      const first = scan(version.tree, subset, dataDir, database);
      const again = subset.name === 'whole library' || subset.name === 'synthetic' ? scan(version.tree, subset, dataDir, database) : undefined;
      if (!values.keep) {
        rmSync(dataDir, { recursive: true, force: true });
        if (version.server) await freshDatabase(version.server, false);
      }
      rows.push({ subset, version: version.label, first, ...(again ? { again } : {}) });
      const f = first;
      console.log(
        `${subset.name.padEnd(14)} ${version.label.padEnd(16)} ${String(subset.entries).padStart(5)} entries ${(subset.bytes / 1048576).toFixed(0).padStart(4)} MB: ` +
          `${(subset.entries / f.seconds).toFixed(1).padStart(6)} books/s, ${((f.cpuSeconds * 1000) / subset.entries).toFixed(1).padStart(6)} ms CPU/book, ` +
          `wall ${f.seconds.toFixed(1)} s, CPU ${f.cpuSeconds.toFixed(1)} s, peak ${f.peakRssMb} MB, added ${f.added}, failed ${f.failed}, load ${f.load[0].toFixed(1)}→${f.load[1].toFixed(1)}` +
          (again ? `; unchanged rescan ${again.seconds.toFixed(2)} s, CPU ${again.cpuSeconds.toFixed(2)} s, peak ${again.peakRssMb} MB` : ''),
      );
      console.log(`${''.padEnd(32)}CPU ms/book by thread: ${perThread(f, subset.entries)}`);
      const t = f.thumbnails;
      if (t) {
        console.log(
          `${''.padEnd(32)}thumbnails after the scan: ${t.pending} to make; the first page's 50 in ${(t.firstPageSeconds * 1000).toFixed(0)} ms, ` +
            `all in ${t.allSeconds.toFixed(1)} s (${((t.cpuSeconds * 1000) / t.pending).toFixed(1)} ms CPU each), peak ${t.peakRssMb} MB`,
        );
      }
    }
  }
}

function perThread(f: Figures, books: number): string {
  return Object.entries(f.threadCpuSeconds)
    .filter(([, seconds]) => seconds > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([name, seconds]) => `${name} ${((seconds * 1000) / books).toFixed(2)}`)
    .join(', ');
}

// The table: the median over the rounds of each version, per subset.
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
console.log(`\n| format | entries | MB | ${versions.map((v) => `${v.label}: books/s | CPU ms/book | wall s | peak MB`).join(' | ')} |`);
console.log(`|---|---|---|${versions.map(() => '---|---|---|---').join('|')}|`);
for (const subset of sets) {
  const cells = versions.map((v) => {
    const mine = rows.filter((r) => r.subset === subset && r.version === v.label).map((r) => r.first);
    if (mine.length === 0) return '– | – | – | –';
    return [
      median(mine.map((f) => subset.entries / f.seconds)).toFixed(1),
      median(mine.map((f) => (f.cpuSeconds * 1000) / subset.entries)).toFixed(1),
      median(mine.map((f) => f.seconds)).toFixed(1),
      String(median(mine.map((f) => f.peakRssMb))),
    ].join(' | ');
  });
  console.log(`| ${subset.name} | ${subset.entries} | ${(subset.bytes / 1048576).toFixed(0)} | ${cells.join(' | ')} |`);
}
for (const v of versions) {
  const again = rows.filter((r) => r.version === v.label && r.again).map((r) => r.again as Figures);
  if (again.length > 0) console.log(`unchanged rescan, ${v.label}: ${median(again.map((f) => f.seconds)).toFixed(2)} s wall, ${median(again.map((f) => f.cpuSeconds)).toFixed(2)} s CPU, peak ${median(again.map((f) => f.peakRssMb))} MB`);
}
for (const v of versions) {
  const made = rows.filter((r) => r.version === v.label && r.first.thumbnails).map((r) => r.first.thumbnails as ThumbnailFigures);
  if (made.length > 0) {
    console.log(
      `thumbnails after the scan, ${v.label}: first page of 50 ${(median(made.map((t) => t.firstPageSeconds)) * 1000).toFixed(0)} ms, all ${median(made.map((t) => t.allSeconds)).toFixed(1)} s, ` +
        `${median(made.map((t) => t.cpuSeconds)).toFixed(1)} s CPU`,
    );
  }
}
console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
