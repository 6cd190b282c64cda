// npm run bench:feeds [-- --books 1000,100000] [--duration 5] [--pages 50] [--only opds] [--connections 8,64] [--baseline main] [--kobo-sessions 5]
//                     [--rounds N] [--turns page|round] [--settle S] [--warmup S]
//                     [--spread 200|all] [--writer MS] [--writer-kind rename|progress] [--cold] [--accept-encoding gzip]
//                     [--compression] [--loop-stats] [--cpu-prof DIR] [--placement shared,process,pinned,niced]
//                     [--generator autocannon|lean] [--basic-reader reader|admin]
// The paged answers devices and apps ask for, over real HTTP against `bindery serve` (a child process, from the
// sources) on a synthetic catalog (bench/book-catalog.ts) of each size: OPDS 1.2 and 2.0 catalog pages, Komga book
// and series pages, app API book pages (newest first, by title, series and page count, and deep pages three quarters
// into the list), the web UI's /api/v1/books/page (first and deep pages), and Kobo sync pages.
// For each: the server's CPU per page alone (one request at a time, /proc/<pid>/stat of the daemon) the first time a
// page is asked for, on the pages asked first ("first asked": for the first endpoint, a daemon that just started) and
// then on a warm daemon ("built"), again on an unchanged catalog ("kept"), and the first page asked for right after
// another process renamed a book (which also redoes what the feed's pages share: id lists, totals), then autocannon at
// 8 and 64 connections
// paging through 200 pages: requests/s, p50, p99, max and server CPU per request, with the load average; after the
// load runs, server CPU per page for pages never asked for before ("never rendered"), on a daemon warmed by them.
// Before the load runs (without --spread all or --writer), a build wave: each of the 200 pages asked once at the largest
// --connections, none of them kept yet, so every load run after it starts from kept pages whatever its placement. The Kobo sync
// pages are one device's session (each page moves that device's sync state, so there is no concurrent run of it).
// --baseline REF also starts the code of git REF (bench/baseline-tree.ts) on a copy of the same catalog (written by
// REF's code, migrated forward by this tree's daemon), both daemons started together. The single-request passes, the
// rounds and the first Kobo session take turns page by page (which version goes first alternating), and before each
// endpoint after the first (and the rounds, and the Kobo sync) the bench waits until both daemons have been quiet for
// --settle seconds (default 10: a daemon makes its idle collection some seconds after a load run). Measured one
// after the other, the version measured second read up to 0.5 ms a page lower, whichever code it ran. The load runs
// stay one version after the other.
// Keeping pages being built under load (by default, after the first 200 requests every answer is a kept page):
// --spread all  every request asks for a page not asked before, over the whole catalog (continuing from one run to
//               the next; the share of fresh pages is printed, as a small catalog runs out of them);
// --writer MS   another process (bench/catalog-writer.ts) renames a book every MS ms during each run, which drops
//               every kept page and kept id list;
// --writer-kind progress  instead, a reader's device reports reading progress on a book every MS ms through the
//               daemon's app API (signed in as the benchmark's user): pages showing progress are built again, the
//               lists and totals under them are kept;
// --cold        for the HTTP Basic feeds, a first wave: one request on each of the 64 (the largest --connections)
//               connections at once, signed in with an OPDS account created just before (no credential remembered,
//               every page to build);
// --accept-encoding  what the load runs send (autocannon sends none, most real clients send gzip);
// --compression  what each encoder and level costs on these pages (CPU ms per page, bytes), in this process.
// --kobo-sessions N  N rounds of a new device's whole sync on each daemon in turn, which goes first alternating (the
//               first round left out): median CPU of the middle pages; between each two pages of a session one page of
//               OPDS 1.2 or the app API, out of 10 asked before the session (so kept), shows whether the session keeps
//               the other feeds' pages.
// --cpu-prof DIR  the daemons write V8 CPU profiles into DIR/<version> when they stop.
// --rounds N    after each endpoint's row, N rounds of its pages 0…--pages-1 built again, the versions taking turns
//               going first: the median and range of each version's server CPU per built page over the rounds, on a
//               warm daemon (a busy machine swings a single pass by a factor of two). Before each round a book is
//               renamed in each version's catalog (as for "first after a change"), which drops every kept page, and one
//               page outside the measured ones is asked for unmeasured, which redoes what the feed's pages share (its
//               id list, totals): each measured page is then built as "built" builds it. (A query
//               parameter of the round would not do: /api/v1/books/page keeps its pages by page, size and sort only.)
// --turns page|round  with --baseline, how the rounds' versions take turns: page (the default) asks each version for
//               page 0, then each for page 1…; round asks one version for the whole round's pages, then the other
//               (which goes first alternating by round). Taking turns page by page cancels more of a busy machine's
//               drift, but each page then finds the caches the other daemon just used: on a quiet machine it reads a
//               built Komga page ~0.4 ms dearer than one daemon alone does (session 14); round by round reads close to it.
// --warmup S    after the build wave, a load run of S seconds printed apart (V8 optimizing the answers' code), so the
//               load runs after it measure a daemon that has been serving for a while.
// --settle S    seconds both daemons must have been quiet (under a tenth of a core) before an endpoint's passes, its
//               rounds and the Kobo sync (at most a minute; 0: no wait).
// --loop-stats  what the daemon's main thread went through during each load run (bench/loop-probe.ts, preloaded into
//               both versions): event-loop delay p50/p99/max, event-loop utilization, GC pauses (count, ms and the
//               longest, by kind), the young generation's bytes allocated per request, the main thread's time waiting
//               for a CPU in the run queue, and the load generator's own CPU and event-loop delay (it shares the cores).
// --placement   where each load run's generator (autocannon, bench/load-client.ts) runs; several, comma-separated, are
//               each run in turn at each --connections: shared (the default: in this process, any CPU), process (a
//               process of its own, any CPU), pinned (a process of its own on the last CPU, every thread of the daemon
//               on the others while the load runs: a deployment's clients are on other machines), niced (a process of
//               its own at nice 19). "CPU ms/req" is then the daemon's and the load generator's.
// --generator   autocannon (the default) or lean (bench/load-client.ts: a plain keep-alive HTTP/1.1 client, which
//               spends a fraction of autocannon's CPU per request; on kept pages autocannon spends more than the daemon).
// --basic-reader  whom the HTTP Basic feeds (OPDS, Komga) sign in as: reader (the default: a user with a content
//               restriction and no reading progress) or admin (no restriction, progress on one book in ten: 10,000 at
//               100,000 books, two thirds of them in the Unknown Series).
import Database from 'better-sqlite3';
import bcrypt from 'bcryptjs';
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';
import { koboSettingsFor } from '../src/core/kobo/sync-settings.ts';
import { fromSource, preciseCpuMs as cpuMs, rssMb, startDaemon, threadsCpuMs, type DaemonProcess, type Launcher } from './daemon-process.ts';
import { baselineTree } from './baseline-tree.ts';
import { basicFor, writeBenchCatalog } from './inject-bench-setup.ts';
import { fire, LOAD_CLIENT_READY, type LoadFigures, type LoadGenerator, type LoadOrder } from './load-client.ts';

const { values } = parseArgs({
  options: {
    books: { type: 'string', default: '1000,100000' },
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '0' },
    pages: { type: 'string', default: '50' },
    connections: { type: 'string', default: '8,64' },
    only: { type: 'string', default: '' },
    baseline: { type: 'string' },
    spread: { type: 'string', default: '200' },
    writer: { type: 'string', default: '' },
    'writer-kind': { type: 'string', default: 'rename' },
    cold: { type: 'boolean', default: false },
    'accept-encoding': { type: 'string', default: '' },
    compression: { type: 'boolean', default: false },
    'loop-stats': { type: 'boolean', default: false },
    'kobo-sessions': { type: 'string', default: '0' },
    'cpu-prof': { type: 'string' },
    rounds: { type: 'string', default: '0' },
    settle: { type: 'string', default: '10' },
    turns: { type: 'string', default: 'page' },
    placement: { type: 'string', default: 'shared' },
    generator: { type: 'string', default: 'autocannon' },
    'basic-reader': { type: 'string', default: 'reader' },
  },
});
const spreadAll = values.spread === 'all';
const spreadPages = spreadAll ? Number.POSITIVE_INFINITY : Number(values.spread);
const writerEvery = values.writer ? Number(values.writer) : 0;
const writerKind = values['writer-kind'];
if (values.turns !== 'page' && values.turns !== 'round') throw new Error(`--turns: page or round, not ${values.turns}`);
if (writerKind !== 'rename' && writerKind !== 'progress') throw new Error(`--writer-kind: rename or progress, not ${writerKind}`);
const loadHeaders: Record<string, string> = values['accept-encoding'] ? { 'accept-encoding': values['accept-encoding'] } : {};
const sizes = values.books.split(',').map(Number);
const duration = Number(values.duration);
const warmupSeconds = Number(values.warmup);
const alonePages = Number(values.pages);
const connectionCounts = values.connections.split(',').map(Number);
const load = (): string => loadavg()[0]!.toFixed(1);
if (values.generator !== 'autocannon' && values.generator !== 'lean') throw new Error(`--generator: autocannon or lean, not ${values.generator}`);
const generator: LoadGenerator = values.generator;
if (values['basic-reader'] !== 'reader' && values['basic-reader'] !== 'admin') throw new Error(`--basic-reader: reader or admin, not ${values['basic-reader']}`);
// The OPDS account the HTTP Basic feeds sign in with (inject-bench-setup.ts): the reader's, or the admin's.
const basicAccount = values['basic-reader'] === 'admin' ? 'kobo' : 'phone';

interface Endpoint {
  label: string;
  path: (page: number) => string;
  headers: (run: Running) => Record<string, string>;
  /** Items a page holds (to turn a total of items into pages). */
  perPage: number;
  /** Signed in with HTTP Basic (an OPDS account). */
  basic: boolean;
  /** The list's page that `path(0)` asks for (the deep endpoints start far into their list). */
  firstPage?: number;
}

interface Version {
  label: string;
  launcher: Launcher;
  /** The data folder of this version's daemon, under the size's folder. */
  folder: string;
}
const versions: Version[] = [{ label: 'after', launcher: fromSource, folder: 'after' }];
const baseline = values.baseline ? baselineTree(values.baseline) : undefined;
if (baseline) versions.unshift({ label: `before (${values.baseline})`, launcher: { ...fromSource, name: 'baseline', command: join(baseline, 'bin', 'bindery') }, folder: 'before' });

const SETTINGS = ['opds_server_enabled', 'komga_api_enabled'];

/**
 * The catalog in each version's folder. With a baseline it is written by the baseline's code and copied for this
 * tree's daemon, which migrates it forward when it starts (older code refuses a catalog newer code has migrated);
 * each daemon has its own copy, so the baseline never reads this tree's schema.
 */
async function writeCatalogs(dir: string, books: number): Promise<{ readerId: number; koboToken: string }> {
  const kobo = Math.min(books, 10_000);
  for (const version of versions) mkdirSync(join(dir, version.folder));
  if (!baseline) {
    const written = await writeBenchCatalog(join(dir, 'after'), books, SETTINGS, { kobo });
    const koboToken = (await koboSettingsFor(written.store.db, written.readerId)).token;
    await written.store.close();
    return { readerId: written.readerId, koboToken };
  }
  const output = execFileSync(process.execPath, [join(import.meta.dirname, 'baseline-catalog.ts'), baseline, join(dir, 'before'), String(books), SETTINGS.join(','), String(kobo)], { encoding: 'utf8' });
  const lines = output.trim().split('\n');
  for (const line of lines.slice(0, -1)) console.log(line);
  copyFileSync(join(dir, 'before', 'bindery.sqlite'), join(dir, 'after', 'bindery.sqlite'));
  return JSON.parse(lines.at(-1) as string) as { readerId: number; koboToken: string };
}

interface Running {
  version: Version;
  daemon: DaemonProcess;
  bearer: Record<string, string>;
  /** The version's catalog file. */
  catalog: string;
  /** The version's data folder. */
  dir: string;
}

/** The file a daemon's loop probe writes to (--loop-stats). */
const probeFile = (dir: string): string => join(dir, 'loop-probe.json');

async function start(version: Version, dir: string): Promise<Running> {
  const probe: NodeJS.ProcessEnv = values['loop-stats']
    ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${join(import.meta.dirname, 'loop-probe.ts')}`.trim(), BINDERY_BENCH_LOOP_PROBE: probeFile(dir) }
    : {};
  const profile = values['cpu-prof'] ? join(values['cpu-prof'], version.folder) : undefined;
  const nodeOptions = [probe.NODE_OPTIONS ?? process.env.NODE_OPTIONS ?? '', profile ? `--cpu-prof --cpu-prof-dir=${profile}` : ''].join(' ').trim();
  const daemon = await startDaemon(version.launcher, { dataDir: dir, env: { BINDERY_LOG_LEVEL: 'warn', ...probe, ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}) } });
  const login = await fetch(`${daemon.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'admin-password' }) });
  const { accessToken } = (await login.json()) as { accessToken: string };
  return { version, daemon, bearer: { authorization: `Bearer ${accessToken}` }, catalog: join(dir, 'bindery.sqlite'), dir };
}

interface LoopReport {
  delay: { p50: number; p99: number; p999: number; max: number; mean: number };
  utilization: number;
  served: { p50: number; p99: number; max: number; count: number };
  slowest: { url: string; ms: number; atMs: number }[];
  connections: number;
  lastAcceptMs: number;
  gc: Record<string, { count: number; ms: number; maxMs: number }>;
  heapUsedMb: number;
  rssMb: number;
  youngAllocatedMb: number;
}

/** What the daemon's loop probe saw since it was last asked (and starts it over). */
async function loopReport(run: Running): Promise<LoopReport> {
  const file = probeFile(run.dir);
  rmSync(file, { force: true });
  process.kill(run.daemon.pid, 'SIGUSR2');
  for (let waited = 0; waited < 10_000; waited += 5) {
    if (existsSync(file)) {
      try {
        return JSON.parse(readFileSync(file, 'utf8')) as LoopReport;
      } catch {
        // still being written
      }
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('the daemon\'s loop probe did not answer');
}

/** Time the daemon's main thread has spent waiting in the run queue for a CPU, in ms (/proc schedstat, Linux). */
function runQueueWaitMs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
}

/** The slowest requests inside each daemon, per load run (--loop-stats), printed after the table. */
const slowestServed: string[] = [];

/** Starts watching the daemon for --loop-stats; the function returned gives the figures of the time since. */
async function watchLoop(run: Running): Promise<(client: LoadFigures) => Promise<string>> {
  await loopReport(run);
  const queued = runQueueWaitMs(run.daemon.pid);
  const started = performance.now();
  return async (client) => {
    const wall = performance.now() - started;
    const report = await loopReport(run);
    const wait = runQueueWaitMs(run.daemon.pid) - queued;
    const gc = (kind: string): string => {
      const p = report.gc[kind];
      return p ? `${p.count}/${p.ms.toFixed(0)}/${p.maxMs.toFixed(1)}` : '0/0/0';
    };
    slowestServed.push(`${run.version.label}, ${report.served.count} requests on ${report.connections} new connections (the last accepted at ${report.lastAcceptMs} ms): ${report.slowest.map((s) => `${s.ms} ms at ${s.atMs} ms ${s.url}`).join('; ')}`);
    const allocated = (report.youngAllocatedMb * 1024) / Math.max(1, report.served.count);
    return ` ${report.served.p50.toFixed(1)} / ${report.served.p99.toFixed(1)} / ${report.served.max.toFixed(0)} | ${report.delay.p50} / ${report.delay.p99} / ${report.delay.max} | ${(report.utilization * 100).toFixed(0)} % | ${gc('minor')} · ${gc('major')} · ${gc('incremental')} | ${((wait / wall) * 100).toFixed(0)} % | ${((client.clientCpuMs / client.clientWallMs) * 100).toFixed(0)} %, loop delay p99 / max ${client.clientLoopDelayP99Ms.toFixed(0)} / ${client.clientLoopDelayMaxMs.toFixed(0)} ms | ${allocated.toFixed(1)} | ${report.heapUsedMb.toFixed(0)} / ${report.rssMb.toFixed(0)} |`;
  };
}

/** The path of a page with a benchmark's own query parameter: a page of its own for the daemon's page cache. */
const tagged = (path: string, tag: string): string => (tag === '' ? path : `${path}${path.includes('?') ? '&' : '?'}${tag}`);

/**
 * Server CPU per page, one request at a time: the first time each page is asked for, then again. Pages
 * `alonePages`…2×`alonePages`-1 are built first ("first asked"): the first endpoint of a run is otherwise measured
 * on a daemon that has just started, whose code V8 has not compiled yet, and every later one on a daemon the runs
 * before it warmed up. A list with fewer than 2×`alonePages` pages (Komga's 997 series at 100,000 books: 50 pages)
 * would leave them empty, so it is pages 0…`alonePages`-1 under a query parameter of their own instead. "built" is
 * then pages 0…`alonePages`-1, built for the first time on a warm daemon. A full garbage collection (tens of ms,
 * mostly on V8's helper threads) that falls into a pass adds ~1 ms to its mean of 50 pages: the helper threads' share
 * is printed beside "built" to show when one did.
 *
 * The versions take turns page by page (each page asked of one, then of the other, the first alternating), so both
 * are measured at the same moments of the machine's load and of each other's background work; each version's figure
 * is its daemon's CPU over the whole pass.
 */
async function alone(running: readonly Running[], endpoint: Endpoint, bodies: Map<Running, Buffer[]>): Promise<Map<Running, AloneCost>> {
  const get = async (run: Running, page: number, tag = ''): Promise<number> => {
    const body = await ask(run, endpoint, tagged(endpoint.path(page), tag));
    const kept = bodies.get(run);
    if (kept && kept.length < 10) kept.push(body);
    return body.byteLength;
  };
  // Signs the OPDS account in once (password hashing is not what this measures), on a page not measured below.
  const pages = new Map<Running, number>();
  for (const run of running) pages.set(run, await pagesOf(run, endpoint, 'bench-sign-in=1'));
  for (const run of running) bodies.get(run)!.length = 0;
  const pass = async (first: number, tag = ''): Promise<Map<Running, { cpu: number; inGcThreads: number; bytes: number }>> => {
    const before = new Map(running.map((run) => [run, { cpu: cpuMs(run.daemon.pid), helpers: threadsCpuMs(run.daemon.pid, 'V8Worker'), bytes: 0 }]));
    for (let p = first; p < first + alonePages; p++) {
      for (const run of p % 2 === 0 ? running : [...running].reverse()) before.get(run)!.bytes += await get(run, p, tag);
    }
    return new Map(running.map((run) => {
      const start = before.get(run)!;
      return [run, { cpu: (cpuMs(run.daemon.pid) - start.cpu) / alonePages, inGcThreads: (threadsCpuMs(run.daemon.pid, 'V8Worker') - start.helpers) / alonePages, bytes: start.bytes / alonePages }];
    }));
  };
  const shortList = running.some((run) => pages.get(run)! < 2 * alonePages);
  const firstAsked = shortList ? await pass(0, 'bench-first-asked=1') : await pass(alonePages);
  const built = await pass(0);
  const kept = await pass(0);
  // The first page asked for after the catalog changed: it also redoes what the feed's pages share (id lists, totals).
  const changes = 5;
  const afterChange = new Map<Running, number>(running.map((run) => [run, 0]));
  for (let i = 0; i < changes; i++) {
    for (const run of i % 2 === 0 ? running : [...running].reverse()) {
      renameOneBook(run.catalog);
      const before = cpuMs(run.daemon.pid);
      await get(run, i * 7);
      afterChange.set(run, afterChange.get(run)! + cpuMs(run.daemon.pid) - before);
    }
  }
  return new Map(running.map((run) => [run, {
    firstAsked: firstAsked.get(run)!.cpu,
    built: built.get(run)!.cpu,
    builtInGcThreads: built.get(run)!.inGcThreads,
    kept: kept.get(run)!.cpu,
    afterChange: afterChange.get(run)! / changes,
    bytes: built.get(run)!.bytes,
  }]));
}

interface AloneCost {
  firstAsked: number;
  built: number;
  builtInGcThreads: number;
  kept: number;
  afterChange: number;
  bytes: number;
}

/**
 * Waits until every daemon has used under a tenth of a core for `--settle` seconds in a row (at most a minute): a
 * daemon that has just served a load run makes its idle collection some seconds later (src/daemon/idle-memory.ts), and
 * one version measured while the other is still in that state would be measured on a different heap.
 */
async function settle(running: readonly Running[]): Promise<void> {
  const quietFor = Number(values.settle) * 1000;
  if (quietFor <= 0) return;
  const lastBusy = new Map(running.map((run) => [run, performance.now()]));
  const last = new Map(running.map((run) => [run, cpuMs(run.daemon.pid)]));
  const started = performance.now();
  while (performance.now() - started < 60_000) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = performance.now();
    for (const run of running) {
      const used = cpuMs(run.daemon.pid);
      if (used - last.get(run)! > 100) lastBusy.set(run, now);
      last.set(run, used);
    }
    if (running.every((run) => now - lastBusy.get(run)! >= quietFor)) return;
  }
}

/** One answer of the endpoint (a 200, or the benchmark stops), as fetch decodes it. */
async function ask(run: Running, endpoint: Endpoint, path: string): Promise<Buffer> {
  const res = await fetch(`${run.daemon.url}${path}`, { headers: endpoint.headers(run) });
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body.toString().slice(0, 200)}`);
  return body;
}

/**
 * --rounds: each round changes every version's catalog (see renameOneBook: every kept page is dropped), asks each for
 * one page outside the measured ones (the feed's shared work, unmeasured), then for pages 0…alonePages-1, built again
 * on a warm daemon, the versions taking turns going first. Median (min–max) server CPU per page.
 */
async function builtRounds(running: readonly Running[], endpoint: Endpoint, rounds: number): Promise<string> {
  const perVersion = new Map<Running, number[]>(running.map((run) => [run, []]));
  const loads: string[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const run of running) {
      renameOneBook(run.catalog);
      // A page of its own under a query parameter: a list shorter than alonePages + 1 pages still has it.
      await ask(run, endpoint, tagged(endpoint.path(alonePages), `bench-round=${round}`));
    }
    if (values.turns === 'round') {
      for (const run of round % 2 === 0 ? running : [...running].reverse()) {
        const start = cpuMs(run.daemon.pid);
        for (let page = 0; page < alonePages; page++) await ask(run, endpoint, endpoint.path(page));
        perVersion.get(run)?.push((cpuMs(run.daemon.pid) - start) / alonePages);
      }
    } else {
      const before = new Map(running.map((run) => [run, cpuMs(run.daemon.pid)]));
      for (let page = 0; page < alonePages; page++) {
        for (const run of (round + page) % 2 === 0 ? running : [...running].reverse()) await ask(run, endpoint, endpoint.path(page));
      }
      for (const run of running) perVersion.get(run)?.push((cpuMs(run.daemon.pid) - before.get(run)!) / alonePages);
    }
    loads.push(load());
  }
  const cells = running.map((run) => {
    const sorted = [...(perVersion.get(run) ?? [])].sort((a, b) => a - b);
    return `${run.version.label} ${(sorted[Math.floor(sorted.length / 2)] ?? Number.NaN).toFixed(2)} (${sorted[0]?.toFixed(2)}–${sorted.at(-1)?.toFixed(2)})`;
  });
  return `${endpoint.label}, built in ${rounds} rounds of ${alonePages} pages, server CPU ms/page, median (range): ${cells.join(' → ')}; load ${loads.join(' / ')}`;
}

/**
 * Server CPU per page, one request at a time, for pages never asked for before, on daemons that have served this
 * endpoint's load runs (its id lists and totals kept) and then settled: pages
 * spreadPages+alonePages…spreadPages+2×alonePages-1, a gap past every page asked so far. Their books were never
 * rendered either: the books' kept rows (book-versions.ts, a few thousand books per kind) then hold only the load
 * runs' pages, which share no book with these. "built" measures the same kind of page in the daemon's first
 * hundred requests, while V8 is still compiling the code that builds it; here V8 may have flushed some of that code
 * during the quiet spell (docs/benchmarks.md, sessions 12 and 23). "–" where the list is shorter.
 */
async function neverRenderedOnWarmDaemons(running: readonly Running[], endpoint: Endpoint): Promise<Map<Running, string>> {
  const first = spreadPages + alonePages;
  const long = new Set<Running>();
  for (const run of running) if ((await pagesOf(run, endpoint)) >= (endpoint.firstPage ?? 0) + first + alonePages) long.add(run);
  // After its idle collection (a full collection of the heap the load runs grew), which would otherwise fall into the pass.
  await settle(running);
  const before = new Map([...long].map((run) => [run, { cpu: cpuMs(run.daemon.pid), helpers: threadsCpuMs(run.daemon.pid, 'V8Worker') }]));
  for (let p = first; p < first + alonePages; p++) {
    for (const run of p % 2 === 0 ? running : [...running].reverse()) if (long.has(run)) await ask(run, endpoint, endpoint.path(p));
  }
  return new Map([...before].map(([run, start]) => [run, `${((cpuMs(run.daemon.pid) - start.cpu) / alonePages).toFixed(2)} (${((threadsCpuMs(run.daemon.pid, 'V8Worker') - start.helpers) / alonePages).toFixed(2)})`]));
}

let renames = 0;
/** Changes the catalog from this process, as another process would (the daemon sees a new generation). */
function renameOneBook(catalog: string): void {
  const db = new Database(catalog);
  db.pragma('busy_timeout = 5000');
  db.prepare('UPDATE book_metadata SET title = ? WHERE book_id = (SELECT MIN(id) FROM book)').run(`Renamed ${++renames}`);
  db.close();
}

/**
 * Which page each request of the load runs asks for: the first 200 over and over, or (--spread all) every page of the
 * catalog once, in order, skipping the ones the single-request passes asked for and continuing across runs.
 */
class PagePlan {
  /** The paths asked for in turn, starting over at the end. */
  readonly paths: string[];
  private nextPath: number;
  private asked = 0;
  private fresh = 0;

  constructor(endpoint: Endpoint, pages: number) {
    this.paths = Array.from({ length: spreadAll ? pages : spreadPages }, (_, page) => endpoint.path(page));
    this.nextPath = spreadAll && 2 * alonePages + 1 < pages ? 2 * alonePages + 1 : 0;
  }

  /** Where the next load run starts. */
  get next(): number {
    return this.nextPath;
  }

  /** A load run sent `requests` more. */
  advance(requests: number): void {
    const freshUpTo = this.paths.length - 2 * alonePages - 2;
    this.fresh += Math.max(0, Math.min(this.asked + requests, freshUpTo) - this.asked);
    this.asked += requests;
    this.nextPath = (this.nextPath + requests) % this.paths.length;
  }

  /** The share of requests so far that asked for a page not asked before (--spread all). */
  freshShare(): number {
    return this.asked === 0 ? 0 : this.fresh / this.asked;
  }
}

/** How many pages the endpoint has for this caller, from the totals its first page reports. */
async function pagesOf(run: Running, endpoint: Endpoint, tag = ''): Promise<number> {
  const text = (await ask(run, endpoint, tagged(endpoint.path(0), tag))).toString();
  const pages = /"totalPages"\s*:\s*(\d+)/.exec(text)?.[1];
  if (pages) return Number(pages);
  const items = /"totalElements"\s*:\s*(\d+)|"numberOfItems"\s*:\s*(\d+)|totalResults>(\d+)</.exec(text);
  const total = Number(items?.slice(1).find((x) => x !== undefined));
  return Number.isFinite(total) && total > 0 ? Math.ceil(total / endpoint.perPage) : 200;
}

/** The catalog writer (--writer) running beside a load run; `stop` gives the number of changes it made. */
function startWriter(run: Running): { stop(): Promise<number> } | undefined {
  if (!writerEvery) return undefined;
  const args = [join(import.meta.dirname, 'catalog-writer.ts'), run.catalog, String(writerEvery), writerKind, run.daemon.url, run.bearer.authorization ?? ''];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const ended = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    async stop() {
      child.kill('SIGTERM');
      await ended;
      return Number(output.trim()) || 0;
    },
  };
}

/** The load generator of a load run, ready to fire (see `loadClient`). */
type LoadClient = (order: LoadOrder) => Promise<LoadFigures>;

async function cannon(run: Running, plan: PagePlan, connections: number, headers: Record<string, string>, client: LoadClient, amount?: number, seconds = duration): Promise<LoadFigures & { cpuPerRequest: number }> {
  const before = cpuMs(run.daemon.pid);
  const figures = await client({ url: run.daemon.url, connections, ...(amount ? { amount } : { duration: seconds }), headers: { ...headers, ...loadHeaders }, paths: plan.paths, firstPath: plan.next, generator });
  plan.advance(figures.sent);
  return { ...figures, cpuPerRequest: (cpuMs(run.daemon.pid) - before) / Math.max(1, figures.requests) };
}

/** p50 / p99 / max of a list of ms. */
function percentiles(ms: number[]): string {
  if (ms.length === 0) return '–';
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
  return `${at(0.5).toFixed(0)} / ${at(0.99).toFixed(0)} / ${(sorted.at(-1) as number).toFixed(0)}`;
}

const latencies = (f: LoadFigures): string => `${f.p50} / ${f.p99} / ${f.max}`;

/** The failed requests of a load run, when there were any, for its cell. */
const failures = (f: LoadFigures): string => (f.failed ? ` (${f.failed} failed)` : '');

/**
 * Where a load run's generator runs, and the daemon beside it (--placement):
 * - shared: autocannon in this process, both it and the daemon on any CPU (what the benchmark always did);
 * - process: autocannon in a process of its own (bench/load-client.ts), on any CPU;
 * - pinned: that process on the last CPU, and every thread of the daemon on the others while the load runs (the
 *   clients of a real deployment run on other machines);
 * - niced: that process at the lowest priority (nice 19), on any CPU.
 */
const PLACEMENTS = ['shared', 'process', 'pinned', 'niced'] as const;
type Placement = (typeof PLACEMENTS)[number];

function placementsAsked(list: string): Placement[] {
  const asked = list.split(',').map((p) => p.trim());
  for (const placement of asked) if (!(PLACEMENTS as readonly string[]).includes(placement)) throw new Error(`--placement: one or more of ${PLACEMENTS.join(', ')}, not ${placement}`);
  if (asked.includes('pinned')) {
    if (availableParallelism() < 2) throw new Error('--placement pinned needs at least 2 CPUs');
    execFileSync('taskset', ['--version'], { stdio: 'ignore' });
  }
  return asked as Placement[];
}

/** The CPUs this benchmark may use (its own affinity), and the one a pinned load generator gets: the last. */
const allowedCpus = (): string => /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? `0-${availableParallelism() - 1}`;
const CLIENT_CPU = availableParallelism() - 1;
const DAEMON_CPUS = CLIENT_CPU === 1 ? '0' : `0-${CLIENT_CPU - 1}`;

/** Sets the CPUs of every thread of a process (threads it starts later inherit their starter's). */
function pinProcess(pid: number, cpus: string): void {
  execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cpus, String(pid)], { stdio: 'ignore' });
}

/**
 * The load generator for `placement`; for one in a process of its own, once that process has loaded its modules (so
 * its start-up is not in the figures). `pid` of that process, for pinning.
 */
async function loadClient(placement: Placement): Promise<LoadClient> {
  if (placement === 'shared') return fire;
  const script = [process.execPath, join(import.meta.dirname, 'load-client.ts')];
  const command = placement === 'pinned' ? ['taskset', '--cpu-list', String(CLIENT_CPU), ...script] : placement === 'niced' ? ['nice', '-n', '19', ...script] : script;
  const child = spawn(command[0] as string, command.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let output = '';
  child.stdout.setEncoding('utf8');
  await new Promise<void>((ready, failed) => {
    child.stdout.on('data', (chunk: string) => {
      output += chunk;
      if (output.startsWith(`${LOAD_CLIENT_READY}\n`)) ready();
    });
    void exited.then((code) => failed(new Error(`the load generator exited (${code}) before it was ready`)));
  });
  return async (order) => {
    child.stdin.end(JSON.stringify(order));
    const code = await exited;
    if (code !== 0) throw new Error(`the load generator exited with ${code}`);
    return JSON.parse(output.slice(LOAD_CLIENT_READY.length + 1)) as LoadFigures;
  };
}

/**
 * autocannon over `connections` connections for --duration seconds, with the catalog writer when asked for, placed
 * as `placement` says.
 */
async function underLoad(run: Running, plan: PagePlan, connections: number, headers: Record<string, string>, placement: Placement): Promise<string> {
  const writer = startWriter(run);
  const client = await loadClient(placement);
  const cpus = allowedCpus();
  if (placement === 'pinned') pinProcess(run.daemon.pid, DAEMON_CPUS);
  let figures: Awaited<ReturnType<typeof cannon>>;
  let loopCells = '';
  try {
    const loop = values['loop-stats'] ? await watchLoop(run) : undefined;
    figures = await cannon(run, plan, connections, headers, client);
    if (loop) loopCells = ` ${percentiles(figures.later)} | ${percentiles(figures.firsts)} |${await loop(figures)}`;
  } finally {
    if (placement === 'pinned') pinProcess(run.daemon.pid, cpus);
  }
  const changes = await writer?.stop();
  const failed = failures(figures);
  const wrote = changes === undefined ? '' : `, ${changes} changes`;
  const clientCpu = (figures.clientCpuMs / Math.max(1, figures.requests)).toFixed(3);
  return ` ${figures.perSecond.toFixed(0)}${failed}${wrote} | ${latencies(figures)} | ${figures.cpuPerRequest.toFixed(3)} / ${clientCpu} |${loopCells}`;
}

/**
 * Before the load runs, in the default mode (the first 200 pages over and over, no writer): each of those pages asked
 * once over `connections` connections at once. The single-request passes ended with a change, so no page is kept
 * and every request waits for the builds ahead of it: what a client paging right after a change waits while others
 * do the same. Every load run then starts from the same state (its pages kept, the heap grown to serve them), whatever
 * its placement; without it, the first load run alone paid for 200 builds and for the heap's growth (session 20).
 */
async function buildWave(run: Running, plan: PagePlan, connections: number, headers: Record<string, string>): Promise<string> {
  const figures = await cannon(run, plan, connections, headers, fire, plan.paths.length);
  const failed = failures(figures);
  return ` ${latencies(figures)}${failed} | ${figures.cpuPerRequest.toFixed(2)} |`;
}

/**
 * --warmup S: after the build wave, a load run of S seconds over `connections` connections (the generator in a process
 * of its own), printed apart: what the first seconds of load cost a daemon whose code for these answers V8 has not
 * optimized yet (TurboFan takes a function after 10,000 calls, on the main thread). The load runs after it read
 * what a daemon serving for a while does.
 */
async function warmUp(run: Running, plan: PagePlan, connections: number, headers: Record<string, string>): Promise<string> {
  const figures = await cannon(run, plan, connections, headers, await loadClient('process'), undefined, warmupSeconds);
  const failed = failures(figures);
  return ` ${latencies(figures)}${failed} |`;
}

let coldAccounts = 0;

/**
 * --cold: an OPDS account created just now (so no process remembers its credentials, and the catalog's change drops
 * every kept page), then one request on each of `connections` connections at once.
 */
async function coldWave(run: Running, endpoint: Endpoint, plan: PagePlan, readerId: number, connections: number): Promise<string> {
  const name = `cold-${++coldAccounts}`;
  const db = new Database(run.catalog);
  db.pragma('busy_timeout = 5000');
  db.prepare('INSERT INTO opds_user_v2 (user_id, username, password_hash) VALUES (?, ?, ?)').run(readerId, name, bcrypt.hashSync(`${name}-password`, 10));
  db.close();
  const headers = { ...endpoint.headers(run), authorization: `Basic ${Buffer.from(`${name}:${name}-password`).toString('base64')}` };
  const figures = await cannon(run, plan, connections, headers, fire, connections);
  const failed = failures(figures);
  return ` ${latencies(figures)}${failed} | ${figures.cpuPerRequest.toFixed(2)} |`;
}

/** --compression: CPU per page and size of each encoder and level on these page bodies (this process, one thread). */
function compressionTable(label: string, bodies: Buffer[]): void {
  const { constants: c } = zlib;
  const forms: [string, (body: Buffer) => Buffer][] = [
    ['gzip 1', (b) => zlib.gzipSync(b, { level: 1 })],
    ['gzip 4', (b) => zlib.gzipSync(b, { level: 4 })],
    ['gzip 6', (b) => zlib.gzipSync(b, { level: 6 })],
    ['gzip 9', (b) => zlib.gzipSync(b, { level: 9 })],
    ['br 1', (b) => zlib.brotliCompressSync(b, { params: { [c.BROTLI_PARAM_QUALITY]: 1, [c.BROTLI_PARAM_MODE]: c.BROTLI_MODE_TEXT } })],
    ['br 4', (b) => zlib.brotliCompressSync(b, { params: { [c.BROTLI_PARAM_QUALITY]: 4, [c.BROTLI_PARAM_MODE]: c.BROTLI_MODE_TEXT } })],
    ['br 11', (b) => zlib.brotliCompressSync(b, { params: { [c.BROTLI_PARAM_QUALITY]: 11, [c.BROTLI_PARAM_MODE]: c.BROTLI_MODE_TEXT } })],
    ['zstd 1', (b) => zlib.zstdCompressSync(b, { params: { [c.ZSTD_c_compressionLevel]: 1 } })],
    ['zstd 3', (b) => zlib.zstdCompressSync(b, { params: { [c.ZSTD_c_compressionLevel]: 3 } })],
    ['zstd 19', (b) => zlib.zstdCompressSync(b, { params: { [c.ZSTD_c_compressionLevel]: 19 } })],
  ];
  const raw = bodies.reduce((sum, b) => sum + b.length, 0) / bodies.length;
  const cells = forms.map(([name, compress]) => {
    for (const body of bodies) compress(body);
    const rounds = 5;
    let bytes = 0;
    const before = process.cpuUsage();
    for (let r = 0; r < rounds; r++) for (const body of bodies) bytes += compress(body).length;
    const used = process.cpuUsage(before);
    const perPage = (used.user + used.system) / 1000 / (rounds * bodies.length);
    return `${name}: ${perPage.toFixed(2)} ms, ${(bytes / (rounds * bodies.length) / 1024).toFixed(1)} KiB`;
  });
  console.log(`| ${label} | ${(raw / 1024).toFixed(1)} KiB | ${cells.join(' | ')} |`);
}

/** One device's sync from scratch, 100 books a page: each call asks for the next page (undefined once the server said it was done). */
function koboPages(run: Running, koboToken: string, device: string): () => Promise<{ cpu: number; wall: number } | undefined> {
  const headers = { 'user-agent': 'Kobo Touch 0387/4.38.21908', 'x-kobo-deviceid': device, 'x-kobo-userkey': device };
  const base = `${run.daemon.url}/api/kobo/${koboToken}/v1/library/sync?Filter=ALL&DownloadUrlFilter=Generic,Android&PrioritizeRecentReads=true`;
  let token: string | undefined;
  let done = false;
  return async () => {
    if (done) return undefined;
    const before = cpuMs(run.daemon.pid);
    const started = performance.now();
    const res = await fetch(base, { headers: { ...headers, ...(token ? { 'x-kobo-synctoken': token } : {}) } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`Kobo sync: ${res.status}`);
    const wall = performance.now() - started;
    const cpu = cpuMs(run.daemon.pid) - before;
    token = res.headers.get('x-kobo-synctoken') ?? undefined;
    done = res.headers.get('x-kobo-sync') !== 'continue';
    return { cpu, wall };
  };
}

/**
 * Server CPU (ms) of each page of one device's sync from scratch, 100 books a page, until the server says it is done.
 * `between` runs after each page.
 */
async function koboSession(run: Running, koboToken: string, device: string, maxPages: number, between?: (page: number) => Promise<void>): Promise<{ cpu: number[]; walls: number[] }> {
  const next = koboPages(run, koboToken, device);
  const cpu: number[] = [];
  const walls: number[] = [];
  for (let page = 0; page < maxPages; page++) {
    const answer = await next();
    if (!answer) break;
    cpu.push(answer.cpu);
    walls.push(answer.wall);
    await between?.(page);
  }
  return { cpu, walls };
}

/** The other feeds' pages asked beside a Kobo session (--kobo-sessions): OPDS 1.2 pages 1-5, app API pages 0-4. */
const besidePages = (run: Running): { url: string; headers: Record<string, string> }[] => [
  ...[1, 2, 3, 4, 5].map((p) => ({ url: `/api/v1/opds/catalog?page=${p}`, headers: { authorization: basicFor('phone') } })),
  ...[0, 1, 2, 3, 4].map((p) => ({ url: `/api/v1/app/books?page=${p}&size=50`, headers: run.bearer })),
];

/** Server CPU (ms) of one request. */
async function cpuOf(run: Running, page: { url: string; headers: Record<string, string> }): Promise<number> {
  const before = cpuMs(run.daemon.pid);
  const res = await fetch(`${run.daemon.url}${page.url}`, { headers: page.headers });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${page.url}: ${res.status}`);
  return cpuMs(run.daemon.pid) - before;
}

/**
 * Above this much server CPU a page beside a Kobo session was built again (kept pages cost 0.1-0.3 ms, built ones 1-2.5
 * ms at 100,000 books, and the first after a catalog change tens of ms with its list): a rough count under load.
 */
const BUILT_ABOVE_MS = 1;

/**
 * One device's full sync (at most 20 pages) on each version, the versions taking turns page by page (the first
 * alternating), so that both are measured at the same moments: on fresh daemons, equally far from their start.
 */
async function koboSync(running: readonly Running[], koboToken: string): Promise<Map<Running, string>> {
  // What the daemon spends unasked (start-up work still running) is counted in its pages too.
  const idleBefore = new Map(running.map((run) => [run, cpuMs(run.daemon.pid)]));
  await new Promise((r) => setTimeout(r, 1000));
  const background = new Map(running.map((run) => [run, cpuMs(run.daemon.pid) - idleBefore.get(run)!]));
  const sessions = new Map(running.map((run) => [run, { next: koboPages(run, koboToken, `bench-${run.daemon.pid}`), cpu: [] as number[], walls: [] as number[] }]));
  for (let page = 0; page < 20; page++) {
    for (const run of page % 2 === 0 ? running : [...running].reverse()) {
      const session = sessions.get(run)!;
      const answer = await session.next();
      if (!answer) continue;
      session.cpu.push(answer.cpu);
      session.walls.push(answer.wall);
    }
  }
  const avg = (xs: number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  return new Map(running.map((run) => {
    const { cpu, walls } = sessions.get(run)!;
    return [run, `${cpu.length} pages; first (takes the snapshot) ${cpu[0]?.toFixed(1)} ms CPU / ${walls[0]?.toFixed(0)} ms wall, the others ${avg(cpu.slice(1)).toFixed(2)} ms CPU / ${avg(walls.slice(1)).toFixed(1)} ms wall per page (daemon CPU in the idle second before: ${background.get(run)!.toFixed(0)} ms)`];
  }));
}

/**
 * `--kobo-sessions N`: whole sessions of a new device each (the shelf's every page), one version after the other, N
 * rounds. The first round warms the JIT and is left out; of the others, the median server CPU of the middle pages (the
 * first takes the snapshot, the last carries states and tags) and each first page.
 */
async function koboSessions(running: readonly Running[], koboToken: string, rounds: number): Promise<void> {
  const middle = new Map<Running, number[]>(running.map((run) => [run, []]));
  const firsts = new Map<Running, number[]>(running.map((run) => [run, []]));
  const beside = new Map<Running, number[]>(running.map((run) => [run, []]));
  const loads: string[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const run of round % 2 === 0 ? running : [...running].reverse()) {
      const others = besidePages(run);
      // Built, then kept, before the session starts.
      for (let i = 0; i < 2; i++) for (const page of others) await cpuOf(run, page);
      const costs: number[] = [];
      const { cpu } = await koboSession(run, koboToken, `session-${round}-${run.daemon.pid}`, 1000, async (page) => {
        costs.push(await cpuOf(run, others[page % others.length] as (typeof others)[number]));
      });
      if (round === 0) continue;
      middle.get(run)?.push(...cpu.slice(1, -1));
      firsts.get(run)?.push(cpu[0] as number);
      beside.get(run)?.push(...costs);
    }
    loads.push(load());
  }
  const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);
  const median = (xs: number[]): number => sorted(xs)[Math.floor(xs.length / 2)] ?? Number.NaN;
  console.log(`\nKobo sync, whole sessions interleaved (${rounds} rounds, the first left out), load ${loads.join(' / ')}:`);
  for (const run of running) {
    const pages = middle.get(run) ?? [];
    const others = beside.get(run) ?? [];
    const built = others.filter((ms) => ms > BUILT_ABOVE_MS).length;
    const sessions = Math.max(1, rounds - 1);
    console.log(`  ${run.version.label}: median page ${median(pages).toFixed(2)} ms CPU (p25 ${sorted(pages)[Math.floor(pages.length / 4)]?.toFixed(2)}, ${pages.length} pages); first pages ${(firsts.get(run) ?? []).map((x) => x.toFixed(0)).join(' / ')} ms`);
    console.log(
      `    other feeds' pages asked between the sync's pages (10 kept before each session): ${others.length} asked, ${built} over ${BUILT_ABOVE_MS} ms (${(100 * (1 - built / Math.max(1, others.length))).toFixed(1)} % under); ` +
        `p50 ${median(others).toFixed(2)}, p90 ${sorted(others)[Math.floor(others.length * 0.9)]?.toFixed(2)}, max ${Math.max(...others).toFixed(1)} ms; ${(others.reduce((a, b) => a + b, 0) / sessions).toFixed(0)} ms CPU a session`,
    );
  }
}

const placements = placementsAsked(values.placement);
/** Each load run of an endpoint on a version, in order: every placement at each number of connections. */
const loadRuns = connectionCounts.flatMap((connections) => placements.map((placement) => ({ connections, placement })));
console.log(`machine: ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, node ${process.version}, load ${load()}`);
for (const books of sizes) {
  const dir = mkdtempSync(join(tmpdir(), 'bindery-feeds-bench-'));
  const running: Running[] = [];
  try {
    const { koboToken, readerId } = await writeCatalogs(dir, books);
    // Started together, so that the first endpoint and the first Kobo session find them equally far from their start.
    running.push(...(await Promise.all(versions.map((version) => start(version, join(dir, version.folder))))));
    const opds = (): Record<string, string> => ({ authorization: basicFor(basicAccount) });
    // Deep pages: three quarters into the list (page 1,500 of 2,000 at 100,000 books), paged on from there.
    const deep = Math.floor((books / 50) * 0.75);
    const all: Endpoint[] = [
      { label: 'OPDS 1.2 catalog (50/page)', path: (p) => `/api/v1/opds/catalog?page=${p + 1}`, headers: opds, perPage: 50, basic: true },
      { label: 'OPDS 2.0 catalog (50/page)', path: (p) => `/api/v2/opds/catalog?page=${p + 1}`, headers: () => ({ ...opds(), accept: 'application/opds+json' }), perPage: 50, basic: true },
      { label: 'Komga books (20/page)', path: (p) => `/komga/api/v1/books?page=${p}`, headers: opds, perPage: 20, basic: true },
      { label: 'Komga series (20/page)', path: (p) => `/komga/api/v1/series?page=${p}`, headers: opds, perPage: 20, basic: true },
      { label: 'app API books (50/page)', path: (p) => `/api/v1/app/books?page=${p}&size=50`, headers: (run) => run.bearer, perPage: 50, basic: false },
      { label: `app API books (50/page) from page ${deep}`, path: (p) => `/api/v1/app/books?page=${deep + p}&size=50`, headers: (run) => run.bearer, perPage: 50, basic: false, firstPage: deep },
      { label: 'app API books by title (50/page)', path: (p) => `/api/v1/app/books?page=${p}&size=50&sort=title&dir=asc`, headers: (run) => run.bearer, perPage: 50, basic: false },
      { label: `app API books by title (50/page) from page ${deep}`, path: (p) => `/api/v1/app/books?page=${deep + p}&size=50&sort=title&dir=asc`, headers: (run) => run.bearer, perPage: 50, basic: false, firstPage: deep },
      { label: `app API books by series (50/page) from page ${deep}`, path: (p) => `/api/v1/app/books?page=${deep + p}&size=50&sort=seriesName&dir=desc`, headers: (run) => run.bearer, perPage: 50, basic: false, firstPage: deep },
      { label: 'app API books by page count (50/page)', path: (p) => `/api/v1/app/books?page=${p}&size=50&sort=pageCount&dir=desc`, headers: (run) => run.bearer, perPage: 50, basic: false },
      { label: 'web UI /books/page (50/page)', path: (p) => `/api/v1/books/page?page=${p}&size=50`, headers: (run) => run.bearer, perPage: 50, basic: false },
      { label: `web UI /books/page (50/page) from page ${deep}`, path: (p) => `/api/v1/books/page?page=${deep + p}&size=50`, headers: (run) => run.bearer, perPage: 50, basic: false, firstPage: deep },
    ];
    const endpoints = all.filter((e) => !values.only || e.label.includes(values.only));
    const mode = [spreadAll ? 'every request a page not asked before' : `pages 1-${spreadPages} over and over`, writerEvery ? (writerKind === 'progress' ? `a book's reading progress reported every ${writerEvery} ms through the app API` : `a book renamed every ${writerEvery} ms by another process`) : '', values['accept-encoding'] ? `Accept-Encoding: ${values['accept-encoding']}` : 'no Accept-Encoding'].filter(Boolean).join('; ');
    const coldConnections = Math.max(...connectionCounts);
    const wave = !spreadAll && writerEvery === 0 && loadRuns.length > 0;
    const loopHeads = values['loop-stats'] ? ' after the first request of each connection: p50 / p99 / max ms | first requests: p50 / p99 / max ms | inside the daemon p50 / p99 / max ms | loop delay p50 / p99 / max ms | loop busy | GC count / ms / longest ms: minor · major · incremental | main thread waiting for a CPU | load generator: CPU, loop delay | young generation KB allocated per request | heap / RSS MB |' : '';
    console.log(`\n## ${books.toLocaleString('en')} books (daemons from the sources, load ${load()}; load runs: ${mode})\n`);
    console.log('| endpoint | code | server CPU ms/page, first asked | built | of which V8 helper threads | kept | first after a change | KiB |' + (wave ? ` build wave, pages 1-${spreadPages} once at ${coldConnections} conn: p50 / p99 / max ms | CPU ms/req |` : '') + (warmupSeconds > 0 ? ` first ${warmupSeconds} s of load, ${coldConnections} conn, process: p50 / p99 / max ms |` : '') + loadRuns.map(({ connections, placement }) => ` ${connections} conn${placements.length > 1 || placement !== 'shared' ? `, ${placement}` : ''}: req/s | p50 / p99 / max ms | CPU ms/req, daemon / load generator |${loopHeads}`).join('') + (values.cold ? ` cold sign-in, ${coldConnections} at once: p50 / p99 / max ms | CPU ms/req |` : '') + (spreadAll ? ' fresh pages |' : '') + (wave ? ' never rendered, after the load runs: server CPU ms/page (of which V8 helper threads) |' : ''));
    console.log('|---|---|---|---|---|---|---|---|' + (wave ? '---|---|' : '') + (warmupSeconds > 0 ? '---|' : '') + loadRuns.map(() => '---|---|---|' + (values['loop-stats'] ? '---|---|---|---|---|---|---|---|---|---|' : '')).join('') + (values.cold ? '---|---|' : '') + (spreadAll ? '---|' : '') + (wave ? '---|' : ''));
    const compression: [string, Buffer[]][] = [];
    const roundLines: string[] = [];
    for (const [index, endpoint] of endpoints.entries()) {
      // The first endpoint is measured on daemons that have just started; each later one once both have gone quiet.
      if (index > 0) await settle(running);
      const bodies = new Map(running.map((run) => [run, [] as Buffer[]]));
      const costs = await alone(running, endpoint, bodies);
      compression.push([endpoint.label, bodies.get(running.at(-1)!)!]);
      const cellsOf = new Map<Running, string[]>();
      for (const run of running) {
        const plan = new PagePlan(endpoint, spreadAll ? await pagesOf(run, endpoint) : spreadPages);
        const cells: string[] = [];
        if (wave) cells.push(await buildWave(run, plan, coldConnections, endpoint.headers(run)));
        if (warmupSeconds > 0) cells.push(await warmUp(run, plan, coldConnections, endpoint.headers(run)));
        for (const { connections, placement } of loadRuns) cells.push(await underLoad(run, plan, connections, endpoint.headers(run), placement));
        if (values.cold) cells.push(endpoint.basic ? await coldWave(run, endpoint, plan, readerId, coldConnections) : ' – | – |');
        if (spreadAll) cells.push(` ${(plan.freshShare() * 100).toFixed(0)} % |`);
        cellsOf.set(run, cells);
      }
      const served = wave ? await neverRenderedOnWarmDaemons(running, endpoint) : undefined;
      for (const run of running) {
        const cost = costs.get(run)!;
        const warm = served === undefined ? '' : ` ${served.get(run) ?? '–'} |`;
        console.log(`| ${endpoint.label} | ${run.version.label} | ${cost.firstAsked.toFixed(2)} | ${cost.built.toFixed(2)} | ${cost.builtInGcThreads.toFixed(2)} | ${cost.kept.toFixed(2)} | ${cost.afterChange.toFixed(2)} | ${(cost.bytes / 1024).toFixed(0)} |${cellsOf.get(run)!.join('')}${warm} load ${load()}`);
      }
      if (Number(values.rounds) > 0) {
        await settle(running);
        roundLines.push(await builtRounds(running, endpoint, Number(values.rounds)));
      }
    }
    if (roundLines.length) console.log(`\n${roundLines.splice(0).join('\n')}`);
    if (values.compression) {
      console.log(`\nCompression of these pages (${books.toLocaleString('en')} books), CPU ms per page and size, one thread of this process:\n`);
      for (const [label, bodies] of compression) compressionTable(label, bodies);
    }
    // The Kobo sync pages are one device's session: none of the load modes applies to them.
    const loadMode = spreadAll || writerEvery > 0 || values.cold;
    if (!loadMode && (!values.only || 'kobo'.includes(values.only.toLowerCase()))) {
      console.log('');
      if (endpoints.length > 0) await settle(running);
      const syncs = await koboSync(running, koboToken);
      for (const run of running) console.log(`Kobo sync, ${run.version.label} (${Math.min(books, 10_000)} books on the shelf, 100/page): ${syncs.get(run)}, load ${load()}`);
      if (Number(values['kobo-sessions']) > 0) await koboSessions(running, koboToken, Number(values['kobo-sessions']));
    }
    if (slowestServed.length) console.log(`\nSlowest requests inside the daemons (time from the run's start, URL):\n${slowestServed.splice(0).join('\n')}`);
    for (const run of running) console.log(`daemon RSS after the runs, ${run.version.label}: ${rssMb(run.daemon.pid).toFixed(0)} MB`);
  } catch (error) {
    for (const run of running) console.error(`${run.version.label} daemon said:\n${run.daemon.stderr().slice(-2000)}`);
    throw error;
  } finally {
    for (const run of running) await run.daemon.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
