// Whether an owner recorded by some process still runs, on the engine of this run: on SQLite by host, boot and pid
// (a catalog never spans machines); on PostgreSQL also by the advisory lock the owner holds while it runs, so that a
// live process on another machine is seen alive and a process killed with SIGKILL is seen dead at once.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Owner } from '../../src/core/process-owner.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { onPostgres } from '../helpers/engine.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

let dir: TempDir;
let catalog: string;
let store: Store;

beforeAll(async () => {
  dir = makeTempDir('bindery-liveness-');
  catalog = dir.file('bindery.sqlite');
  store = await openStore(catalog);
});

afterAll(async () => {
  await store?.close();
  dir?.remove();
});

async function registeredChild(): Promise<{ child: ChildProcess; owner: Owner }> {
  const child = spawn(process.execPath, [join(import.meta.dirname, '../helpers/liveness-holder.ts'), catalog], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve) => child.stdout?.once('data', (d: Buffer) => resolve(d.toString().trim())));
  return { child, owner: JSON.parse(line) as Owner };
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Waits until `owner` is judged dead (the server notices a killed client's connection within moments). */
async function deadWithin(owner: Partial<Owner>, timeoutMs: number): Promise<boolean> {
  const started = performance.now();
  while (await store.liveness.alive(owner)) {
    if (performance.now() - started > timeoutMs) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/** The same process as another machine would have recorded it. */
const elsewhere = (owner: Owner): Owner => ({ ...owner, host: 'replica-b.example', boot: 'boot-of-replica-b', pid: 4_000_000 });

describe('liveness of owners', () => {
  it('sees a registered process alive while it runs, and dead once killed with SIGKILL', async () => {
    const { child, owner } = await registeredChild();
    expect(owner.pid).toBe(child.pid);
    // Only a database server has a lock to name.
    if (onPostgres) expect(owner.token).toMatch(/^[0-9a-f-]{36}$/);
    else expect(owner.token).toBeUndefined();
    expect(await store.liveness.alive(owner)).toBe(true);
    await kill(child);
    expect(await deadWithin(owner, 10_000)).toBe(true);
  });

  // On SQLite an owner recorded on another machine can only be an earlier incarnation of this one.
  it.runIf(onPostgres)('sees a live owner recorded on another machine alive, and dead once its process is killed', async () => {
    const { child, owner } = await registeredChild();
    expect(await store.liveness.alive(elsewhere(owner))).toBe(true);
    await kill(child);
    expect(await deadWithin(elsewhere(owner), 10_000)).toBe(true);
  });

  it.runIf(!onPostgres)('SQLite: takes an owner recorded under another host name or boot for gone', async () => {
    const { child, owner } = await registeredChild();
    try {
      expect(await store.liveness.alive(elsewhere(owner))).toBe(false);
      expect(await store.liveness.alive({ ...owner, boot: 'an-earlier-boot' })).toBe(false);
    } finally {
      await kill(child);
    }
  });

  it('judges an owner recorded without a token (an older record) by host, boot and pid, as before', async () => {
    const { child, owner } = await registeredChild();
    try {
      const { token: _, ...untokened } = owner;
      expect(await store.liveness.alive(untokened)).toBe(true);
      expect(await store.liveness.alive(elsewhere(untokened))).toBe(false);
    } finally {
      await kill(child);
    }
  });

  it('knows its own records: by their token on PostgreSQL, by host, boot and pid otherwise', async () => {
    const { owner: me } = await store.liveness.register();
    expect(store.liveness.isThisProcess(me)).toBe(true);
    const { token: _, ...untokened } = me;
    expect(store.liveness.isThisProcess(untokened)).toBe(true);
    // A process in another container of this machine, with the host's name and the same pid.
    expect(store.liveness.isThisProcess({ ...untokened, token: 'another-process' })).toBe(!onPostgres);
    expect(store.liveness.isThisProcess({ ...untokened, pid: me.pid + 1 })).toBe(false);
  });

  it('sees this process alive once registered, and never a made-up token', async () => {
    const { owner: me } = await store.liveness.register();
    expect(await store.liveness.alive(me)).toBe(true);
    expect(await store.liveness.alive({ ...me, token: 'no-such-process' })).toBe(!onPostgres);
    expect(await store.liveness.alive({ ...elsewhere(me), token: 'no-such-process' })).toBe(false);
  });
});
