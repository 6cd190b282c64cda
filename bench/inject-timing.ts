// Latency and CPU time of in-process requests (fastify inject), for the feed and API benchmarks (bench/opds.ts,
// bench/komga.ts). CPU time is the process's user + system time over the request (process.cpuUsage), which on a
// shared machine is steadier than wall time: other work delays a request but does not add to its CPU time.
import type Database from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';

export interface Timing {
  p50: number;
  p99: number;
  /** Median CPU milliseconds per request. */
  cpu: number;
  bytes: number;
}

export function percentile(xs: readonly number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] as number;
}

export interface MeasureOptions {
  runs: number;
  headers: Record<string, string>;
  /** A JSON body, sent with POST (GET without one). */
  body?: unknown;
  /** Commit a write before every request, so remembered totals and indexes are computed again. */
  changed?: { sqlite: Database.Database };
}

let touch = 0;

/** One warm-up request (which must answer 200), then `runs` timed ones. */
export async function measure(app: FastifyInstance, url: string, options: MeasureOptions): Promise<Timing> {
  const request = options.body === undefined ? { method: 'GET' as const, url, headers: options.headers } : { method: 'POST' as const, url, headers: options.headers, payload: options.body as object };
  const warm = await app.inject(request);
  if (warm.statusCode !== 200) throw new Error(`${url}: ${warm.statusCode} ${warm.body.slice(0, 200)}`);
  const wall: number[] = [];
  const cpu: number[] = [];
  const write = options.changed?.sqlite.prepare("INSERT INTO app_settings (name, val) VALUES ('bench_touch', ?) ON CONFLICT(name) DO UPDATE SET val = excluded.val");
  for (let i = 0; i < options.runs; i++) {
    write?.run(String(++touch));
    const startCpu = process.cpuUsage();
    const start = performance.now();
    await app.inject(request);
    wall.push(performance.now() - start);
    const used = process.cpuUsage(startCpu);
    cpu.push((used.user + used.system) / 1000);
  }
  return { p50: percentile(wall, 0.5), p99: percentile(wall, 0.99), cpu: percentile(cpu, 0.5), bytes: warm.rawPayload.length };
}

export const TABLE_HEAD = ['| request | p50 / p99 ms | CPU ms | changed: p50 / p99 ms | changed: CPU ms | KiB |', '|---|---|---|---|---|---|'];

export function tableRow(label: string, steady: Timing, changed: Timing): string {
  const f = (n: number): string => n.toFixed(1);
  return `| ${label} | ${f(steady.p50)} / ${f(steady.p99)} | ${f(steady.cpu)} | ${f(changed.p50)} / ${f(changed.p99)} | ${f(changed.cpu)} | ${(steady.bytes / 1024).toFixed(0)} |`;
}

/** One table row: the request measured on an unchanged catalog and with a write before each request. */
export async function timingRow(
  app: FastifyInstance,
  label: string,
  url: string,
  options: { runs: number; headers: Record<string, string>; sqlite: Database.Database; body?: unknown },
): Promise<string> {
  try {
    const { runs, headers, sqlite, body } = options;
    return tableRow(label, await measure(app, url, { runs, headers, body }), await measure(app, url, { runs, headers, body, changed: { sqlite } }));
  } catch (error) {
    return `| ${label} | ${(error as Error).message.slice(0, 80)} | | | | |`;
  }
}
