// Several `bindery serve` processes on one catalog: exactly one runs the singleton jobs and every process says which;
// a write through one is read through another; live events reach clients of any process; killing the holder with
// SIGKILL moves its leases; `serve --workers 2` shares one port between two workers and restarts a dead one.
// (Started together, workers may share the leases out between them; each job still runs in one process only.)
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromSource, startDaemon, type DaemonProcess } from '../../bench/daemon-process.ts';
import { SINGLETONS } from '../../src/daemon/singletons.ts';
import { stompClient } from '../helpers/live-clients.ts';
import { call, FAST_LEASES, health, healthUntil, linkKoreader, pullProgress, pushProgress, setupAdmin, signIn, startReplica } from '../helpers/replicas.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

const ALL = [...SINGLETONS].sort();

describe('two replicas on one catalog', () => {
  let dir: TempDir;
  let a: DaemonProcess;
  let b: DaemonProcess;
  let token: string;

  beforeAll(async () => {
    dir = makeTempDir('bindery-replicas-');
    a = await startReplica(dir.file('data'), 'replica-a');
    // The first process takes every lease before the second starts looking.
    await healthUntil(a.url, (h) => h.singletons.length === ALL.length);
    b = await startReplica(dir.file('data'), 'replica-b');
    token = await setupAdmin(a.url);
  }, 120_000);

  afterAll(async () => {
    await a?.stop('SIGKILL');
    await b?.stop('SIGKILL');
    dir?.remove();
  });

  it('runs every singleton in one process, and both say which', async () => {
    expect(await health(a.url)).toMatchObject({ instance: 'replica-a', singletons: ALL });
    expect(await health(b.url)).toMatchObject({ instance: 'replica-b', singletons: [] });
    const last = await call(b.url, 'GET', '/api/v1/tasks/last', token);
    expect(last.status).toBe(200);
    const cluster = (last.body as { cluster: { instance: string; running: string[]; leases: { lease: string; holder: string; alive: boolean }[] } }).cluster;
    expect(cluster.instance).toBe('replica-b');
    expect(cluster.running).toEqual([]);
    expect(cluster.leases.map(({ lease, holder, alive }) => ({ lease, holder, alive }))).toEqual(ALL.map((lease) => ({ lease, holder: 'replica-a', alive: true })));
  });

  it('reads through one replica what was written through the other', async () => {
    const device = { user: 'kindle', password: 'kindle-secret' };
    await linkKoreader(b.url, await signIn(b.url), device);
    const document = '0123456789abcdef0123456789abcdef';
    expect((await pushProgress(a.url, device, document, 0.42)).status).toBe(200);
    const read = await pullProgress(b.url, device, document);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ document, percentage: 0.42 });
  });

  it('sends a live event caused through one replica to a client of the other', async () => {
    const client = stompClient(`${b.url.replace('http', 'ws')}/ws`, token);
    await client.connected;
    client.subscribe('/topic/library-health');
    const folder = dir.file('library');
    mkdirSync(folder);
    const created = await call(a.url, 'POST', '/api/v1/libraries', token, { name: 'Shelf', paths: [{ path: folder }] });
    expect(created.status).toBe(200);
    const libraryId = (created.body as { id: number }).id;
    const message = await client.next('/topic/library-health', (body) => String(libraryId) in ((body as { libraryHealth?: object }).libraryHealth ?? {}), 10_000);
    expect((message.body as { libraryHealth: Record<string, boolean> }).libraryHealth[String(libraryId)]).toBe(true);
    await client.stop();
  });

  it('counts failed sign-ins together: failures split across both block at the limit, a success on one clears for the other', async () => {
    let guess = 0;
    const login = async (url: string, username: string, password = `wrong-${guess++}`): Promise<number> =>
      (await call(url, 'POST', '/api/v1/auth/login', undefined, { username, password })).status;
    // Five failures for a name, alternating between the replicas: either refuses the sixth before any password work.
    for (let i = 0; i < 5; i++) expect(await login(i % 2 === 0 ? a.url : b.url, 'nobody')).toBe(400);
    expect(await login(a.url, 'nobody')).toBe(429);
    expect(await login(b.url, 'nobody')).toBe(429);
    // Four failures through one, a success through the other: the count is gone for both, so four more are allowed.
    for (let i = 0; i < 4; i++) expect(await login(a.url, 'admin')).toBe(400);
    expect(await login(b.url, 'admin', 'admin-password')).toBe(200);
    for (let i = 0; i < 4; i++) expect(await login(i % 2 === 0 ? a.url : b.url, 'admin')).toBe(400);
    expect(await login(a.url, 'admin', 'admin-password')).toBe(200);
  });

  it('moves every lease to the other replica within 30 s of a SIGKILL of the holder', async () => {
    const killedAt = performance.now();
    await a.stop('SIGKILL');
    const after = await healthUntil(b.url, (h) => h.singletons.length === ALL.length, 30_000);
    expect(performance.now() - killedAt).toBeLessThan(30_000);
    expect(after).toMatchObject({ instance: 'replica-b', singletons: ALL });
    const last = await call(b.url, 'GET', '/api/v1/tasks/last', token);
    const leases = (last.body as { cluster: { leases: { holder: string; alive: boolean }[] } }).cluster.leases;
    expect(leases.every((l) => l.holder === 'replica-b' && l.alive)).toBe(true);
  });
});

describe('serve --workers 2', () => {
  let dir: TempDir;
  let server: DaemonProcess;

  beforeAll(async () => {
    dir = makeTempDir('bindery-workers-');
    server = await startDaemon(fromSource, { dataDir: dir.file('data'), args: ['--workers', '2'], env: { BINDERY_INSTANCE_NAME: 'box', ...FAST_LEASES } });
  }, 120_000);

  afterAll(async () => {
    if (server?.child.exitCode === null) await server.stop('SIGKILL');
    dir?.remove();
  });

  /** Each worker, by instance name, as its healthcheck says (new connections go to the workers in turn). */
  async function workers(): Promise<Map<string, string[]>> {
    const seen = new Map<string, string[]>();
    for (let i = 0; i < 40 && seen.size < 2; i++) {
      // A connection handed to the worker just killed is lost: that request is simply asked again.
      const res = await fetch(`${server.url}/api/v1/healthcheck`, { headers: { connection: 'close' }, signal: AbortSignal.timeout(3000) }).catch(() => undefined);
      if (!res?.ok) continue;
      const { instance, singletons } = ((await res.json()) as { data: { instance: string; singletons: string[] } }).data;
      seen.set(instance, singletons);
    }
    return seen;
  }

  it('answers from two workers, each singleton run by one of them; a killed worker is replaced and its leases move', async () => {
    let seen = await workers();
    const taken = (): string[] => [...seen.values()].flat().sort();
    for (let i = 0; i < 300 && (taken().length < ALL.length || seen.size < 2); i++) {
      await new Promise((r) => setTimeout(r, 100));
      seen = await workers();
    }
    expect([...seen.keys()].sort()).toEqual(['box-w1', 'box-w2']);
    // Both started together: the leases may be shared out, but no job runs twice.
    expect(taken()).toEqual(ALL);
    const holder = [...seen].find(([, s]) => s.includes('scheduler'))?.[0] as string;
    const other = holder === 'box-w1' ? 'box-w2' : 'box-w1';
    // The holder's pid, from the lease table.
    const token = await setupAdmin(server.url);
    const leases = ((await call(server.url, 'GET', '/api/v1/tasks/last', token)).body as { cluster: { leases: { lease: string; holder: string }[] } }).cluster.leases;
    expect(leases.find((l) => l.lease === 'scheduler')?.holder).toBe(holder);
    const pids = (await import('node:child_process')).execFileSync('ps', ['-o', 'pid=', '--ppid', String(server.pid)], { encoding: 'utf8' }).trim().split(/\s+/).map(Number);
    expect(pids).toHaveLength(2);
    const holderPid = await pidOfWorker(holder, pids);
    process.kill(holderPid, 'SIGKILL');
    // The other worker takes the leases; the supervisor starts a new worker in the killed one's place.
    for (let i = 0; i < 300; i++) {
      seen = await workers();
      if (seen.get(other)?.length === ALL.length && seen.size === 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(seen.get(other)).toEqual(ALL);
    // The replacement worker answers under the same name and runs nothing while the other holds every lease.
    expect(seen.get(holder)).toEqual([]);
    const stopped = await server.stop('SIGTERM');
    expect(stopped.code).toBe(0);
  }, 120_000);
});

/** Which child process is the named worker: its environment says. */
async function pidOfWorker(name: string, pids: number[]): Promise<number> {
  const { readFileSync } = await import('node:fs');
  for (const pid of pids) {
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    if (env.includes(`BINDERY_INSTANCE_NAME=${name}`)) return pid;
  }
  throw new Error(`no worker named ${name}`);
}
