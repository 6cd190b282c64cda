// npm run bench:engines [-- --books 10000] [--catalog-books 100000] [--duration 10] [--connections 64] [--rounds 1]
//                          [--only scan,requests,list] [--database-url postgres://…] [--pg-writes durable|test]
//                          [--scan-workers N] [--serve-workers 2]
// SQLite and PostgreSQL side by side in one run, with the load average and CPU per operation:
// - scan: the synthetic corpus of bench/corpus.ts (--books, built once under bench/.corpus/) scanned into a fresh
//   catalog of each engine, then rescanned unchanged: books/s, CPU ms per book of the bindery process, the PostgreSQL
//   server's CPU per book, peak RSS of bindery (bench/scan-child.ts, as bench:scan runs it);
// - requests: `bindery serve` (the bundle, as bin/bindery runs it) on a catalog of --catalog-books synthetic books
//   (bench/book-catalog.ts, written through openStore on both engines), 1 replica on SQLite, `--workers 2` on SQLite
//   when serve has that flag, 1 and 2 replicas on PostgreSQL (one data directory, one database): GET
//   /api/v1/books/{id} and /api/v1/books/page?size=50 under --connections clients (autocannon, spread over the
//   replicas): requests/s, p50, p99, server CPU per request (bindery processes and the PostgreSQL server);
// - list: GET /api/v1/books?stripForListView=false on 1 replica of each engine: time, size, server CPU and peak RSS.
// The PostgreSQL server is a throwaway cluster (scripts/pg-test-server; its CPU is measured; with --pg-writes
// durable, the default, it syncs and commits as a stock server does, against SQLite's WAL with synchronous=NORMAL)
// unless --database-url names one (its user must be allowed to create databases; one per catalog, dropped at the
// end). Rounds alternate the order of the engines. Linux only (/proc).
import autocannon from 'autocannon';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ACCESS_TOKEN_SECONDS, signingSecret, signToken } from '../src/core/auth/tokens.ts';
import { loadConfig } from '../src/core/config.ts';
import { openStore } from '../src/core/store/store.ts';
import { createUser } from '../src/core/users/users.ts';
import { benchPostgres, type BenchPostgres } from './bench-postgres.ts';
import { fillCatalog, type SyntheticCatalog } from './book-catalog.ts';
import { syntheticCorpus } from './corpus.ts';
import { build, BuildUnavailable } from '../scripts/build.ts';
import { fromSource, peakRssMb, preciseCpuMs, ROOT, rssMb, runCli, servingBundle, startDaemon, treeSum, type DaemonProcess, type Launcher } from './daemon-process.ts';

const { values } = parseArgs({
  options: {
    books: { type: 'string', default: '10000' },
    'catalog-books': { type: 'string', default: '100000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '64' },
    rounds: { type: 'string', default: '1' },
    only: { type: 'string', default: 'scan,requests,list' },
    'database-url': { type: 'string' },
    // How the throwaway cluster writes: durable (as a stock server) or test (scripts/pg-test-server's fsync off).
    'pg-writes': { type: 'string', default: 'durable' },
    'scan-workers': { type: 'string' },
    'serve-workers': { type: 'string', default: '2' },
  },
});
const only = new Set(values.only.split(','));
const rounds = Number(values.rounds);
const duration = Number(values.duration);
const connections = Number(values.connections);
const serveWorkers = values['serve-workers'];
const scanWorkers = values['scan-workers'] ?? String(loadConfig().scanWorkers);

type Engine = 'SQLite' | 'PostgreSQL';
const ENGINES: Engine[] = ['SQLite', 'PostgreSQL'];
/** The engines in the order of round `round`: alternated, so neither always meets the machine in the same state. */
const inOrder = <T>(items: T[], round: number): T[] => (round % 2 === 0 ? items : [...items].reverse());

const load = (): string => loadavg().map((l) => l.toFixed(1)).join(' ');
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const fixed = (n: number | undefined, digits = 1): string => (n === undefined || Number.isNaN(n) ? 'n/a' : n.toFixed(digits));
/** The line of an error (or of a child's stderr) that says what went wrong. */
const firstLine = (error: unknown): string => {
  const lines = (error instanceof Error ? error.message : String(error)).split('\n').filter((l) => l.trim());
  return (lines.find((l) => /^\s*(\w*Error|error)\b:/.test(l)) ?? lines[0] ?? 'failed').trim();
};

// The SQLite side must be SQLite: the test suite's redirection of catalog files to PostgreSQL stays out of this process
// and the ones it starts.
delete process.env.BINDERY_TEST_DATABASE_SERVER;
console.log(`machine: ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, node ${process.version}; load average ${load()}`);
if (values['pg-writes'] !== 'durable' && values['pg-writes'] !== 'test') throw new Error('--pg-writes: durable or test');
const postgres: BenchPostgres = await benchPostgres(values['database-url'], values['pg-writes']);
console.log(`PostgreSQL: ${postgres.description}`);
const work = mkdtempSync(join(tmpdir(), 'bindery-engines-bench-'));
let databases = 0;

/** Where a catalog of `engine` lives: the SQLite file in `dataDir`, or a new database. */
async function catalogEnv(engine: Engine): Promise<NodeJS.ProcessEnv> {
  if (engine === 'SQLite') return { BINDERY_DATABASE_URL: '' };
  return { BINDERY_DATABASE_URL: await postgres.createDatabase(`bench_engines_${process.pid}_${++databases}`) };
}

/** The PostgreSQL server's CPU used by `run`, in ms (undefined when the server is not ours). */
async function measured<T>(run: () => Promise<T>): Promise<{ result: T; postgresCpuMs: number | undefined }> {
  const before = postgres.cpuMs();
  const result = await run();
  const after = postgres.cpuMs();
  return { result, postgresCpuMs: before === undefined || after === undefined ? undefined : after - before };
}

// ---- Scan ---------------------------------------------------------------------------------------------------------

interface ScanFigures { seconds: number; cpuSeconds: number; peakRssMb: number; added: number; failed: number; load: [number, number] }
interface ScanRow { engine: Engine; first: ScanFigures; again: ScanFigures; postgresCpuMs: [number | undefined, number | undefined] }

/** One scan in a fresh process, into the SQLite file in `dataDir` or into `database`. */
function scanOnce(dataDir: string, corpus: string, database: string | undefined): Promise<ScanFigures> {
  // As `bindery scan` runs (bin/bindery): two malloc arenas, a 4 MB young generation.
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--max-semi-space-size=4', join(import.meta.dirname, 'scan-child.ts'), dataDir, corpus, scanWorkers, ...(database ? [database] : [])],
      { encoding: 'utf8', maxBuffer: 1 << 26, env: { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2', BINDERY_LOG_LEVEL: 'warn' } },
      (error, stdout, stderr) => (error ? reject(new Error(stderr || error.message)) : resolve(JSON.parse(stdout) as ScanFigures)),
    );
  });
}

async function scans(): Promise<void> {
  const books = Number(values.books);
  const corpus = await syntheticCorpus(books);
  console.log(`\n## Scan of ${books} synthetic books (bench/corpus.ts), ${scanWorkers} worker(s); load average ${load()}`);
  const rows: ScanRow[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const engine of inOrder(ENGINES, round)) {
      const dataDir = join(work, `scan-${round}-${engine}`);
      mkdirSync(dataDir);
      try {
        const database = (await catalogEnv(engine)).BINDERY_DATABASE_URL || undefined;
        const first = await measured(() => scanOnce(dataDir, corpus, database));
        const again = await measured(() => scanOnce(dataDir, corpus, database));
        const row: ScanRow = { engine, first: first.result, again: again.result, postgresCpuMs: [first.postgresCpuMs, again.postgresCpuMs] };
        rows.push(row);
        const f = row.first;
        console.log(
          `${engine.padEnd(10)} ${fixed(books / f.seconds).padStart(6)} books/s, ${fixed((f.cpuSeconds * 1000) / books, 2)} ms CPU/book in bindery, ` +
            `${engine === 'SQLite' ? 'n/a' : fixed(perBook(first.postgresCpuMs, books), 2)} in PostgreSQL; wall ${fixed(f.seconds)} s, peak RSS ${f.peakRssMb} MB, added ${f.added}, failed ${f.failed}, ` +
            `load ${fixed(f.load[0])}→${fixed(f.load[1])}; unchanged rescan ${fixed(row.again.seconds, 2)} s, CPU ${fixed(row.again.cpuSeconds, 2)} s, peak ${row.again.peakRssMb} MB`,
        );
      } catch (error) {
        console.log(`${engine.padEnd(10)} scan failed: ${firstLine(error)}`);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
  }
  console.log('\n| engine | books/s | bindery CPU ms/book | PostgreSQL CPU ms/book | wall s | peak RSS MB | rescan s | rescan CPU s |');
  console.log('|---|---|---|---|---|---|---|---|');
  const rate: Partial<Record<Engine, number>> = {};
  for (const engine of ENGINES) {
    const mine = rows.filter((r) => r.engine === engine);
    if (mine.length === 0) {
      console.log(`| ${engine} | failed | | | | | | |`);
      continue;
    }
    rate[engine] = median(mine.map((r) => books / r.first.seconds));
    const pgCpu = engine === 'SQLite' ? [] : mine.map((r) => perBook(r.postgresCpuMs[0], books)).filter((x): x is number => x !== undefined);
    console.log(
      `| ${engine} | ${fixed(rate[engine])} | ${fixed(median(mine.map((r) => (r.first.cpuSeconds * 1000) / books)), 2)} | ${pgCpu.length > 0 ? fixed(median(pgCpu), 2) : 'n/a'} | ` +
        `${fixed(median(mine.map((r) => r.first.seconds)))} | ${median(mine.map((r) => r.first.peakRssMb))} | ${fixed(median(mine.map((r) => r.again.seconds)), 2)} | ${fixed(median(mine.map((r) => r.again.cpuSeconds)), 2)} |`,
    );
  }
  if (rate.SQLite && rate.PostgreSQL) console.log(`PostgreSQL scans at ${fixed(rate.PostgreSQL / rate.SQLite, 2)}× the rate of SQLite (target ≥ 0.7×)`);
}

function perBook(ms: number | undefined, books: number): number | undefined {
  return ms === undefined ? undefined : ms / books;
}

// ---- Serving ------------------------------------------------------------------------------------------------------

interface Catalog { engine: Engine; dataDir: string; env: NodeJS.ProcessEnv; token: string; books: SyntheticCatalog['bookIds'] }

/** A catalog of --catalog-books books with an admin, written through openStore, and the admin's access token. */
async function seed(engine: Engine): Promise<Catalog> {
  // Names of one length: file paths are in the answers, whose sizes are compared.
  const dataDir = join(work, `catalog-${ENGINES.indexOf(engine)}`);
  mkdirSync(dataDir);
  const env = await catalogEnv(engine);
  const store = await openStore(env.BINDERY_DATABASE_URL || join(dataDir, 'bindery.sqlite'));
  try {
    const adminId = await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'Admin', permissions: { admin: true } });
    const books = Number(values['catalog-books']);
    const started = performance.now();
    const cpu = process.cpuUsage();
    const { postgresCpuMs, result: catalog } = await measured(() => fillCatalog(store, books, join(dataDir, 'library'), adminId));
    // Planner statistics after a bulk load, as a long-running catalog has them.
    await store.exec.run('ANALYZE');
    const used = process.cpuUsage(cpu);
    console.log(
      `${engine}: ${books} books written in ${fixed((performance.now() - started) / 1000)} s (this process ${fixed((used.user + used.system) / 1e6)} s CPU, ` +
        `PostgreSQL ${postgresCpuMs === undefined || engine === 'SQLite' ? 'n/a' : `${fixed(postgresCpuMs / 1000)} s CPU`}); load average ${load()}`,
    );
    const token = await signToken(await signingSecret(store.db), { userId: adminId, username: 'admin', isDefaultPassword: false, sessionVersion: 0 }, 'access', ACCESS_TOKEN_SECONDS);
    return { engine, dataDir, env, token, books: catalog.bookIds };
  } finally {
    await store.close();
  }
}

interface Setup { label: string; engine: Engine; replicas: number; args: string[] }

interface Running { setup: Setup; catalog: Catalog; daemons: DaemonProcess[] }

/** `bindery serve` as bin/bindery runs it from a bundle (V8 flags, two malloc arenas), or from the sources. */
async function serveLauncher(bundleDir: string): Promise<Launcher> {
  try {
    await build(bundleDir, { quiet: true });
    return { ...servingBundle(bundleDir), env: { MALLOC_ARENA_MAX: '2' } };
  } catch (error) {
    if (!(error instanceof BuildUnavailable)) throw error;
    return fromSource;
  }
}

async function start(launcher: Launcher, setup: Setup, catalog: Catalog): Promise<Running> {
  const daemons: DaemonProcess[] = [];
  try {
    for (let n = 0; n < setup.replicas; n++) daemons.push(await startDaemon(launcher, { dataDir: catalog.dataDir, args: setup.args, env: { BINDERY_LOG_LEVEL: 'warn', ...catalog.env }, timeoutMs: 120_000 }));
  } catch (error) {
    await Promise.all(daemons.map((d) => d.stop()));
    throw error;
  }
  return { setup, catalog, daemons };
}

/** CPU of every bindery process of the setup (worker processes included), to the nanosecond. */
const binderyCpuMs = (run: Running): number => run.daemons.reduce((sum, d) => sum + treeSum(d.pid, preciseCpuMs), 0);
const binderyRssMb = (run: Running): number => run.daemons.reduce((sum, d) => sum + treeSum(d.pid, rssMb), 0);
const binderyPeakRssMb = (run: Running): number => run.daemons.reduce((sum, d) => sum + treeSum(d.pid, peakRssMb), 0);

async function get(run: Running, path: string): Promise<{ status: number; bytes: number; body: string }> {
  const res = await fetch(`${(run.daemons[0] as DaemonProcess).url}${path}`, { headers: { authorization: `Bearer ${run.catalog.token}` } });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, bytes: body.byteLength, body: res.status === 200 ? '' : body.toString('utf8').slice(0, 300) };
}

/** The last error the servers logged (pino JSON lines), to say why a route failed. */
function serverError(run: Running): string {
  const lines = run.daemons.flatMap((d) => `${d.stdout()}\n${d.stderr()}`.split('\n')).filter((l) => l.includes('"err"'));
  const last = lines.at(-1);
  if (!last) return '';
  try {
    const entry = JSON.parse(last) as { err?: { message?: string }; msg?: string };
    return `; the server logged: ${entry.err?.message ?? entry.msg ?? last}`;
  } catch {
    return `; the server logged: ${last.slice(0, 300)}`;
  }
}

interface ListFigures { status: number; bytes: number; seconds: number; binderyCpuMs: number; postgresCpuMs: number | undefined; rssBefore: number; rssPeak: number }

async function list(run: Running): Promise<ListFigures> {
  const rssBefore = binderyRssMb(run);
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, binderyRssMb(run))), 10);
  const cpuBefore = binderyCpuMs(run);
  const started = performance.now();
  try {
    const { result, postgresCpuMs } = await measured(() => get(run, '/api/v1/books?stripForListView=false'));
    if (result.status !== 200) throw new Error(`${result.status} ${result.body}`);
    return { status: result.status, bytes: result.bytes, seconds: (performance.now() - started) / 1000, binderyCpuMs: binderyCpuMs(run) - cpuBefore, postgresCpuMs, rssBefore, rssPeak: Math.max(rssPeak, binderyRssMb(run)) };
  } finally {
    clearInterval(sampler);
  }
}

interface Load { label: string; probe: (c: Catalog) => string; next: (c: Catalog, n: number) => string }

const LOADS: Load[] = [
  { label: 'GET /api/v1/books/{id}', probe: (c) => `/api/v1/books/${c.books.first}`, next: (c, n) => `/api/v1/books/${c.books.first + ((n * 7919) % (c.books.last - c.books.first + 1))}` },
  { label: 'GET /api/v1/books/page?size=50', probe: () => '/api/v1/books/page?size=50', next: (_c, n) => `/api/v1/books/page?size=50&page=${n % 200}` },
];

interface LoadFigures { requests: number; rate: number; p50: number; p99: number; non2xx: number; errors: number; binderyCpuUs: number; postgresCpuUs: number | undefined; rss: number }

async function hammer(run: Running, loadKind: Load, seconds: number): Promise<LoadFigures> {
  let n = 0;
  const urls = run.daemons.map((d) => d.url);
  const cpuBefore = binderyCpuMs(run);
  const { result, postgresCpuMs } = await measured(() =>
    autocannon({
      url: urls.length === 1 ? (urls[0] as string) : urls,
      connections,
      duration: seconds,
      headers: { authorization: `Bearer ${run.catalog.token}` },
      requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: loadKind.next(run.catalog, n++) }) }],
    }),
  );
  const total = Math.max(1, result.requests.total);
  return {
    requests: result.requests.total,
    rate: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    binderyCpuUs: ((binderyCpuMs(run) - cpuBefore) * 1000) / total,
    postgresCpuUs: postgresCpuMs === undefined ? undefined : (postgresCpuMs * 1000) / total,
    rss: binderyRssMb(run),
  };
}

async function serving(): Promise<void> {
  console.log(`\n## bindery serve on ${values['catalog-books']} synthetic books (bench/book-catalog.ts); load average ${load()}`);
  const catalogs: Partial<Record<Engine, Catalog>> = {};
  for (const engine of ENGINES) {
    try {
      catalogs[engine] = await seed(engine);
    } catch (error) {
      console.log(`${engine}: could not write the catalog: ${firstLine(error)}`);
    }
  }
  const bundleDir = join(ROOT, 'node_modules', '.cache', `bindery-engines-bench-${process.pid}`);
  const launcher = await serveLauncher(bundleDir);
  try {
    await serveAll(launcher, catalogs);
  } finally {
    rmSync(bundleDir, { recursive: true, force: true });
  }
}

async function serveAll(launcher: Launcher, catalogs: Partial<Record<Engine, Catalog>>): Promise<void> {
  console.log(`bindery serve: ${launcher.name === 'bundle' ? 'the bundle scripts/build.ts makes, run as bin/bindery runs it' : 'from the sources (no bundler installed)'}`);
  const help = await runCli(launcher, ['serve', '--help']);
  const hasWorkers = /--workers\b/.test(help.stdout);
  const setups: Setup[] = [
    { label: 'SQLite, 1 replica', engine: 'SQLite', replicas: 1, args: [] },
    { label: 'PostgreSQL, 1 replica', engine: 'PostgreSQL', replicas: 1, args: [] },
    ...(hasWorkers ? [{ label: `SQLite, --workers ${serveWorkers}`, engine: 'SQLite' as const, replicas: 1, args: ['--workers', serveWorkers] }] : []),
    { label: 'PostgreSQL, 2 replicas', engine: 'PostgreSQL', replicas: 2, args: [] },
  ];
  if (!hasWorkers) console.log(`SQLite, --workers ${serveWorkers}: skipped, \`bindery serve\` has no --workers flag in this tree`);

  const lists: { setup: Setup; figures: ListFigures }[] = [];
  const loads: { setup: Setup; load: Load; figures: LoadFigures }[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const setup of inOrder(setups, round)) {
      const catalog = catalogs[setup.engine];
      if (!catalog) continue;
      let run: Running;
      try {
        run = await start(launcher, setup, catalog);
      } catch (error) {
        console.log(`${setup.label}: could not start: ${firstLine(error)}`);
        continue;
      }
      try {
        console.log(`${setup.label}: started in ${run.daemons.map((d) => `${(d.startupMs / 1000).toFixed(1)} s`).join(', ')}, RSS ${fixed(binderyRssMb(run), 0)} MB; load average ${load()}`);
        if (only.has('list') && setup.replicas === 1 && setup.args.length === 0) {
          for (const pass of ['first', 'again']) {
            try {
              const f = await list(run);
              if (pass === 'again') lists.push({ setup, figures: f });
              console.log(
                `  GET /api/v1/books?stripForListView=false (${pass}): ${(f.bytes / 1e6).toFixed(1)} MB in ${fixed(f.seconds, 2)} s, bindery CPU ${fixed(f.binderyCpuMs / 1000, 2)} s, ` +
                  `PostgreSQL CPU ${f.postgresCpuMs === undefined || setup.engine === 'SQLite' ? 'n/a' : `${fixed(f.postgresCpuMs / 1000, 2)} s`}, bindery RSS ${fixed(f.rssBefore, 0)} → peak ${fixed(f.rssPeak, 0)} MB; load average ${load()}`,
              );
            } catch (error) {
              console.log(`  GET /api/v1/books?stripForListView=false (${pass}): failed: ${firstLine(error)}${serverError(run)}`);
              break;
            }
          }
        }
        if (only.has('requests')) {
          for (const kind of LOADS) {
            const probe = await get(run, kind.probe(catalog)).catch((error: unknown) => ({ status: 0, bytes: 0, body: firstLine(error) }));
            if (probe.status !== 200) {
              console.log(`  ${kind.label}: skipped, the probe answered ${probe.status} ${probe.body}${serverError(run)}`);
              continue;
            }
            await hammer(run, kind, Number(values.warmup));
            const f = await hammer(run, kind, duration);
            loads.push({ setup, load: kind, figures: f });
            console.log(
              `  ${kind.label}: ${connections} clients, ${duration} s: ${f.rate.toFixed(0)} req/s, p50 ${f.p50} ms, p99 ${f.p99} ms, non-2xx ${f.non2xx}, errors ${f.errors}; ` +
                `server CPU per request: bindery ${f.binderyCpuUs.toFixed(0)} µs, PostgreSQL ${setup.engine === 'SQLite' ? 'n/a' : `${fixed(f.postgresCpuUs, 0)} µs`}; bindery RSS ${fixed(f.rss, 0)} MB; load average ${load()}`,
            );
          }
        }
        console.log(`  bindery peak RSS (VmHWM, summed over its processes): ${fixed(binderyPeakRssMb(run), 0)} MB`);
      } finally {
        await Promise.all(run.daemons.map((d) => d.stop()));
      }
    }
  }

  const pgCell = (setup: Setup, us: number[]): string => (setup.engine === 'SQLite' || us.length === 0 ? 'n/a' : median(us).toFixed(0));
  if (loads.length > 0) {
    console.log(`\n| load (${connections} clients, ${duration} s) | setup | req/s | p50 ms | p99 ms | non-2xx | bindery CPU µs/req | PostgreSQL CPU µs/req |`);
    console.log('|---|---|---|---|---|---|---|---|');
    for (const kind of LOADS) {
      for (const setup of setups) {
        const mine = loads.filter((l) => l.setup === setup && l.load === kind).map((l) => l.figures);
        if (mine.length === 0) continue;
        console.log(
          `| ${kind.label} | ${setup.label} | ${median(mine.map((f) => f.rate)).toFixed(0)} | ${median(mine.map((f) => f.p50))} | ${median(mine.map((f) => f.p99))} | ` +
            `${median(mine.map((f) => f.non2xx))} | ${median(mine.map((f) => f.binderyCpuUs)).toFixed(0)} | ${pgCell(setup, mine.flatMap((f) => (f.postgresCpuUs === undefined ? [] : [f.postgresCpuUs])))} |`,
        );
      }
    }
  }
  if (lists.length > 0) {
    console.log('\n| GET /api/v1/books?stripForListView=false (second request) | MB | s | bindery CPU s | PostgreSQL CPU s | bindery peak RSS MB |');
    console.log('|---|---|---|---|---|---|');
    for (const setup of setups) {
      const mine = lists.filter((l) => l.setup === setup).map((l) => l.figures);
      if (mine.length === 0) continue;
      const pg = mine.flatMap((f) => (f.postgresCpuMs === undefined ? [] : [f.postgresCpuMs / 1000]));
      console.log(
        `| ${setup.label} | ${(median(mine.map((f) => f.bytes)) / 1e6).toFixed(1)} | ${fixed(median(mine.map((f) => f.seconds)), 2)} | ${fixed(median(mine.map((f) => f.binderyCpuMs / 1000)), 2)} | ` +
          `${setup.engine === 'SQLite' || pg.length === 0 ? 'n/a' : fixed(median(pg), 2)} | ${fixed(median(mine.map((f) => f.rssPeak)), 0)} |`,
      );
    }
  }
}

// ---- The run -----------------------------------------------------------------------------------------------------

// Interrupted: the throwaway cluster and the catalogs go too (the servers and scans, in the same process group, get the
// signal themselves).
process.once('SIGINT', () => {
  void postgres.close().finally(() => {
    rmSync(work, { recursive: true, force: true });
    process.exit(130);
  });
});
try {
  if (only.has('scan')) await scans();
  if (only.has('requests') || only.has('list')) await serving();
} finally {
  await postgres.close();
  rmSync(work, { recursive: true, force: true });
}
console.log(`load average at the end: ${load()}`);
