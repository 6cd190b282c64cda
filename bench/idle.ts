// npm run bench:idle [-- --catalogs empty,1000,100000] [--baseline 59088d9] [--variant 'arena1:MALLOC_ARENA_MAX=1'] [--calibre]
// Idle memory of `bindery serve` (the bundle, started with the flags and environment bin/bindery gives it): RSS, PSS,
// USS and anonymous memory 5 s and 30 s after the start, then right after a burst of feed pages (OPDS 1.2 and 2.0,
// Komga, the app API, the web UI's book pages) and 30 s after it, on an empty data dir and on catalogs of synthetic
// books. --baseline REF builds that commit's bundle and runs it beside this tree's; --variant LABEL:ENV=V,--flag runs
// this tree's bundle with other environment or V8 flags. Versions of one catalog run at the same time (each on its
// own copy), so they meet the same machine. --calibre also runs Debian's calibre-server on a calibre library of the
// same number of books (made once by calibredb, kept under bench/.corpus/) with a burst of its OPDS pages. --breakdown
// prints, for the last version, what is resident by mapping. Linux only (/proc).
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { containerXml, jpeg, writeZip } from '../test/helpers/epub-fixtures.ts';
import { baselineTree } from './baseline-tree.ts';
import { freePort, memoryMb, preciseCpuMs, processTree, ROOT, SERVE_ENV, SERVE_NODE_FLAGS, startDaemon, type DaemonProcess, type Launcher, type MemoryFigures } from './daemon-process.ts';
import { basicFor, writeBenchCatalog } from './inject-bench-setup.ts';

const { values } = parseArgs({
  options: {
    catalogs: { type: 'string', default: 'empty,1000,100000' },
    baseline: { type: 'string' },
    variant: { type: 'string', multiple: true, default: [] },
    calibre: { type: 'boolean', default: false },
    'calibre-books': { type: 'string', default: '1000' },
    'burst-pages': { type: 'string', default: '40' },
    // Seconds after the burst to sample at (the feed page cache keeps a page for 60 s).
    'after-burst': { type: 'string', default: '30,90' },
    breakdown: { type: 'boolean', default: false },
  },
});
const burstPages = Number(values['burst-pages']);
const afterBurst = values['after-burst'].split(',').map(Number);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const load = (): string => loadavg().map((l) => l.toFixed(1)).join(' ');
const mb = (n: number): string => n.toFixed(1);

interface Version {
  label: string;
  launcher: Launcher;
}

/** A bundle of this tree (scripts/build.ts) or of another commit's tree (its own scripts/build.ts), run as bin/bindery runs it. */
async function bundleOf(tree: string, outDir: string): Promise<string> {
  const { build } = (await import(join(tree, 'scripts', 'build.ts'))) as { build: (dir: string, options: { quiet: boolean }) => Promise<void> };
  await build(outDir, { quiet: true });
  return join(outDir, 'cli.mjs');
}

function launcherFor(label: string, cli: string, env: NodeJS.ProcessEnv, flags: string[]): Launcher {
  return { name: label, command: process.execPath, args: [...flags, cli], env };
}

const versions: Version[] = [];
/** The baseline's own tree: it writes the catalogs, since older code refuses a catalog newer code has migrated. */
let baselineDir: string | undefined;
if (values.baseline) {
  const tree = baselineTree(values.baseline);
  baselineDir = tree;
  const cli = await bundleOf(tree, join(tree, '.bundle'));
  // The flags and environment that commit's bin/bindery gave `serve` (59088d9: MALLOC_ARENA_MAX=2, 8 MB semi-spaces).
  const theirs = (await import(join(tree, 'bench', 'daemon-process.ts'))) as { SERVE_NODE_FLAGS: string; SERVE_ENV?: NodeJS.ProcessEnv };
  versions.push({ label: `before (${values.baseline})`, launcher: launcherFor('before', cli, theirs.SERVE_ENV ?? { MALLOC_ARENA_MAX: '2' }, theirs.SERVE_NODE_FLAGS.split(' ')) });
}
const ours = await bundleOf(ROOT, join(ROOT, 'node_modules', '.cache', 'bindery-bench-idle'));
versions.push({ label: 'after', launcher: launcherFor('after', ours, SERVE_ENV, SERVE_NODE_FLAGS.split(' ')) });
for (const spec of values.variant) {
  const [label, settings = ''] = spec.split(/:(.*)/s);
  const env: NodeJS.ProcessEnv = { ...SERVE_ENV };
  const flags = SERVE_NODE_FLAGS.split(' ');
  for (const item of settings.split(',').filter(Boolean)) {
    if (item.startsWith('--')) flags.push(item);
    else {
      const [name, value = ''] = item.split(/=(.*)/s);
      env[name as string] = value;
    }
  }
  versions.push({ label: label as string, launcher: launcherFor(label as string, ours, env, flags) });
}

/** Anonymous memory (heaps, stacks, malloc), the part no other process shares. */
function anonymousMb(pid: number): number {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  return Number(/^Anonymous:\s+(\d+) kB/m.exec(text)?.[1] ?? Number.NaN) / 1024;
}

interface Sample extends MemoryFigures {
  anon: number;
}

/** Summed over the process and its children (calibre-server's workers; bindery has none). */
function sample(pid: number): Sample {
  const sum: Sample = { rss: 0, pss: 0, uss: 0, anon: 0 };
  for (const member of processTree(pid)) {
    try {
      const m = memoryMb(member);
      sum.rss += m.rss;
      sum.pss += m.pss;
      sum.uss += m.uss;
      sum.anon += anonymousMb(member);
    } catch {
      // ended meanwhile
    }
  }
  return sum;
}

const figure = (s: Sample): string => `${mb(s.rss)} / ${mb(s.pss)} / ${mb(s.uss)} / ${mb(s.anon)}`;

/** What is resident, by mapping: the node binary (code and read-only data, ICU data among it), libraries, heaps. */
function breakdown(pid: number): string {
  const byMapping = new Map<string, { rss: number; anon: number }>();
  let current = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const [, perms, path] = head as unknown as [string, string, string];
      current = path.startsWith('/') ? `${path.split('/').pop() as string}${perms.includes('x') ? ' (code)' : ' (data)'}` : path || '[anonymous]';
      continue;
    }
    const field = /^(Rss|Anonymous):\s+(\d+) kB/.exec(line);
    if (!field) continue;
    const entry = byMapping.get(current) ?? { rss: 0, anon: 0 };
    if (field[1] === 'Rss') entry.rss += Number(field[2]) / 1024;
    else entry.anon += Number(field[2]) / 1024;
    byMapping.set(current, entry);
  }
  return [...byMapping]
    .filter(([, e]) => e.rss >= 0.5)
    .sort((a, b) => b[1].rss - a[1].rss)
    .map(([name, e]) => `  ${name}: ${mb(e.rss)} MB${e.anon > 0.1 ? ` (anonymous ${mb(e.anon)})` : ''}`)
    .join('\n');
}

interface Timeline {
  label: string;
  startMs: number;
  startCpuMs: number;
  at5: Sample;
  at30: Sample;
  burst?: { pages: number; cpuMs: number; after: Sample; idle: Sample[] };
  breakdown?: string;
}

/** Samples at 5 and 30 s after the start, then (with `burst`) right after the burst and 30 s after it. */
async function timeline(label: string, pid: number, startedAt: number, burst?: () => Promise<number>): Promise<Omit<Timeline, 'startMs' | 'startCpuMs'>> {
  await sleep(Math.max(0, startedAt + 5000 - performance.now()));
  const at5 = sample(pid);
  await sleep(Math.max(0, startedAt + 30_000 - performance.now()));
  const at30 = sample(pid);
  if (!burst) return { label, at5, at30 };
  const cpuBefore = preciseCpuMs(pid);
  const pages = await burst();
  const cpuMs = preciseCpuMs(pid) - cpuBefore;
  const burstEnd = performance.now();
  const after = sample(pid);
  const idle: Sample[] = [];
  for (const seconds of afterBurst) {
    await sleep(Math.max(0, burstEnd + seconds * 1000 - performance.now()));
    idle.push(sample(pid));
  }
  return { label, at5, at30, burst: { pages, cpuMs, after, idle }, breakdown: values.breakdown ? breakdown(pid) : undefined };
}

/** Feed pages as the devices and apps ask for them, `burstPages` of each kind, two at a time. */
async function feedBurst(daemon: DaemonProcess): Promise<number> {
  const login = await fetch(`${daemon.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'admin-password' }) });
  const { accessToken } = (await login.json()) as { accessToken: string };
  const bearer = { authorization: `Bearer ${accessToken}` };
  const basic = { authorization: basicFor('phone') };
  const kinds: [(p: number) => string, Record<string, string>][] = [
    [(p) => `/api/v1/opds/catalog?page=${p + 1}`, basic],
    [(p) => `/api/v2/opds/catalog?page=${p + 1}`, { ...basic, accept: 'application/opds+json' }],
    [(p) => `/komga/api/v1/books?page=${p}`, basic],
    [(p) => `/komga/api/v1/series?page=${p}`, basic],
    [(p) => `/api/v1/app/books?page=${p}&size=50`, bearer],
    [(p) => `/api/v1/books/page?size=50&page=${p}`, bearer],
  ];
  let pages = 0;
  for (const [path, headers] of kinds) {
    for (let p = 0; p < burstPages; p += 2) {
      await Promise.all(
        [p, p + 1].map(async (page) => {
          const res = await fetch(`${daemon.url}${path(page)}`, { headers });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`${path(page)}: ${res.status}`);
          pages++;
        }),
      );
    }
  }
  return pages;
}

function print(catalog: string, results: Timeline[]): void {
  console.log(`\n${catalog} (RSS / PSS / USS / anonymous, MB; load ${load()})`);
  console.log(`| version | start to first 200 (CPU) | at 5 s | at 30 s | burst: pages, server CPU | right after |${afterBurst.map((t) => ` ${t} s after |`).join('')}`);
  console.log(`|---|---|---|---|---|---|${afterBurst.map(() => '---|').join('')}`);
  for (const r of results) {
    const burst = r.burst ? `${r.burst.pages}, ${r.burst.cpuMs.toFixed(0)} ms | ${figure(r.burst.after)} | ${r.burst.idle.map(figure).join(' | ')}` : ` |${afterBurst.map(() => ' |').join('')}`;
    console.log(`| ${r.label} | ${r.startMs.toFixed(0)} ms (${r.startCpuMs.toFixed(0)} ms) | ${figure(r.at5)} | ${figure(r.at30)} | ${burst} |`);
  }
  for (const r of results) if (r.breakdown) console.log(`resident, ${r.label}, ${afterBurst.at(-1)} s after the burst:\n${r.breakdown}`);
}

console.log(`machine: ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, node ${process.version}, load ${load()}`);
for (const version of versions) console.log(`${version.label}: node ${version.launcher.args.slice(0, -1).join(' ')} with ${JSON.stringify(version.launcher.env)}`);

// Bare node, for scale.
{
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 1e6)'], { stdio: 'ignore' });
  await sleep(5000);
  console.log(`bare node, 5 s: ${figure(sample(child.pid as number))} (RSS / PSS / USS / anonymous, MB)`);
  child.kill();
}

for (const catalog of values.catalogs.split(',').filter(Boolean)) {
  const books = catalog === 'empty' ? 0 : Number(catalog);
  const dir = mkdtempSync(join(tmpdir(), 'bindery-idle-bench-'));
  try {
    if (books > 0) {
      const settings = ['opds_server_enabled', 'komga_api_enabled'];
      if (baselineDir) execFileSync(process.execPath, [join(import.meta.dirname, 'baseline-catalog.ts'), baselineDir, join(dir, 'template'), String(books), settings.join(','), '0'], { stdio: 'ignore' });
      else await (await writeBenchCatalog(join(dir, 'template'), books, settings)).store.close();
    }
    const results = await Promise.all(
      versions.map(async (version, i): Promise<Timeline> => {
        const dataDir = join(dir, `v${i}`);
        if (books > 0) cpSync(join(dir, 'template'), dataDir, { recursive: true });
        else mkdirSync(dataDir);
        const startedAt = performance.now();
        const daemon = await startDaemon(version.launcher, { dataDir, env: { BINDERY_LOG_LEVEL: 'warn' } });
        try {
          const line = await timeline(version.label, daemon.pid, startedAt, books > 0 ? () => feedBurst(daemon) : undefined);
          return { ...line, startMs: daemon.startupMs, startCpuMs: daemon.startupCpuMs };
        } finally {
          await daemon.stop('SIGTERM');
        }
      }),
    );
    print(catalog === 'empty' ? 'empty data dir' : `${books.toLocaleString('en')} books`, results);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (values.calibre) await calibreServer(Number(values['calibre-books']));

/** A calibre library of `count` EPUBs with covers, made once by calibredb and kept. */
async function calibreLibrary(count: number): Promise<string> {
  const base = join(import.meta.dirname, '.corpus', `calibre-library-${count}`);
  const library = join(base, 'library');
  if (existsSync(join(base, '.complete'))) return library;
  rmSync(base, { recursive: true, force: true });
  const incoming = join(base, 'incoming');
  mkdirSync(incoming, { recursive: true });
  mkdirSync(library, { recursive: true });
  const cover = await jpeg(600, 900, '#357');
  for (let i = 1; i <= count; i++) {
    const opf = `<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf"><dc:title>Book Number ${i}</dc:title><dc:creator opf:role="aut">Ann Author${i % 97}</dc:creator><dc:subject>Genre ${i % 13}</dc:subject><dc:language>en</dc:language><dc:identifier id="id">urn:bench:${i}</dc:identifier><meta name="cover" content="cover"/></metadata><manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/><item id="cover" href="cover.jpg" media-type="image/jpeg"/></manifest><spine><itemref idref="c1"/></spine></package>`;
    await writeZip(join(incoming, `book-${i}.epub`), [
      { name: 'META-INF/container.xml', data: containerXml('content.opf') },
      { name: 'content.opf', data: opf },
      { name: 'c1.xhtml', data: `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>c</title></head><body><p>Text of book ${i}.</p></body></html>` },
      { name: 'cover.jpg', data: cover },
    ]);
  }
  const started = performance.now();
  execFileSync('calibredb', ['--library-path', library, 'add', '--recurse', incoming], { env: { ...process.env, CALIBRE_CONFIG_DIRECTORY: join(base, 'config') }, stdio: 'ignore' });
  console.log(`calibre library: ${count} books added by calibredb in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  rmSync(incoming, { recursive: true, force: true });
  writeFileSync(join(base, '.complete'), '');
  return library;
}

/** calibre-server on the library, sampled like the daemon; its burst is OPDS pages of the newest books. */
async function calibreServer(count: number): Promise<void> {
  const library = await calibreLibrary(count);
  const port = await freePort();
  const config = mkdtempSync(join(tmpdir(), 'bindery-idle-calibre-'));
  const startedAt = performance.now();
  const child = spawn('calibre-server', ['--listen-on', '127.0.0.1', '--port', String(port), library], { env: { ...process.env, CALIBRE_CONFIG_DIRECTORY: config }, stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  try {
    for (;;) {
      try {
        if ((await fetch(`${url}/opds`)).ok) break;
      } catch {
        // not listening yet
      }
      await sleep(20);
    }
    const startMs = performance.now() - startedAt;
    const pid = child.pid as number;
    const startCpuMs = preciseCpuMs(pid);
    const line = await timeline('calibre-server', pid, startedAt, async () => {
      let pages = 0;
      // The newest books, 50 to an OPDS page (calibre's default page size for its OPDS feeds is 50).
      const newest = `/opds/navcatalog/${Buffer.from('Onewest').toString('hex')}`;
      for (let p = 0; p < burstPages * 6; p += 2) {
        await Promise.all(
          [p, p + 1].map(async (page) => {
            const res = await fetch(`${url}${newest}?offset=${(page * 50) % count}`);
            await res.arrayBuffer();
            if (res.status !== 200) throw new Error(`calibre ${newest}: ${res.status}`);
            pages++;
          }),
        );
      }
      return pages;
    });
    print(`calibre-server ${execFileSync('calibre-server', ['--version'], { encoding: 'utf8' }).trim()}, ${count} books`, [{ ...line, startMs, startCpuMs }]);
  } finally {
    child.kill('SIGTERM');
    rmSync(config, { recursive: true, force: true });
  }
}
