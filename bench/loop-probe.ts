// Preloaded into a benchmarked daemon (`NODE_OPTIONS=--import <this file>`, set by bench/feeds.ts --loop-stats), so
// the same probe measures any version of the code, the baseline's included; nothing of it is in the product.
// It watches the daemon's main thread: event-loop delay (a 1 ms timer, perf_hooks.monitorEventLoopDelay), the share
// of the time the loop was busy (event-loop utilization), and garbage-collection pauses by kind. On SIGUSR2 it writes
// what it saw since the previous SIGUSR2 as JSON to the file named by BINDERY_BENCH_LOOP_PROBE, then starts over.
// It also times each HTTP request inside the daemon, from Node's 'request' event to the response's end (what the
// client measures besides: the time before the daemon reads the request and after it wrote the answer), and keeps the
// slowest ones with their URLs, and the bytes the main thread allocated in V8's young generation (what each scavenge
// has to make room for: summed from the young generation's use before each collection and after the one before).
import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants, createHistogram, monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { GCProfiler, getHeapSpaceStatistics } from 'node:v8';
import { isMainThread } from 'node:worker_threads';

const out = process.env.BINDERY_BENCH_LOOP_PROBE;
// Only the daemon's main thread: not its worker threads, nor processes it starts.
delete process.env.BINDERY_BENCH_LOOP_PROBE;

interface Pauses {
  count: number;
  ms: number;
  maxMs: number;
}

const YOUNG_SPACES = new Set(['new_space', 'new_large_object_space']);

/** Bytes in use in the young generation, from a GC profile's list of heap spaces. */
function youngBytes(spaces: readonly { spaceName: string; spaceUsedSize: number }[]): number {
  let bytes = 0;
  for (const space of spaces) if (YOUNG_SPACES.has(space.spaceName)) bytes += space.spaceUsedSize;
  return bytes;
}

/** Bytes in use in the young generation now. */
const youngNow = (): number => youngBytes(getHeapSpaceStatistics().map((space) => ({ spaceName: space.space_name, spaceUsedSize: space.space_used_size })));

/** Bytes allocated in the young generation since `profiler` started, when it held `startBytes`; stops the profiler. */
function youngAllocated(profiler: GCProfiler, startBytes: number): number {
  let allocated = 0;
  let after = startBytes;
  for (const gc of profiler.stop()?.statistics ?? []) {
    allocated += Math.max(0, youngBytes(gc.beforeGC.heapSpaceStatistics) - after);
    after = youngBytes(gc.afterGC.heapSpaceStatistics);
  }
  return allocated + Math.max(0, youngNow() - after);
}

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

if (isMainThread && out) {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  let gc: Record<string, Pauses> = {};
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = GC_KINDS[(entry as unknown as { detail: { kind: number } }).detail.kind] ?? 'other';
      const pauses = (gc[kind] ??= { count: 0, ms: 0, maxMs: 0 });
      pauses.count++;
      pauses.ms += entry.duration;
      pauses.maxMs = Math.max(pauses.maxMs, entry.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  let served = createHistogram();
  let slowest: { url: string; ms: number; atMs: number }[] = [];
  const started = new WeakMap<IncomingMessage, number>();
  let connections = 0;
  let lastAcceptMs = 0;
  subscribe('net.server.socket', () => {
    connections++;
    lastAcceptMs = Math.round(performance.now() - since);
  });
  subscribe('http.server.request.start', (message) => started.set((message as { request: IncomingMessage }).request, performance.now()));
  subscribe('http.server.response.finish', (message) => {
    const { request } = message as { request: IncomingMessage; response: ServerResponse };
    const at = started.get(request);
    if (at === undefined) return;
    const ms = performance.now() - at;
    served.record(Math.max(1, Math.round(ms * 1000)));
    if (slowest.length < 5 || ms > (slowest.at(-1)?.ms ?? 0)) {
      slowest.push({ url: request.url ?? '', ms: Math.round(ms), atMs: Math.round(at - since) });
      slowest.sort((a, b) => b.ms - a.ms);
      slowest.length = Math.min(slowest.length, 5);
    }
  });
  let utilization = performance.eventLoopUtilization();
  let since = performance.now();
  let collections = new GCProfiler();
  let youngAtStart = youngNow();
  collections.start();
  const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
  process.on('SIGUSR2', () => {
    const heap = process.memoryUsage();
    const report = {
      wallMs: performance.now() - since,
      delay: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), p999: ms(delay.percentile(99.9)), max: ms(delay.max), mean: ms(delay.mean), count: delay.count },
      utilization: performance.eventLoopUtilization(utilization).utilization,
      served: { p50: served.percentile(50) / 1000, p99: served.percentile(99) / 1000, max: served.max / 1000, count: served.count },
      slowest,
      connections,
      lastAcceptMs,
      gc,
      heapUsedMb: heap.heapUsed / 2 ** 20,
      youngAllocatedMb: youngAllocated(collections, youngAtStart) / 2 ** 20,
      rssMb: heap.rss / 2 ** 20,
    };
    writeFileSync(out, JSON.stringify(report));
    delay.reset();
    served = createHistogram();
    slowest = [];
    connections = 0;
    lastAcceptMs = 0;
    gc = {};
    utilization = performance.eventLoopUtilization();
    since = performance.now();
    collections = new GCProfiler();
    youngAtStart = youngNow();
    collections.start();
  });
}
