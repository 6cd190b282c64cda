// Faults with several replicas on PostgreSQL, on a cluster of this test's own: the server restarted under load (requests
// in flight fail fast with 503 and Retry-After in the documented error shape, the pool and LISTEN reconnect without
// a restart of Bindery, no acknowledged write is lost), and a replica killed with SIGKILL under load (every write it
// acknowledged is read back through the other replica, and its leases move).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { DaemonProcess } from '../../bench/daemon-process.ts';
import { SINGLETONS } from '../../src/daemon/singletons.ts';
import { onPostgres } from '../helpers/engine.ts';
import { startPgCluster, postgresInstalled, type PgCluster } from '../helpers/pg-cluster.ts';
import { health, healthUntil, linkKoreader, pullProgress, pushProgress, setupAdmin, startReplica, type KoreaderDevice } from '../helpers/replicas.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

const ALL = [...SINGLETONS].sort();
const device: KoreaderDevice = { user: 'kindle', password: 'kindle-secret' };

interface Outcome {
  status: number;
  ms: number;
  body: unknown;
  retryAfter: string | null;
}

/** `writers` clients each writing rising percentages to a document of their own until `stop()`; what was acknowledged is kept. */
function writeLoad(baseUrl: () => string, writers: number): { stop(): Promise<void>; acked: Map<string, number>; sent: Map<string, number[]>; outcomes: Outcome[] } {
  const acked = new Map<string, number>();
  const sent = new Map<string, number[]>();
  const outcomes: Outcome[] = [];
  let running = true;
  const loops = Array.from({ length: writers }, async (_, w) => {
    const document = `${String(w).padStart(2, '0')}${'f'.repeat(30)}`;
    sent.set(document, []);
    for (let n = 1; running; n++) {
      const percentage = n / 100_000;
      sent.get(document)?.push(percentage);
      const started = performance.now();
      const res = await pushProgress(baseUrl(), device, document, percentage).catch((error: unknown) => ({ status: 0, body: String(error), headers: new Headers() }));
      outcomes.push({ status: res.status, ms: performance.now() - started, body: res.body, retryAfter: res.headers.get('retry-after') });
      if (res.status === 200) acked.set(document, percentage);
      else await new Promise((r) => setTimeout(r, 20));
    }
  });
  return {
    acked,
    sent,
    outcomes,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

async function listeners(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where application_name = 'bindery-listen'");
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

// About a PostgreSQL server going away: run once, in the suite's PostgreSQL run (on a cluster of its own even there).
describe.skipIf(!postgresInstalled || !onPostgres)('faults on PostgreSQL', () => {
  let dir: TempDir;
  let cluster: PgCluster;
  let a: DaemonProcess;
  let b: DaemonProcess;

  beforeAll(async () => {
    dir = makeTempDir('bindery-faults-');
    cluster = await startPgCluster();
    const env = { BINDERY_DATABASE_URL: cluster.url, BINDERY_TEST_DATABASE_SERVER: '' };
    a = await startReplica(dir.file('data'), 'replica-a', { env });
    await healthUntil(a.url, (h) => h.singletons.length === ALL.length);
    b = await startReplica(dir.file('data'), 'replica-b', { env });
    await linkKoreader(a.url, await setupAdmin(a.url), device);
  }, 120_000);

  afterAll(async () => {
    for (const d of [a, b]) if (d && d.child.exitCode !== null) console.log(d.stderr().slice(-3000), d.stdout().split('\n').filter((l) => !l.includes('"level":30')).join('\n').slice(-5000));
    await a?.stop('SIGKILL');
    await b?.stop('SIGKILL');
    cluster?.stop();
    dir?.remove();
  });

  it('answers 503 with Retry-After while PostgreSQL restarts, then serves again without a restart of Bindery', async () => {
    expect(await listeners(cluster.url)).toBe(2);
    const load = writeLoad(() => a.url, 4);
    await new Promise((r) => setTimeout(r, 1000));
    await cluster.restart();
    // Serving again: a write acknowledged after the restart, through each replica.
    const until = Date.now() + 30_000;
    const okAfter = async (url: string): Promise<void> => {
      for (;;) {
        if ((await pushProgress(url, device, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 0.5)).status === 200) return;
        if (Date.now() > until) throw new Error(`${url} did not serve again within 30 s`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    await okAfter(a.url);
    await okAfter(b.url);
    await new Promise((r) => setTimeout(r, 500));
    await load.stop();

    const failed = load.outcomes.filter((o) => o.status !== 200);
    expect(failed.length).toBeGreaterThan(0);
    for (const o of failed) {
      expect(o.status, JSON.stringify(o.body)).toBe(503);
      expect(o.retryAfter).toBe('5');
      expect(o.body).toMatchObject({ status: 503, message: expect.stringContaining('database') });
      expect(o.ms).toBeLessThan(11_000);
    }
    // Every acknowledged write is there (a later unacknowledged one may have committed too, never an earlier one).
    for (const [document, percentage] of load.acked) {
      const read = await pullProgress(b.url, device, document);
      expect(read.status).toBe(200);
      const stored = (read.body as { percentage: number }).percentage;
      expect(stored).toBeGreaterThanOrEqual(percentage);
      expect(load.sent.get(document)).toContain(stored);
    }
    // Both replicas listen for each other's changes again.
    for (let i = 0; i < 50 && (await listeners(cluster.url)) < 2; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await listeners(cluster.url)).toBe(2);
    // The leases were lost with the lock connection and are taken again: each singleton runs in exactly one replica.
    let running: string[] = [];
    for (let i = 0; i < 100; i++) {
      running = [...(await health(a.url)).singletons, ...(await health(b.url)).singletons].sort();
      if (running.length >= ALL.length) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(running).toEqual(ALL);
  }, 90_000);

  it('loses no acknowledged write when a replica is killed with SIGKILL under load, and its leases move', async () => {
    const holder = (await healthUntil(a.url, () => true)).singletons.length > 0 ? a : b;
    const survivor = holder === a ? b : a;
    const load = writeLoad(() => holder.url, 4);
    await new Promise((r) => setTimeout(r, 1500));
    await holder.stop('SIGKILL');
    await load.stop();
    expect(load.acked.size).toBe(4);
    for (const [document, percentage] of load.acked) {
      const read = await pullProgress(survivor.url, device, document);
      expect(read.status).toBe(200);
      expect((read.body as { percentage: number }).percentage).toBeGreaterThanOrEqual(percentage);
    }
    const after = await healthUntil(survivor.url, (h) => h.singletons.length === ALL.length, 30_000);
    expect(after.singletons).toEqual(ALL);
  }, 60_000);
});
