// How long the singleton jobs (scheduler, bookdrop watcher, move recovery, outbox clean-up, Hardcover push) go without a
// runner when the replica holding their leases is killed with SIGKILL: two `bindery serve` processes on one catalog;
// each round kills the holder and times until the other's healthcheck says it runs every singleton; the killed one is
// started again for the next round. SQLite rounds and, with --database-url, PostgreSQL rounds alternate in one run.
// Usage: node bench/lease-takeover.ts [--rounds 5] [--database-url postgres://…] [--check-ms 2000]
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SINGLETONS } from '../src/daemon/singletons.ts';
import { fromSource, startDaemon, type DaemonProcess } from './daemon-process.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, 'database-url': { type: 'string' }, 'check-ms': { type: 'string', default: '2000' } } });
const rounds = Number(values.rounds);
const SINGLETON_COUNT = SINGLETONS.length;

interface Engine {
  name: string;
  env: NodeJS.ProcessEnv;
}

const engines: Engine[] = [{ name: 'sqlite', env: { BINDERY_TEST_DATABASE_SERVER: '' } }];
if (values['database-url']) engines.push({ name: 'postgres', env: { BINDERY_DATABASE_URL: values['database-url'], BINDERY_TEST_DATABASE_SERVER: '' } });

async function singletons(url: string): Promise<string[]> {
  try {
    const res = await fetch(`${url}/api/v1/healthcheck`, { signal: AbortSignal.timeout(2000) });
    return ((await res.json()) as { data: { singletons: string[] } }).data.singletons;
  } catch {
    return [];
  }
}

async function until(test: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await test())) {
    if (performance.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const dirs = new Map<string, string>();
const pairs = new Map<string, [DaemonProcess, DaemonProcess]>();
const start = (engine: Engine, name: string): Promise<DaemonProcess> =>
  startDaemon(fromSource, { dataDir: dirs.get(engine.name) as string, env: { ...engine.env, BINDERY_INSTANCE_NAME: name, BINDERY_LEASE_CHECK_MS: values['check-ms'] } });

for (const engine of engines) {
  dirs.set(engine.name, mkdtempSync(join(tmpdir(), `bindery-lease-bench-${engine.name}-`)));
  const first = await start(engine, `${engine.name}-1`);
  await until(async () => (await singletons(first.url)).length === SINGLETON_COUNT, 30_000);
  pairs.set(engine.name, [first, await start(engine, `${engine.name}-2`)]);
}

const results = new Map<string, number[]>(engines.map((e) => [e.name, []]));
const loads: number[] = [];
try {
  for (let round = 1; round <= rounds; round++) {
    for (const engine of engines) {
      const [x, y] = pairs.get(engine.name) as [DaemonProcess, DaemonProcess];
      const holder = (await singletons(x.url)).length === SINGLETON_COUNT ? x : y;
      const survivor = holder === x ? y : x;
      loads.push(loadavg()[0] as number);
      const killedAt = performance.now();
      await holder.stop('SIGKILL');
      await until(async () => (await singletons(survivor.url)).length === SINGLETON_COUNT, 60_000);
      const ms = performance.now() - killedAt;
      results.get(engine.name)?.push(ms);
      console.log(`round ${round} ${engine.name}: takeover ${ms.toFixed(0)} ms (load ${loadavg()[0]?.toFixed(2)})`);
      const restarted = await start(engine, holder === x ? `${engine.name}-1` : `${engine.name}-2`);
      pairs.set(engine.name, holder === x ? [restarted, survivor] : [survivor, restarted]);
    }
  }
} finally {
  for (const [a, b] of pairs.values()) await Promise.all([a.stop('SIGKILL'), b.stop('SIGKILL')]);
  for (const dir of dirs.values()) rmSync(dir, { recursive: true, force: true });
}

const pct = (list: number[], p: number): number => [...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor((p / 100) * list.length))] as number;
console.log(`\nlease takeover after kill -9 of the holder (lease checks every ${values['check-ms']} ms), ${rounds} rounds`);
for (const [engine, list] of results) console.log(`${engine.padEnd(9)} min ${pct(list, 0).toFixed(0)} ms  median ${pct(list, 50).toFixed(0)} ms  max ${pct(list, 100).toFixed(0)} ms`);
console.log(`load average (1 min) during the rounds: ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)} on ${(await import('node:os')).cpus().length} cores`);
