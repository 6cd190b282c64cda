// npm run bench:events [-- --books 1000 --clients 500 --idle 1000 --duration 10]
// Live updates through a real `bindery serve` (the bundle when it can be built): while `bindery scan` adds --books
// books from another process, --clients WebSocket clients subscribed as the web UI is; commit-to-frame latency of
// probe events (written by this process every 50 ms, timed after their commit) and of every book-add frame (from the
// outbox row's time); then server memory with --idle idle connections; then GET /api/v1/books/{id} throughput with 0
// and --clients subscribers, interleaved. Prints server CPU and the load average with each figure. Linux only (/proc).
import autocannon from 'autocannon';
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { parseArgs } from 'node:util';
import { build, BuildUnavailable } from '../scripts/build.ts';
import { ACCESS_TOKEN_SECONDS, signingSecret, signToken } from '../src/core/auth/tokens.ts';
import { emitEvent } from '../src/core/events/live-events.ts';
import { createLibrary } from '../src/core/libraries/libraries.ts';
import { openStore } from '../src/core/store/store.ts';
import { createUser } from '../src/core/users/users.ts';
import { buildCorpus } from './corpus.ts';
import { cpuMs, fromSource, ROOT, rssMb, runCli, servingBundle, startDaemon, type Launcher } from './daemon-process.ts';
import { percentile } from './inject-timing.ts';

const { values } = parseArgs({
  options: {
    books: { type: 'string', default: '1000' },
    clients: { type: 'string', default: '500' },
    idle: { type: 'string', default: '1000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '20' },
  },
});
const books = Number(values.books);
const clientCount = Number(values.clients);
const idleCount = Number(values.idle);
const duration = Number(values.duration);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const now = (): number => performance.timeOrigin + performance.now();
const loadAverage = (): string => loadavg().map((l) => l.toFixed(2)).join(' ');
const mb = (n: number): string => `${n.toFixed(1)} MB`;

console.log(`machine: ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, node ${process.version}, load average ${loadAverage()}`);

// bin/bindery gives `serve` its V8 flags.
let launcher: Launcher = fromSource;
try {
  const dir = join(ROOT, 'node_modules', '.cache', 'bindery-bench-events');
  await build(dir, { quiet: true });
  launcher = servingBundle(dir);
} catch (error) {
  if (!(error instanceof BuildUnavailable)) throw error;
}
console.log(`server: ${launcher.name}`);

const work = mkdtempSync(join(tmpdir(), 'bindery-bench-events-'));
const dataDir = join(work, 'data');
const corpus = join(work, 'books');
let t = performance.now();
await buildCorpus(corpus, books);
console.log(`corpus: ${books} books in ${((performance.now() - t) / 1000).toFixed(1)} s`);

const store = await openStore(join(dataDir, 'bindery.sqlite'));
const adminId = await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'Admin', permissions: { admin: true } });
const token = await signToken(await signingSecret(store.db), { userId: adminId, username: 'admin', isDefaultPassword: false, sessionVersion: 0 }, 'access', ACCESS_TOKEN_SECONDS);
await createLibrary(store.db, { name: 'Bench', paths: [corpus] });

const serverEnv = { BINDERY_LOG_LEVEL: 'warn', BINDERY_LIVE_MAX_CONNECTIONS: '5000', BINDERY_LIVE_MAX_CONNECTIONS_PER_USER: '5000' };
const daemon = await startDaemon(launcher, { dataDir, env: serverEnv });
const children = new Set<Clients>();
process.on('exit', () => {
  daemon.child.kill('SIGKILL');
  for (const c of children) c.kill();
});
const wsUrl = `ws://127.0.0.1:${daemon.port}/ws`;

interface Report {
  probes: [number, number][];
  bookAdds: [number, number][];
  frames: number;
  closed: number;
}

/** A child process holding `count` subscribed clients. */
class Clients {
  private readonly child: ChildProcessByStdio<Writable, Readable, null>;
  private readonly lines: Interface;
  private readonly waiting: ((line: string) => void)[] = [];

  private constructor(count: number, measure: boolean) {
    const args = [join(import.meta.dirname, 'events-clients.ts'), '--url', wsUrl, '--token', token, '--count', String(count), ...(measure ? ['--measure'] : [])];
    this.child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    this.lines = createInterface({ input: this.child.stdout });
    this.lines.on('line', (line) => this.waiting.shift()?.(line));
  }

  static async open(count: number, measure = false): Promise<Clients> {
    const clients = new Clients(count, measure);
    children.add(clients);
    const ready = JSON.parse(await clients.nextLine()) as { ready: number };
    if (ready.ready !== count) throw new Error(`only ${ready.ready} of ${count} clients connected`);
    return clients;
  }

  private nextLine(): Promise<string> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async report(): Promise<Report> {
    const line = this.nextLine();
    this.child.stdin.write('report\n');
    return JSON.parse(await line) as Report;
  }

  async close(): Promise<void> {
    children.delete(this);
    this.child.stdin.write('exit\n');
    await new Promise((r) => this.child.once('exit', r));
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}

const stats = (xs: number[]): string => (xs.length === 0 ? 'none' : `p50 ${percentile(xs, 0.5).toFixed(1)} ms, p99 ${percentile(xs, 0.99).toFixed(1)} ms, max ${xs.reduce((a, b) => Math.max(a, b), 0).toFixed(1)} ms (${xs.length} frames)`);

// 1. Commit-to-frame latency while a scan runs in another process. A few measuring clients time what arrives; the
// rest are load in processes of their own (one process holding hundreds of sockets that parse a gigabyte of frames
// would measure its own backlog, not the server).
{
  const measuring = Math.min(10, clientCount);
  const loadProcesses = 2;
  const probeClients = await Clients.open(measuring, true);
  const loadClients: Clients[] = [];
  for (let i = 0; i < loadProcesses; i++) loadClients.push(await Clients.open(Math.ceil((clientCount - measuring) / loadProcesses)));
  const all = [probeClients, ...loadClients];
  const total = measuring + loadClients.length * Math.ceil((clientCount - measuring) / loadProcesses);
  await sleep(1000);
  for (const c of all) await c.report();
  const committed = new Map<number, number>();
  let probe = 0;
  let scanning = true;
  const prober = (async () => {
    while (scanning) {
      const n = ++probe;
      await emitEvent(store.db, { kind: 'log', audience: 'managers', message: `probe:${n}`, severity: 'INFO' });
      committed.set(n, now());
      await sleep(50);
    }
  })();
  const cpuBefore = cpuMs(daemon.pid);
  const loadBefore = loadAverage();
  t = performance.now();
  const scan = await runCli(launcher, ['--data-dir', dataDir, 'scan', 'Bench']);
  const scanMs = performance.now() - t;
  if (scan.code !== 0) throw new Error(`scan failed: ${scan.stderr}`);
  await sleep(1000);
  scanning = false;
  await prober;
  const loadAfter = loadAverage();
  // Until the load clients have read everything sent (or stopped getting more).
  let frames = 0;
  const reports: Report[] = all.map(() => ({ probes: [], bookAdds: [], frames: 0, closed: 0 }));
  for (let quiet = 0; quiet < 3; ) {
    await sleep(1000);
    const round = await Promise.all(all.map((c) => c.report()));
    round.forEach((r, i) => {
      const into = reports[i] as Report;
      into.probes.push(...r.probes);
      into.bookAdds.push(...r.bookAdds);
      into.frames += r.frames;
      into.closed = r.closed;
    });
    const sum = round.reduce((a, r) => a + r.frames, 0);
    quiet = sum === 0 ? quiet + 1 : 0;
    frames += sum;
  }
  const serverCpu = cpuMs(daemon.pid) - cpuBefore;
  const added = new Map<number, number>();
  for (const row of await store.db.selectFrom('event_outbox').select(['payload', 'created_at_ms']).where('kind', '=', 'books-added').execute()) {
    for (const id of (JSON.parse(row.payload) as { bookIds: number[] }).bookIds) added.set(id, row.created_at_ms);
  }
  const measured = reports[0] as Report;
  const probeLatency = measured.probes.filter(([n]) => committed.has(n)).map(([n, at]) => at - (committed.get(n) as number));
  const bookLatency = measured.bookAdds.filter(([id]) => added.has(id)).map(([id, at]) => at - (added.get(id) as number));
  // Probes, book-adds and the scan's two log lines, to every client.
  const expected = (probe + added.size + 2) * total;
  console.log(`\nscan of ${books} books by \`bindery scan\` (another process): ${(scanMs / 1000).toFixed(1)} s; load average before ${loadBefore}, at its end ${loadAfter}`);
  console.log(`${total} clients subscribed as the web UI (${measuring} measuring, the rest in ${loadProcesses} load processes); ${frames} of ${expected} frames arrived; connections the server closed: ${reports.reduce((a, r) => a + r.closed, 0)}`);
  console.log(`probe events, commit → frame: ${stats(probeLatency)}`);
  console.log(`book-add, outbox row written → frame: ${stats(bookLatency)}`);
  console.log(`server CPU from the scan's start until the clients had everything: ${(serverCpu / 1000).toFixed(1)} s (${((serverCpu * 1000) / Math.max(1, frames)).toFixed(1)} µs per frame), RSS now ${mb(rssMb(daemon.pid))}`);
  for (const c of all) await c.close();
}

// 2. Memory of idle connections.
{
  await sleep(3000);
  const before = rssMb(daemon.pid);
  const one = await Clients.open(1);
  await sleep(2000);
  const withOne = rssMb(daemon.pid);
  const many = await Clients.open(idleCount);
  await sleep(5000);
  const withMany = rssMb(daemon.pid);
  console.log(`\nidle server RSS ${mb(before)}; with 1 connection (ws and STOMP loaded) ${mb(withOne)}; with ${idleCount + 1} idle connections ${mb(withMany)} ` +
    `(${(((withMany - withOne) * 1024) / idleCount).toFixed(1)} KB per connection); load average ${loadAverage()}`);
  await many.close();
  await one.close();
}

// 3. GET /api/v1/books/{id} with and without subscribers, interleaved.
{
  const ids = (await store.db.selectFrom('book').select('id').orderBy('id').execute()).map((r) => r.id);
  let next = 0;
  const run = async (label: string, seconds = duration): Promise<void> => {
    const cpuBefore = cpuMs(daemon.pid);
    const result = await autocannon({
      url: daemon.url,
      connections: Number(values.connections),
      duration: seconds,
      headers: { Authorization: `Bearer ${token}` },
      requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `/api/v1/books/${ids[next++ % ids.length] as number}` }) }],
    });
    const cpu = (cpuMs(daemon.pid) - cpuBefore) / Math.max(1, result.requests.total);
    if (label === '') return;
    console.log(`GET /api/v1/books/{id}, ${label}: ${result.requests.average.toFixed(0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, server CPU ${cpu.toFixed(3)} ms/request, non-2xx ${result.non2xx}; load average ${loadAverage()}`);
  };
  console.log('');
  await run('', 3);
  for (let round = 0; round < 2; round++) {
    await run('0 subscribers');
    const subscribers = await Clients.open(clientCount);
    await sleep(1000);
    await run(`${clientCount} subscribers`);
    await subscribers.close();
  }
}

await daemon.stop('SIGTERM');
await store.close();
rmSync(work, { recursive: true, force: true });
