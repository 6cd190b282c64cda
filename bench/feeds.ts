// npm run bench:feeds [-- --books 1000,100000] [--duration 5] [--pages 50] [--only opds] [--connections 8,64] [--baseline main]
// The paged answers devices and apps ask for, over real HTTP against `bindery serve` (a child process, from the
// sources) on a synthetic catalog (bench/book-catalog.ts) of each size: OPDS 1.2 and 2.0 catalog pages, Komga book
// and series pages, app API book pages (newest first, by title, series and page count, and deep pages three quarters
// into the list), the web UI's /api/v1/books/page (first and deep pages), and Kobo sync pages.
// For each: the server's CPU per page alone (one request at a time, /proc/<pid>/stat of the daemon) the first time a
// page is asked for, on the pages asked first ("first asked": for the first endpoint, a daemon that just started) and
// then on a warm daemon ("built"), and again on an unchanged catalog ("kept"), then autocannon at 8 and 64 connections
// paging through 200 pages: requests/s, p50, p99, max and server CPU per request, with the load average. The Kobo sync
// pages are one device's session (each page moves that device's sync state, so there is no concurrent run of it).
// --baseline REF also starts the code of git REF (bench/baseline-tree.ts) on a copy of the same catalog (written by
// REF's code, migrated forward by this tree's daemon) and measures it right before this tree's, endpoint by endpoint.
import autocannon from 'autocannon';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { koboSettingsFor } from '../src/core/kobo/sync-settings.ts';
import { fromSource, preciseCpuMs as cpuMs, rssMb, startDaemon, type DaemonProcess, type Launcher } from './daemon-process.ts';
import { baselineTree } from './baseline-tree.ts';
import { basicFor, writeBenchCatalog } from './inject-bench-setup.ts';

const { values } = parseArgs({
  options: {
    books: { type: 'string', default: '1000,100000' },
    duration: { type: 'string', default: '5' },
    pages: { type: 'string', default: '50' },
    connections: { type: 'string', default: '8,64' },
    only: { type: 'string', default: '' },
    baseline: { type: 'string' },
  },
});
const sizes = values.books.split(',').map(Number);
const duration = Number(values.duration);
const alonePages = Number(values.pages);
const connectionCounts = values.connections.split(',').map(Number);
const load = (): string => loadavg()[0]!.toFixed(1);

interface Endpoint {
  label: string;
  path: (page: number) => string;
  headers: (run: Running) => Record<string, string>;
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
}

async function start(version: Version, dir: string): Promise<Running> {
  const daemon = await startDaemon(version.launcher, { dataDir: dir, env: { BINDERY_LOG_LEVEL: 'warn' } });
  const login = await fetch(`${daemon.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'admin-password' }) });
  const { accessToken } = (await login.json()) as { accessToken: string };
  return { version, daemon, bearer: { authorization: `Bearer ${accessToken}` } };
}

/**
 * Server CPU per page, one request at a time: the first time each page is asked for, then again. Pages
 * `alonePages`…2×`alonePages`-1 are built first ("first asked"): the first endpoint of a run is otherwise measured
 * on a daemon that has just started, whose code V8 has not compiled yet, and every later one on a daemon the runs
 * before it warmed up. "built" is then pages 0…`alonePages`-1, built for the first time on a warm daemon.
 */
async function alone(run: Running, endpoint: Endpoint): Promise<{ firstAsked: number; built: number; kept: number; bytes: number }> {
  const get = async (page: number): Promise<number> => {
    const res = await fetch(`${run.daemon.url}${endpoint.path(page)}`, { headers: endpoint.headers(run) });
    const body = await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${endpoint.path(page)}: ${res.status} ${Buffer.from(body).toString().slice(0, 200)}`);
    return body.byteLength;
  };
  // Signs the OPDS account in once (password hashing is not what this measures), on a page not measured below.
  await get(alonePages + 500);
  const pass = async (first: number): Promise<{ cpu: number; bytes: number }> => {
    const before = cpuMs(run.daemon.pid);
    let bytes = 0;
    for (let p = first; p < first + alonePages; p++) bytes += await get(p);
    return { cpu: (cpuMs(run.daemon.pid) - before) / alonePages, bytes: bytes / alonePages };
  };
  const firstAsked = await pass(alonePages);
  const built = await pass(0);
  const kept = await pass(0);
  return { firstAsked: firstAsked.cpu, built: built.cpu, kept: kept.cpu, bytes: built.bytes };
}

/** autocannon paging through 200 pages over `connections` connections. */
async function underLoad(run: Running, endpoint: Endpoint, connections: number): Promise<string> {
  let next = 0;
  const before = cpuMs(run.daemon.pid);
  const result = await autocannon({
    url: run.daemon.url,
    connections,
    duration,
    headers: endpoint.headers(run),
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: endpoint.path(next++ % 200) }) }],
  });
  const perRequest = (cpuMs(run.daemon.pid) - before) / Math.max(1, result.requests.total);
  const failed = result.non2xx + result.errors + result.timeouts;
  return ` ${result.requests.average.toFixed(0)}${failed ? ` (${failed} failed)` : ''} | ${result.latency.p50} / ${result.latency.p99} / ${result.latency.max} | ${perRequest.toFixed(2)} |`;
}

/** One device's full sync: 100 books a page until the server says it is done (at most 20 pages). */
async function koboSync(run: Running, koboToken: string, device: string): Promise<string> {
  const headers = { 'user-agent': 'Kobo Touch 0387/4.38.21908', 'x-kobo-deviceid': device, 'x-kobo-userkey': device };
  const base = `${run.daemon.url}/api/kobo/${koboToken}/v1/library/sync?Filter=ALL&DownloadUrlFilter=Generic,Android&PrioritizeRecentReads=true`;
  let token: string | undefined;
  const cpu: number[] = [];
  const walls: number[] = [];
  for (let page = 0; page < 20; page++) {
    const before = cpuMs(run.daemon.pid);
    const started = performance.now();
    const res = await fetch(base, { headers: { ...headers, ...(token ? { 'x-kobo-synctoken': token } : {}) } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`Kobo sync: ${res.status}`);
    walls.push(performance.now() - started);
    cpu.push(cpuMs(run.daemon.pid) - before);
    token = res.headers.get('x-kobo-synctoken') ?? undefined;
    if (res.headers.get('x-kobo-sync') !== 'continue') break;
  }
  const avg = (xs: number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  return `${cpu.length} pages; first (takes the snapshot) ${cpu[0]?.toFixed(1)} ms CPU / ${walls[0]?.toFixed(0)} ms wall, the others ${avg(cpu.slice(1)).toFixed(2)} ms CPU / ${avg(walls.slice(1)).toFixed(1)} ms wall per page`;
}

console.log(`machine: ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, node ${process.version}, load ${load()}`);
for (const books of sizes) {
  const dir = mkdtempSync(join(tmpdir(), 'bindery-feeds-bench-'));
  const running: Running[] = [];
  try {
    const { koboToken } = await writeCatalogs(dir, books);
    for (const version of versions) running.push(await start(version, join(dir, version.folder)));
    const opds = (): Record<string, string> => ({ authorization: basicFor('phone') });
    // Deep pages: three quarters into the list (page 1,500 of 2,000 at 100,000 books), paged on from there.
    const deep = Math.floor((books / 50) * 0.75);
    const all: Endpoint[] = [
      { label: 'OPDS 1.2 catalog (50/page)', path: (p) => `/api/v1/opds/catalog?page=${p + 1}`, headers: opds },
      { label: 'OPDS 2.0 catalog (50/page)', path: (p) => `/api/v2/opds/catalog?page=${p + 1}`, headers: () => ({ ...opds(), accept: 'application/opds+json' }) },
      { label: 'Komga books (20/page)', path: (p) => `/komga/api/v1/books?page=${p}`, headers: opds },
      { label: 'Komga series (20/page)', path: (p) => `/komga/api/v1/series?page=${p}`, headers: opds },
      { label: 'app API books (50/page)', path: (p) => `/api/v1/app/books?page=${p}&size=50`, headers: (run) => run.bearer },
      { label: `app API books (50/page) from page ${deep}`, path: (p) => `/api/v1/app/books?page=${deep + p}&size=50`, headers: (run) => run.bearer },
      { label: 'app API books by title (50/page)', path: (p) => `/api/v1/app/books?page=${p}&size=50&sort=title&dir=asc`, headers: (run) => run.bearer },
      { label: `app API books by title (50/page) from page ${deep}`, path: (p) => `/api/v1/app/books?page=${deep + p}&size=50&sort=title&dir=asc`, headers: (run) => run.bearer },
      { label: `app API books by series (50/page) from page ${deep}`, path: (p) => `/api/v1/app/books?page=${deep + p}&size=50&sort=seriesName&dir=desc`, headers: (run) => run.bearer },
      { label: 'app API books by page count (50/page)', path: (p) => `/api/v1/app/books?page=${p}&size=50&sort=pageCount&dir=desc`, headers: (run) => run.bearer },
      { label: 'web UI /books/page (50/page)', path: (p) => `/api/v1/books/page?page=${p}&size=50`, headers: (run) => run.bearer },
      { label: `web UI /books/page (50/page) from page ${deep}`, path: (p) => `/api/v1/books/page?page=${deep + p}&size=50`, headers: (run) => run.bearer },
    ];
    const endpoints = all.filter((e) => !values.only || e.label.includes(values.only));
    console.log(`\n## ${books.toLocaleString('en')} books (daemons from the sources, load ${load()})\n`);
    console.log('| endpoint | code | server CPU ms/page, first asked | built | kept | KiB |' + connectionCounts.map((c) => ` ${c} conn: req/s | p50 / p99 / max ms | CPU ms/req |`).join(''));
    console.log('|---|---|---|---|---|---|' + connectionCounts.map(() => '---|---|---|').join(''));
    for (const endpoint of endpoints) {
      for (const run of running) {
        const cost = await alone(run, endpoint);
        const cells: string[] = [];
        for (const connections of connectionCounts) cells.push(await underLoad(run, endpoint, connections));
        console.log(`| ${endpoint.label} | ${run.version.label} | ${cost.firstAsked.toFixed(2)} | ${cost.built.toFixed(2)} | ${cost.kept.toFixed(2)} | ${(cost.bytes / 1024).toFixed(0)} |${cells.join('')} load ${load()}`);
      }
    }
    if (!values.only || 'kobo'.includes(values.only)) {
      console.log('');
      for (const run of running) console.log(`Kobo sync, ${run.version.label} (${Math.min(books, 10_000)} books on the shelf, 100/page): ${await koboSync(run, koboToken, `bench-${run.daemon.pid}`)}, load ${load()}`);
    }
    for (const run of running) console.log(`daemon RSS after the runs, ${run.version.label}: ${rssMb(run.daemon.pid).toFixed(0)} MB`);
  } finally {
    for (const run of running) await run.daemon.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
