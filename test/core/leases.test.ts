// Leases on singleton jobs, on the engine of this run: one holder at a time, a clean release hands over at once, and
// a holder killed with SIGKILL (a child process) loses its lease to the next process that looks.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentOwner } from '../../src/core/process-owner.ts';
import { SingletonKeeper } from '../../src/core/cluster/singletons.ts';
import type { LeaseInstance, Leases } from '../../src/core/store/leases.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

let dir: TempDir;
let catalog: string;
let first: Store;
let second: Store;

function instance(name: string): LeaseInstance {
  return { ...currentOwner(), name, token: `${name}-${Math.random()}` };
}

beforeAll(async () => {
  dir = makeTempDir('bindery-leases-');
  catalog = dir.file('bindery.sqlite');
  first = await openStore(catalog);
  second = await openStore(catalog);
});

afterAll(async () => {
  await first?.close();
  await second?.close();
  dir?.remove();
});

async function holdUntil(leases: Leases, lease: string, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while (!(await leases.hold(lease))) {
    if (performance.now() - started > timeoutMs) throw new Error(`${lease} was not taken over within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return performance.now() - started;
}

describe('leases', () => {
  it('has one holder at a time; a release hands the lease over; the table names the holder', async () => {
    const a = first.leases(instance('replica-a'));
    const b = second.leases(instance('replica-b'));
    expect(await a.hold('scheduler')).toBe(true);
    expect(await a.hold('scheduler')).toBe(true);
    expect(await b.hold('scheduler')).toBe(false);
    expect(await b.hold('bookdrop-watcher')).toBe(true);
    const seen = await b.holdings();
    expect(seen.map(({ lease, holder, alive, mine }) => ({ lease, holder, alive, mine }))).toEqual([
      { lease: 'bookdrop-watcher', holder: 'replica-b', alive: true, mine: true },
      { lease: 'scheduler', holder: 'replica-a', alive: true, mine: false },
    ]);
    await a.release('scheduler');
    expect(await b.hold('scheduler')).toBe(true);
    expect(await a.hold('scheduler')).toBe(false);
    await a.close();
    await b.close();
  });

  it('moves to another process when the holder is killed with SIGKILL', async () => {
    const child: ChildProcess = spawn(process.execPath, [join(import.meta.dirname, '../helpers/lease-holder.ts'), catalog, 'move-recovery'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const said = await new Promise<string>((resolve) => child.stdout?.once('data', (d: Buffer) => resolve(d.toString().trim())));
    expect(said).toBe('held');
    const b = second.leases(instance('replica-b'));
    expect(await b.hold('move-recovery')).toBe(false);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const tookMs = await holdUntil(b, 'move-recovery', 30_000);
    expect(tookMs).toBeLessThan(30_000);
    const holding = (await b.holdings()).find((h) => h.lease === 'move-recovery');
    expect(holding).toMatchObject({ holder: 'replica-b', alive: true, mine: true });
    await b.close();
  });

  it('runs a singleton only where its lease is held, and starts it elsewhere once the holder shuts down', async () => {
    const log = { info: () => undefined, warn: () => undefined };
    const runs: string[] = [];
    const singleton = (who: string) => [{ name: 'outbox-prune', start: async () => (runs.push(`${who} start`), () => void runs.push(`${who} stop`)) }];
    const a = new SingletonKeeper(first.leases(instance('a')), singleton('a'), { everyMs: 50, log });
    const b = new SingletonKeeper(second.leases(instance('b')), singleton('b'), { everyMs: 50, log });
    await a.start();
    await b.start();
    expect(a.running()).toEqual(['outbox-prune']);
    expect(b.running()).toEqual([]);
    await a.close();
    for (let i = 0; i < 100 && b.running().length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(b.running()).toEqual(['outbox-prune']);
    await b.close();
    expect(runs).toEqual(['a start', 'a stop', 'b start', 'b stop']);
  });
});
