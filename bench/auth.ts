// npm run bench:auth [-- --books 2000 --attempts 40 --rate 20 --load-rate 40 --seconds 8 --rounds 2]
// Password checks against the real `bindery serve`: what one HTTP Basic attempt with an unknown username costs the
// daemon (process CPU and main-thread CPU, from /proc/<pid>/task/<pid>/stat) with the OPDS server switched off and
// on; then GET /api/v1/healthcheck and GET /api/v1/books/{id} latency (p50/p99) at a steady pace, without and with
// --rate such attempts per second, interleaved, in one table. Each attempt comes from its own loopback address
// (127.77.x.y) so the per-address failure limit never blocks it: the worst case, an attacker with many addresses.
// Linux only (/proc, the 127.0.0.0/8 loopback).
import { request, type IncomingMessage } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { build, BuildUnavailable } from '../scripts/build.ts';
import { openStore } from '../src/core/store/store.ts';
import { createUser, hashPassword } from '../src/core/users/users.ts';
import { fillCatalog } from './book-catalog.ts';
import { cpuMs, fromBundle, fromSource, ROOT, startDaemon, type Launcher } from './daemon-process.ts';

const { values } = parseArgs({
  options: {
    books: { type: 'string', default: '2000' },
    attempts: { type: 'string', default: '40' },
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
if (!values.source) {
  const bundleDir = join(ROOT, 'node_modules', '.cache', 'bindery-bench-auth');
  try {
    await build(bundleDir, { quiet: true });
    launcher = fromBundle(bundleDir);
  } catch (error) {
    if (!(error instanceof BuildUnavailable)) throw error;
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'bindery-bench-auth-'));
const store = await openStore(join(dataDir, 'bindery.sqlite'));
const adminId = await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'Admin', permissions: { admin: true } });
await store.db.insertInto('opds_user_v2').values({ user_id: adminId, username: 'reader-app', password_hash: await hashPassword('reader-app-password') }).execute();
const { bookIds } = await fillCatalog(store, books, join(dataDir, 'library'), adminId);
await store.close();
const randomBookId = (): number => bookIds.first + Math.floor(Math.random() * (bookIds.last - bookIds.first + 1));
console.log(`catalog: ${books} synthetic books; daemon from ${launcher.name}`);

const daemon = await startDaemon(launcher, { dataDir, env: { BINDERY_LOG_LEVEL: 'warn' } });
try {
  const login = await fetch(`${daemon.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'admin-password' }) });
  const { accessToken } = (await login.json()) as { accessToken: string };
  const bearer = { authorization: `Bearer ${accessToken}` };
  const setOpds = async (on: boolean): Promise<void> => {
    const res = await fetch(`${daemon.url}/api/v1/settings`, { method: 'PUT', headers: { ...bearer, 'content-type': 'application/json' }, body: JSON.stringify([{ name: 'OPDS_SERVER_ENABLED', value: on }]) });
    if (!res.ok) throw new Error(`settings: ${res.status} ${await res.text()}`);
  };
  const attack = (): Promise<Answer> => get(`${daemon.url}/api/v1/opds`, { authorization: basic(`random-${Math.random().toString(36).slice(2)}`, 'guess') }, nextAddress());

  // 1. CPU per attempt, the switch off and on. An idle stretch of the same length is measured first and subtracted.
  console.log('\nHTTP Basic attempts with unknown usernames, each from a new address');
  console.log('| OPDS server | attempts | answers | process CPU per attempt | main-thread CPU per attempt |');
  console.log('|---|---|---|---|---|');
  for (const on of [false, true]) {
    await setOpds(on);
    await attack();
    await sleep(500);
    const idleStart = { total: cpuMs(daemon.pid), main: mainThreadCpuMs(daemon.pid), at: performance.now() };
    await sleep(1000);
    const idle = { total: cpuMs(daemon.pid) - idleStart.total, main: mainThreadCpuMs(daemon.pid) - idleStart.main, ms: performance.now() - idleStart.at };
    const before = { total: cpuMs(daemon.pid), main: mainThreadCpuMs(daemon.pid) };
    const started = performance.now();
    const statuses = new Map<number, number>();
    // Four at a time, as a few reader apps (or an attacker) would send them.
    for (let sent = 0; sent < attempts; sent += 4) {
      const batch = await Promise.all(Array.from({ length: Math.min(4, attempts - sent) }, attack));
      for (const answer of batch) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    }
    const elapsed = performance.now() - started;
    const total = cpuMs(daemon.pid) - before.total - (idle.total * elapsed) / idle.ms;
    const main = mainThreadCpuMs(daemon.pid) - before.main - (idle.main * elapsed) / idle.ms;
    const answers = [...statuses].map(([status, n]) => `${n}× ${status}`).join(', ');
    console.log(`| ${on ? 'on' : 'off'} | ${attempts} | ${answers} | ${fmt(Math.max(0, total) / attempts)} ms | ${fmt(Math.max(0, main) / attempts)} ms |`);
  }

  // 2. Latency of ordinary requests at a steady pace, without and with the attack, interleaved.
  await setOpds(values['attack-opds'] !== 'off');
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
  await daemon.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
