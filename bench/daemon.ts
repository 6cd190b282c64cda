// npm run bench:daemon [-- --books 100000 --runs 7 --duration 10 --connections 100]
// The real `bindery serve` process: cold start to the first healthcheck and idle memory (from the bundle
// scripts/build.ts makes and from the sources), then on a catalog of --books synthetic books the full book list
// (time, size, server memory) and GET /api/v1/books/{id} and /api/v1/books/page latency under --connections loopback
// clients (autocannon). Routes the daemon does not have yet are reported as not available. Linux only (/proc).
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { build, BuildUnavailable } from '../scripts/build.ts';
import { ACCESS_TOKEN_SECONDS, signingSecret, signToken } from '../src/core/auth/tokens.ts';
import { openStore } from '../src/core/store/store.ts';
import { createUser } from '../src/core/users/users.ts';
import { fillCatalog } from './book-catalog.ts';
import { cpuMs, fromSource, memoryMb, peakRssMb, ROOT, rssMb, SERVE_ENV, servingBundle, startDaemon, type DaemonProcess, type Launcher, type MemoryFigures } from './daemon-process.ts';

const { values } = parseArgs({
  options: {
    books: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '7' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '100' },
    'idle-ms': { type: 'string', default: '2000' },
    // Extra V8/Node flags for the server processes (tuning experiments), e.g. --node-options=--max-semi-space-size=1
    'node-options': { type: 'string', default: '' },
    'skip-start': { type: 'boolean', default: false },
    'skip-list': { type: 'boolean', default: false },
    // Which loads to run: any of id, page, sorted.
    loads: { type: 'string', default: 'id,page,sorted' },
    // Extra `serve` flags for the catalog daemon, e.g. --serve-args='--http-workers 2'
    'serve-args': { type: 'string', default: '' },
  },
});
const books = Number(values.books);
const runs = Number(values.runs);
const duration = Number(values.duration);
const connections = Number(values.connections);
const idleMs = Number(values['idle-ms']);
const serverEnv = { BINDERY_LOG_LEVEL: 'warn' };
/** The launcher with NODE_OPTIONS made of `flags` and --node-options. */
const withNodeOptions = (launcher: Launcher, flags = ''): Launcher => {
  const options = `${flags} ${values['node-options']}`.trim();
  return options ? { ...launcher, env: { ...launcher.env, NODE_OPTIONS: options } } : launcher;
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const ms = (n: number): string => `${n.toFixed(0)} ms`;
const mb = (n: number): string => `${n.toFixed(1)} MB`;

console.log(`machine: ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, ${(totalmem() / 2 ** 30).toFixed(1)} GB, node ${process.version}`);

// The bundle as scripts/setup makes it, in a directory of its own.
const bundleDir = join(ROOT, 'node_modules', '.cache', 'bindery-bench');
let bundle: Launcher | undefined;
try {
  const t = performance.now();
  await build(bundleDir, { quiet: true });
  // Started as bin/bindery starts it (bin/bindery itself would run the bundle in node_modules/.cache/bindery).
  bundle = withNodeOptions(servingBundle(bundleDir));
  console.log(`bundle: built in ${ms(performance.now() - t)}`);
} catch (error) {
  if (!(error instanceof BuildUnavailable)) throw error;
  console.log('bundle: not available (rolldown is not installed); measuring the sources only');
}
/** The bundle with the memory setting deploy/bindery.service and deploy/Dockerfile use. */
const deployed: Launcher | undefined = bundle && withNodeOptions({ ...servingBundle(bundleDir), name: 'bundle, unit env', env: SERVE_ENV });
const launchers = [...(bundle && deployed ? [bundle, deployed] : []), withNodeOptions(fromSource)];

/** Medians of RSS, PSS and USS. */
const memoryLine = (memory: MemoryFigures[]): string =>
  `RSS ${mb(median(memory.map((m) => m.rss)))}, PSS ${mb(median(memory.map((m) => m.pss)))}, USS ${mb(median(memory.map((m) => m.uss)))}`;

// 0. Bare node, idle, for scale: what any Node process costs here before it does anything.
if (!values['skip-start']) {
  const bare: MemoryFigures[] = [];
  for (let run = 0; run < 3; run++) {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 1e6)'], { stdio: 'ignore' });
    await sleep(idleMs);
    bare.push(memoryMb(child.pid as number));
    child.kill();
  }
  console.log(`bare node (node -e 'setTimeout(() => {}, 1e6)'), idle: ${memoryLine(bare)}`);
}

// 1. Cold start and idle memory: a first start on an empty data directory (it creates the catalog), and restarts on
// an existing catalog (what systemd does after an upgrade, a crash or a reboot).
for (const launcher of values['skip-start'] ? [] : launchers) {
  const existing = mkdtempSync(join(tmpdir(), 'bindery-bench-restart-'));
  const figures: Record<'fresh' | 'restart', { times: number[]; cpu: number[]; memory: MemoryFigures[] }> = { fresh: { times: [], cpu: [], memory: [] }, restart: { times: [], cpu: [], memory: [] } };
  let coldCache = { wall: Number.NaN, cpu: Number.NaN };
  for (let run = 0; run <= runs; run++) {
    for (const mode of ['fresh', 'restart'] as const) {
      const dataDir = mode === 'fresh' ? mkdtempSync(join(tmpdir(), 'bindery-bench-start-')) : existing;
      // The very first start has an empty V8 compile cache (the first start after an install or an upgrade).
      const cache = run === 0 && mode === 'fresh' ? mkdtempSync(join(tmpdir(), 'bindery-bench-cache-')) : undefined;
      const daemon = await startDaemon(launcher, { dataDir, env: { ...serverEnv, ...(cache ? { BINDERY_COMPILE_CACHE: cache } : {}) } });
      await sleep(idleMs);
      if (cache) coldCache = { wall: daemon.startupMs, cpu: daemon.startupCpuMs };
      if (run > 0) {
        figures[mode].times.push(daemon.startupMs);
        figures[mode].cpu.push(daemon.startupCpuMs);
        figures[mode].memory.push(memoryMb(daemon.pid));
      }
      await daemon.stop('SIGTERM');
      if (mode === 'fresh') rmSync(dataDir, { recursive: true, force: true });
      if (cache) rmSync(cache, { recursive: true, force: true });
    }
  }
  rmSync(existing, { recursive: true, force: true });
  for (const mode of ['fresh', 'restart'] as const) {
    const { times, cpu, memory } = figures[mode];
    console.log(
      `start (${launcher.name}, ${mode === 'fresh' ? 'empty data dir' : 'existing catalog'}): first healthcheck median ${ms(median(times))} ` +
        `(min ${ms(Math.min(...times))}, max ${ms(Math.max(...times))}, ${runs} runs; CPU by then ${ms(median(cpu))}), idle ${memoryLine(memory)}; load ${loadavg()[0]?.toFixed(1)}`,
    );
  }
  console.log(`start (${launcher.name}, empty data dir and empty compile cache): ${ms(coldCache.wall)} (CPU ${ms(coldCache.cpu)}); load ${loadavg()[0]?.toFixed(1)}`);
}

// 2. A large catalog.
const dataDir = mkdtempSync(join(tmpdir(), 'bindery-bench-catalog-'));
const store = await openStore(join(dataDir, 'bindery.sqlite'));
const adminId = await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'Admin', permissions: { admin: true } });
let t = performance.now();
const catalog = await fillCatalog(store, books, join(dataDir, 'library'), adminId);
console.log(`catalog: ${books} books written in ${((performance.now() - t) / 1000).toFixed(1)} s`);
const token = await signToken(await signingSecret(store.db), { userId: adminId, username: 'admin', isDefaultPassword: false, sessionVersion: 0 }, 'access', ACCESS_TOKEN_SECONDS);
await store.close();

const launcher = launchers[0] as Launcher;
const serveArgs = values['serve-args'].split(/\s+/).filter(Boolean);
// The first start after the bulk write also works through the Komga series log it left (a row or two per book): it is
// reported apart, and the loads run on a restart, as a daemon on an established catalog starts.
const justWritten: DaemonProcess = await startDaemon(launcher, { dataDir, env: serverEnv, args: serveArgs });
await sleep(idleMs);
console.log(`daemon (${launcher.name}) on ${books} books just written: started in ${ms(justWritten.startupMs)}, idle ${memoryLine([memoryMb(justWritten.pid)])}`);
await sleep(3000);
await justWritten.stop('SIGTERM');
const daemon: DaemonProcess = await startDaemon(launcher, { dataDir, env: serverEnv, args: serveArgs });
await sleep(idleMs);
console.log(`daemon (${launcher.name}) on ${books} books, restarted: started in ${ms(daemon.startupMs)}, idle ${memoryLine([memoryMb(daemon.pid)])}`);
const auth = { Authorization: `Bearer ${token}` };

async function routeExists(path: string): Promise<boolean> {
  const res = await fetch(`${daemon.url}${path}`, { headers: auth });
  const body = await res.text();
  return !(res.status === 404 && body.includes('Resource not found.'));
}

const listPath = '/api/v1/books';
if (values['skip-list']) console.log(`GET ${listPath}: skipped`);
else if (await routeExists(listPath)) {
  for (const [label, path] of [
    ['list view, first request', listPath],
    ['list view, again', listPath],
    ['stripForListView=false (the web UI)', `${listPath}?stripForListView=false`],
  ] as const) {
    let peak = rssMb(daemon.pid);
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(daemon.pid))), 10);
    const cpuBefore = cpuMs(daemon.pid);
    t = performance.now();
    const res = await fetch(`${daemon.url}${path}`, { headers: auth });
    const body = await res.arrayBuffer();
    const took = performance.now() - t;
    clearInterval(sampler);
    const count = (JSON.parse(Buffer.from(body).toString('utf8')) as unknown[]).length;
    const line = `GET ${path} (${label}): ${res.status}, ${count} books, ${(body.byteLength / 1e6).toFixed(1)} MB in ${ms(took)} (server CPU ${ms(cpuMs(daemon.pid) - cpuBefore)}, load average ${loadavg()[0]?.toFixed(1)}); server RSS peak ${mb(peak)}, after ${mb(rssMb(daemon.pid))}`;
    console.log(line);
  }
} else console.log(`GET ${listPath}: not available`);

async function load(label: string, probe: string, nextPath: () => string): Promise<void> {
  if (!(await routeExists(probe))) {
    console.log(`${label}: not available`);
    return;
  }
  const cpuBefore = cpuMs(daemon.pid);
  const result = await autocannon({
    url: daemon.url,
    connections,
    duration,
    headers: auth,
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: nextPath() }) }],
  });
  // Server CPU per request hardly depends on what else the machine runs, unlike the latencies.
  const cpuPerRequest = (cpuMs(daemon.pid) - cpuBefore) / Math.max(1, result.requests.total);
  const line =
    `${label}: ${connections} clients, ${duration} s: p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ` +
    `${result.requests.average.toFixed(0)} req/s, non-2xx ${result.non2xx}, errors ${result.errors}; ` +
    `server CPU ${(cpuPerRequest * 1000).toFixed(0)} µs/request, RSS ${mb(rssMb(daemon.pid))}; load average ${loadavg()[0]?.toFixed(1)}`;
  console.log(line);
}

const { first, last } = catalog.bookIds;
let n = 0;
const loads = new Set(values.loads.split(','));
if (loads.has('id')) await load('GET /api/v1/books/{id}', `/api/v1/books/${first}`, () => `/api/v1/books/${first + ((n++ * 7919) % (last - first + 1))}`);
if (loads.has('page')) await load('GET /api/v1/books/page?size=50', '/api/v1/books/page?size=50', () => `/api/v1/books/page?size=50&page=${n++ % 200}`);
if (loads.has('sorted')) await load('GET /api/v1/books/page?size=50&sort=metadata.title,asc', '/api/v1/books/page?size=50', () => `/api/v1/books/page?size=50&page=${n++ % 200}&sort=metadata.title,asc`);
console.log(`server peak RSS over the run (VmHWM): ${mb(peakRssMb(daemon.pid))}`);

await daemon.stop('SIGTERM');
rmSync(dataDir, { recursive: true, force: true });
rmSync(bundleDir, { recursive: true, force: true });
