// npm run bench:auth [-- --books 2000 --attempts 40 --signins 400 --rate 20 --load-rate 40 --seconds 8 --rounds 2 --baseline REF]
// Password checks against the real `bindery serve`: what one HTTP Basic attempt with an unknown username costs the
// daemon (process CPU and main-thread CPU, from /proc/<pid>/task/<pid>/stat) with the OPDS server switched off and
// on, and what a successful sign-in costs with a remembered password (an OPDS reader's Basic request answered from
// the page cache, a web login that issues tokens); then GET /api/v1/healthcheck and GET /api/v1/books/{id} latency
// (p50/p99) at a steady pace, without and with --rate such attempts per second, interleaved, in one table. Each
// failed attempt comes from its own loopback address (127.77.x.y) so the per-address failure limit never blocks it:
// the worst case, an attacker with many addresses. --baseline REF also starts the code of git REF
// (bench/baseline-tree.ts, from the sources, as this tree then is) on a catalog its own code made, and measures the
// CPU figures of both, interleaved, round by round. Linux only (/proc, the 127.0.0.0/8 loopback).
import { request, type IncomingMessage } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { build, BuildUnavailable } from '../scripts/build.ts';
import type * as StoreModule from '../src/core/store/store.ts';
import type * as UsersModule from '../src/core/users/users.ts';
import { baselineTree } from './baseline-tree.ts';
import type * as CatalogModule from './book-catalog.ts';
import { cpuMs, fromBundle, fromSource, ROOT, startDaemon, type DaemonProcess, type Launcher } from './daemon-process.ts';

const { values } = parseArgs({
  options: {
    books: { type: 'string', default: '2000' },
    attempts: { type: 'string', default: '40' },
    signins: { type: 'string', default: '400' },
    baseline: { type: 'string' },
    rate: { type: 'string', default: '20' },
    'load-rate': { type: 'string', default: '40' },
    seconds: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '2' },
    source: { type: 'boolean', default: false },
    // The OPDS switch during the latency phases: `off` shows what the attack traffic alone costs, without password work.
    'attack-opds': { type: 'string', default: 'on' },
  },
});
const books = Number(values.books);
const attempts = Number(values.attempts);
const signins = Number(values.signins);
const attackRate = Number(values.rate);
const loadRate = Number(values['load-rate']);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const load = (): string => loadavg().map((n) => n.toFixed(2)).join(' ');
const fmt = (n: number): string => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

/** CPU time (user + system) of the process's main thread so far, in ms (the task whose id is the process id). */
function mainThreadCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

interface Answer {
  status: number;
  ms: number;
}

function get(url: string, headers: Record<string, string>, localAddress?: string): Promise<Answer> {
  const started = performance.now();
  return new Promise((done, fail) => {
    const req = request(url, { headers, localAddress, agent: false }, (res: IncomingMessage) => {
      res.resume();
      res.on('end', () => done({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    req.on('error', fail);
    req.end();
  });
}

let addressCounter = 0;
/** A loopback address not used before in this run. */
function nextAddress(): string {
  addressCounter += 1;
  return `127.77.${(addressCounter >> 8) & 255}.${(addressCounter & 255) || 1}`;
}

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

console.log(`machine: ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, node ${process.version}; load average at start ${load()}`);

let launcher: Launcher = fromSource;
if (!values.source && !values.baseline) {
  const bundleDir = join(ROOT, 'node_modules', '.cache', 'bindery-bench-auth');
  try {
    await build(bundleDir, { quiet: true });
    launcher = fromBundle(bundleDir);
  } catch (error) {
    if (!(error instanceof BuildUnavailable)) throw error;
  }
}

interface Side {
  label: string;
  daemon: DaemonProcess;
  dataDir: string;
  bearer: Record<string, string>;
}

/** A catalog made by the code under `root` (this tree or the baseline's): its own migrations, the same content. */
async function prepareCatalog(root: string, dataDir: string): Promise<{ first: number; last: number }> {
  const { openStore } = (await import(join(root, 'src/core/store/store.ts'))) as typeof StoreModule;
  const { createUser, hashPassword } = (await import(join(root, 'src/core/users/users.ts'))) as typeof UsersModule;
  const { fillCatalog } = (await import(join(root, 'bench/book-catalog.ts'))) as typeof CatalogModule;
  const store = await openStore(join(dataDir, 'bindery.sqlite'));
  try {
    const adminId = await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'Admin', permissions: { admin: true } });
    await store.db.insertInto('opds_user_v2').values({ user_id: adminId, username: 'reader-app', password_hash: await hashPassword('reader-app-password') }).execute();
    return (await fillCatalog(store, books, join(dataDir, 'library'), adminId)).bookIds;
  } finally {
    await store.close();
  }
}

async function startSide(label: string, root: string, sideLauncher: Launcher): Promise<Side & { bookIds: { first: number; last: number } }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bindery-bench-auth-'));
  const bookIds = await prepareCatalog(root, dataDir);
  const daemon = await startDaemon(sideLauncher, { dataDir, env: { BINDERY_LOG_LEVEL: 'warn' } });
  const login = await fetch(`${daemon.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'admin-password' }) });
  const { accessToken } = (await login.json()) as { accessToken: string };
  return { label, daemon, dataDir, bearer: { authorization: `Bearer ${accessToken}` }, bookIds };
}

const sides: Side[] = [];
if (values.baseline) {
  const tree = baselineTree(values.baseline);
  sides.push(await startSide(`before (${values.baseline})`, tree, { ...fromSource, name: 'baseline', command: join(tree, 'bin', 'bindery') }));
}
const current = await startSide(values.baseline ? 'after' : 'this tree', ROOT, launcher);
sides.push(current);
const { daemon, bearer, bookIds } = current;
const randomBookId = (): number => bookIds.first + Math.floor(Math.random() * (bookIds.last - bookIds.first + 1));
console.log(`catalog: ${books} synthetic books; daemon from ${launcher.name}${values.baseline ? `; baseline ${values.baseline} from its sources` : ''}`);

const setOpds = async (side: Side, on: boolean): Promise<void> => {
  const res = await fetch(`${side.daemon.url}/api/v1/settings`, { method: 'PUT', headers: { ...side.bearer, 'content-type': 'application/json' }, body: JSON.stringify([{ name: 'OPDS_SERVER_ENABLED', value: on }]) });
  if (!res.ok) throw new Error(`settings: ${res.status} ${await res.text()}`);
};
const attackOn = (side: Side) => (): Promise<Answer> => get(`${side.daemon.url}/api/v1/opds`, { authorization: basic(`random-${Math.random().toString(36).slice(2)}`, 'guess') }, nextAddress());

interface CpuFigures {
  answers: string;
  total: number;
  main: number;
}

/**
 * CPU per request of `count` requests, four at a time (as a few reader apps, or an attacker, would send them). An
 * idle stretch of the same length is measured first and subtracted.
 */
async function cpuPerRequest(pid: number, count: number, send: () => Promise<Answer>): Promise<CpuFigures> {
  await send();
  await sleep(500);
  const idleStart = { total: cpuMs(pid), main: mainThreadCpuMs(pid), at: performance.now() };
  await sleep(1000);
  const idle = { total: cpuMs(pid) - idleStart.total, main: mainThreadCpuMs(pid) - idleStart.main, ms: performance.now() - idleStart.at };
  const before = { total: cpuMs(pid), main: mainThreadCpuMs(pid) };
  const started = performance.now();
  const statuses = new Map<number, number>();
  for (let sent = 0; sent < count; sent += 4) {
    const batch = await Promise.all(Array.from({ length: Math.min(4, count - sent) }, send));
    for (const answer of batch) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
  }
  const elapsed = performance.now() - started;
  const total = cpuMs(pid) - before.total - (idle.total * elapsed) / idle.ms;
  const main = mainThreadCpuMs(pid) - before.main - (idle.main * elapsed) / idle.ms;
  return { answers: [...statuses].map(([status, n]) => `${n}× ${status}`).join(', '), total: Math.max(0, total) / count, main: Math.max(0, main) / count };
}

const row = (cells: string[]): void => console.log(`| ${cells.join(' | ')} |`);

try {
  // 1. CPU per failed attempt (the switch off and on) and per successful sign-in, every side in turn, round by round.
  console.log('\nCPU per sign-in: failed HTTP Basic attempts with unknown usernames (each from a new address), OPDS root pages');
  console.log('with a reader\'s remembered password, web logins with a remembered password');
  row(['round', 'code', 'requests', 'answers', 'process CPU per request', 'main-thread CPU per request']);
  row(['---', '---', '---', '---', '---', '---']);
  const readerApp = { authorization: basic('reader-app', 'reader-app-password') };
  const loginBody = JSON.stringify({ username: 'admin', password: 'admin-password' });
  const signIn = (side: Side) => async (): Promise<Answer> => {
    const started = performance.now();
    const res = await fetch(`${side.daemon.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: loginBody });
    await res.arrayBuffer();
    return { status: res.status, ms: performance.now() - started };
  };
  for (let round = 1; round <= rounds; round++) {
    for (const side of sides) {
      for (const on of [false, true]) {
        await setOpds(side, on);
        const figures = await cpuPerRequest(side.daemon.pid, attempts, attackOn(side));
        row([String(round), side.label, `${attempts} failed, OPDS ${on ? 'on' : 'off'}`, figures.answers, `${fmt(figures.total)} ms`, `${fmt(figures.main)} ms`]);
      }
      const opds = await cpuPerRequest(side.daemon.pid, signins, () => get(`${side.daemon.url}/api/v1/opds`, readerApp));
      row([String(round), side.label, `${signins} OPDS pages, remembered password`, opds.answers, `${fmt(opds.total)} ms`, `${fmt(opds.main)} ms`]);
      const logins = await cpuPerRequest(side.daemon.pid, signins / 4, signIn(side));
      row([String(round), side.label, `${signins / 4} web logins, remembered password`, logins.answers, `${fmt(logins.total)} ms`, `${fmt(logins.main)} ms`]);
    }
  }
  console.log(`load average after the CPU figures ${load()}`);

  // 2. Latency of ordinary requests at a steady pace, without and with the attack, interleaved.
  await setOpds(current, values['attack-opds'] !== 'off');
  const attack = attackOn(current);
  interface Phase {
    health: number[];
    book: number[];
    attackAnswers: Map<number, number>;
  }
  const phases: Record<'quiet' | 'attack', Phase> = {
    quiet: { health: [], book: [], attackAnswers: new Map() },
    attack: { health: [], book: [], attackAnswers: new Map() },
  };
  const paced = async (perSecond: number, until: number, send: () => Promise<void>): Promise<void> => {
    const pending: Promise<void>[] = [];
    const start = performance.now();
    for (let i = 0; performance.now() < until; i++) {
      const due = start + (i * 1000) / perSecond;
      if (due > performance.now()) await sleep(due - performance.now());
      pending.push(send());
    }
    await Promise.all(pending);
  };
  for (let round = 0; round < rounds; round++) {
    for (const kind of ['quiet', 'attack'] as const) {
      const phase = phases[kind];
      const until = performance.now() + seconds * 1000;
      let n = 0;
      const ordinary = paced(loadRate, until, async () => {
        const health = (n++ & 1) === 0;
        const url = health ? `${daemon.url}/api/v1/healthcheck` : `${daemon.url}/api/v1/books/${randomBookId()}`;
        const answer = await get(url, bearer);
        if (answer.status !== 200) throw new Error(`${url}: ${answer.status}`);
        (health ? phase.health : phase.book).push(answer.ms);
      });
      const hostile =
        kind === 'attack'
          ? paced(attackRate, until, async () => {
              const answer = await attack();
              phase.attackAnswers.set(answer.status, (phase.attackAnswers.get(answer.status) ?? 0) + 1);
            })
          : Promise.resolve();
      await Promise.all([ordinary, hostile]);
    }
  }
  const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] as number;
  console.log(`\nsteady ${loadRate} req/s (healthcheck and book alternating), ${rounds} × ${seconds} s per column, interleaved; attack: ${attackRate} unknown-username Basic attempts/s, OPDS ${values['attack-opds'] === 'off' ? 'off' : 'on'}`);
  console.log('| request | p50 without | p99 without | p50 under attack | p99 under attack | p99 ratio |');
  console.log('|---|---|---|---|---|---|');
  for (const [name, key] of [['GET /api/v1/healthcheck', 'health'], ['GET /api/v1/books/{id}', 'book']] as const) {
    const quiet = phases.quiet[key];
    const loud = phases.attack[key];
    console.log(`| ${name} | ${fmt(pct(quiet, 50))} ms | ${fmt(pct(quiet, 99))} ms | ${fmt(pct(loud, 50))} ms | ${fmt(pct(loud, 99))} ms | ${(pct(loud, 99) / pct(quiet, 99)).toFixed(2)} |`);
  }
  const answers = [...phases.attack.attackAnswers].map(([status, n]) => `${n}× ${status}`).join(', ');
  console.log(`attack answers: ${answers}`);
  console.log(`load average at end ${load()}`);
} finally {
  for (const side of sides) {
    await side.daemon.stop();
    rmSync(side.dataDir, { recursive: true, force: true });
  }
}
