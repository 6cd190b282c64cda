// The idle daemon gives back the young generation V8 grew at start-up (src/daemon/idle-memory.ts).
import { PerformanceObserver, constants } from 'node:perf_hooks';
import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { compactWhenIdle, noteReleased } from '../../src/daemon/idle-memory.ts';

const youngGeneration = (): number => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.physical_space_size ?? 0;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Short-lived garbage with survivors, as start-up makes: V8 grows the young generation for it. */
function churn(): unknown[] {
  const kept: unknown[] = [];
  for (let i = 0; i < 400_000; i++) {
    const object = { i, text: `item ${i}`, list: [i, i + 1] };
    if (i % 4 === 0) kept.push(object);
  }
  return kept;
}

/** Counts V8's major collections from now on. */
function majorCollections(): { count: () => number; stop: () => void } {
  let count = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if ((entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) count++;
  });
  observer.observe({ entryTypes: ['gc'] });
  return { count: () => count, stop: () => observer.disconnect() };
}

/** Keeps this thread computing until `until` (performance.now()), letting timers run between chunks of 2 ms. */
async function busyUntil(until: number): Promise<void> {
  let sum = 0;
  while (performance.now() < until) {
    const chunkEnd = Math.min(until, performance.now() + 2);
    while (performance.now() < chunkEnd) sum += Math.sqrt(sum + 1);
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(sum).toBeGreaterThan(0);
}

describe('compactWhenIdle', () => {
  it('shrinks the young generation once the process is quiet and V8 holds much more heap than it uses', async () => {
    expect(churn().length).toBeGreaterThan(0);
    const before = youngGeneration();
    expect(before).toBeGreaterThan(1024 * 1024);
    // The test runner's other threads use the same process's CPU: any share counts as quiet here.
    let collected = false;
    const stop = compactWhenIdle({ firstMs: 20, everyMs: 60_000, minWorkMs: 0, idleShare: Number.POSITIVE_INFINITY, minSlackBytes: 1, minReleasedBytes: Infinity, onCollect: () => (collected = true) });
    try {
      for (let i = 0; i < 50 && !collected; i++) await sleep(20);
      expect(youngGeneration()).toBeLessThan(before);
      expect(youngGeneration()).toBeLessThanOrEqual(1024 * 1024);
    } finally {
      stop();
    }
  });

  it('collects once when the process first goes quiet, even when V8 holds no more heap than it uses', async () => {
    const majors = majorCollections();
    const stop = compactWhenIdle({ firstMs: 20, everyMs: 20, minWorkMs: 0, idleShare: Number.POSITIVE_INFINITY, minSlackBytes: Number.POSITIVE_INFINITY, minReleasedBytes: Infinity });
    try {
      for (let i = 0; i < 50 && majors.count() === 0; i++) await sleep(20);
      expect(majors.count()).toBeGreaterThan(0);
      // One collection is a few of V8's major GCs in a row, reported to the observer a little later (later still on a
      // busy machine): counted once the count holds for 100 ms. Then only slack or released Buffers are worth another.
      let first = majors.count();
      for (let i = 0; i < 20; i++) {
        await sleep(100);
        if (majors.count() === first) break;
        first = majors.count();
      }
      await sleep(200);
      expect(majors.count()).toBe(first);
    } finally {
      stop();
      majors.stop();
    }
  });

  it('leaves a busy process alone', async () => {
    const stop = compactWhenIdle({ firstMs: 20, everyMs: 60_000, minWorkMs: 0, idleShare: 0, minSlackBytes: 1, minReleasedBytes: Infinity });
    try {
      let kept: unknown[] | undefined = churn();
      const before = youngGeneration();
      const until = performance.now() + 200;
      // Busy: the CPU used between two looks is never zero while this runs.
      while (performance.now() < until) {
        kept = churn();
        await sleep(1);
      }
      expect(kept?.length).toBeGreaterThan(0);
      expect(youngGeneration()).toBeGreaterThanOrEqual(Math.min(before, 1024 * 1024));
    } finally {
      stop();
    }
  });

  it('collects again after a burst of work or once caches let go of Buffers, and not while nothing happens', async () => {
    // Its own collections, not V8's: under load V8 collects on its own schedule too.
    const majors: number[] = [];
    const stop = compactWhenIdle({ firstMs: 20, everyMs: 20, minWorkMs: 150, idleShare: Number.POSITIVE_INFINITY, minSlackBytes: 1, minReleasedBytes: 1000, onCollect: () => majors.push(performance.now()) });
    try {
      for (let i = 0; i < 50 && majors.length === 0; i++) await sleep(20);
      expect(majors.length).toBeGreaterThan(0);
      // Quiet for ten looks: no collection without work in between.
      const afterFirst = majors.length;
      await sleep(200);
      expect(majors.length).toBe(afterFirst);
      // A burst of work (well over 150 ms of CPU), then quiet: collected again.
      const cpuBefore = process.cpuUsage();
      let kept: unknown[] = [];
      while ((process.cpuUsage(cpuBefore).user + process.cpuUsage(cpuBefore).system) / 1000 < 300) kept = churn();
      expect(kept.length).toBeGreaterThan(0);
      const beforeQuiet = majors.length;
      for (let i = 0; i < 50 && majors.length === beforeQuiet; i++) await sleep(20);
      expect(majors.length).toBeGreaterThan(beforeQuiet);
      // A cache letting go of Buffers, with no work done: collected too.
      await sleep(100);
      const beforeRelease = majors.length;
      noteReleased(4096);
      for (let i = 0; i < 50 && majors.length === beforeRelease; i++) await sleep(20);
      expect(majors.length).toBeGreaterThan(beforeRelease);
    } finally {
      stop();
    }
  });
  it('looks again soon when start-up is still busy at the first look, instead of waiting as long again', async () => {
    const collections: number[] = [];
    const started = performance.now();
    // Half a core counts as busy: the test runner's other threads use a little of this process's CPU too.
    const stop = compactWhenIdle({ firstMs: 600, busyRetryMs: 20, confirmMs: 20, everyMs: 60_000, minWorkMs: 0, idleShare: 0.5, minSlackBytes: 1, minReleasedBytes: Infinity, onCollect: () => collections.push(performance.now() - started) });
    try {
      // Start-up's tail: most of the first look's window spent computing.
      const cpuBefore = process.cpuUsage();
      while ((process.cpuUsage(cpuBefore).user + process.cpuUsage(cpuBefore).system) / 1000 < 450) expect(churn().length).toBeGreaterThan(0);
      const quietFrom = performance.now() - started;
      for (let i = 0; i < 100 && collections.length === 0; i++) await sleep(20);
      expect(collections.length).toBe(1);
      // Soon after the work ended. Waiting `firstMs` again after a busy first look would have taken until 1,200 ms, over
      // 600 ms after it (on a loaded machine the work ends after the first look is due, which then comes at once).
      expect((collections[0] as number) - quietFrom).toBeLessThan(400);
    } finally {
      stop();
    }
  });

  it('tells once when the process gets busy after start-up', async () => {
    let busy = 0;
    // Busy from the start, within the time start-up is given: not told.
    const stop = compactWhenIdle({ firstMs: 20, everyMs: 20, minWorkMs: 0, idleShare: 0, minSlackBytes: 1, minReleasedBytes: Infinity, onBusy: () => busy++ });
    try {
      const until = performance.now() + 200;
      while (performance.now() < until) {
        expect(churn().length).toBeGreaterThan(0);
        await sleep(1);
      }
      expect(busy).toBe(0);
    } finally {
      stop();
    }
    // Busy from the start, for longer than start-up is given: told.
    const stopLater = compactWhenIdle({ firstMs: 20, everyMs: 20, minWorkMs: 0, idleShare: 0, minSlackBytes: 1, minReleasedBytes: Infinity, startupMs: 100, onBusy: () => busy++ });
    try {
      const until = performance.now() + 1000;
      while (performance.now() < until && busy === 0) {
        expect(churn().length).toBeGreaterThan(0);
        await sleep(1);
      }
      expect(busy).toBe(1);
    } finally {
      stopLater();
    }
    // After start-up, work that keeps the thread busy: told, once. (Shares are of one core over wall time, so on a
    // loaded machine even a busy loop gets a small one.)
    const stopAgain = compactWhenIdle({ firstMs: 20, everyMs: 20, minWorkMs: 0, idleShare: 0.1, minSlackBytes: Infinity, minReleasedBytes: Infinity, startupMs: 0, onBusy: () => busy++ });
    try {
      const beforeWork = busy;
      for (let i = 0; i < 20 && busy === beforeWork; i++) {
        const cpuBefore = process.cpuUsage();
        while ((process.cpuUsage(cpuBefore).user + process.cpuUsage(cpuBefore).system) / 1000 < 60) expect(churn().length).toBeGreaterThan(0);
        await sleep(1);
      }
      expect(busy).toBe(beforeWork + 1);
      // Told once only.
      const cpuBefore = process.cpuUsage();
      while ((process.cpuUsage(cpuBefore).user + process.cpuUsage(cpuBefore).system) / 1000 < 100) expect(churn().length).toBeGreaterThan(0);
      await sleep(60);
      expect(busy).toBe(beforeWork + 1);
    } finally {
      stopAgain();
    }
  });

  it('says once, at its first look, that start-up is over: after the first collection when quiet, and when busy', async () => {
    for (const quiet of [true, false]) {
      expect(churn().length).toBeGreaterThan(0);
      const youngAtCall: number[] = [];
      const stop = compactWhenIdle({ firstMs: 20, everyMs: 20, minWorkMs: 0, idleShare: quiet ? Number.POSITIVE_INFINITY : -1, minSlackBytes: 1, minReleasedBytes: Infinity, afterStartUp: () => youngAtCall.push(youngGeneration()) });
      try {
        for (let i = 0; i < 50 && youngAtCall.length === 0; i++) await sleep(20);
        await sleep(100);
        expect(youngAtCall).toHaveLength(1);
        // Quiet: the collection (which shrinks the young generation) came first, so start-up's heap was given back
        // under V8's own growth factor.
        if (quiet) expect(youngAtCall[0]).toBeLessThanOrEqual(1024 * 1024);
      } finally {
        stop();
      }
    }
  });

  it('does not collect when work begins just before a look that finds the time since the last one quiet', async () => {
    const started = performance.now();
    const collections: number[] = [];
    // A quarter of a core counts as busy (a busy loop gets less than a whole one on a loaded machine). The first look
    // comes at 400 ms, 20 ms into work that began at 380 ms: its window (from the start) reads a twentieth of a core.
    const stop = compactWhenIdle({ firstMs: 400, busyRetryMs: 20, confirmMs: 150, everyMs: 60_000, minWorkMs: 0, idleShare: 0.25, minSlackBytes: 1, minReleasedBytes: Infinity, onCollect: () => collections.push(performance.now() - started) });
    try {
      await sleep(380);
      const workFrom = performance.now() - started;
      await busyUntil(started + 900);
      const workTo = performance.now() - started;
      expect(collections.filter((at) => at > workFrom && at < workTo)).toEqual([]);
      // Once the work is over, the process is quiet and collected.
      for (let i = 0; i < 100 && collections.length === 0; i++) await sleep(20);
      expect(collections.length).toBe(1);
      expect(collections[0]).toBeGreaterThanOrEqual(workTo);
    } finally {
      stop();
    }
  });

  it('after start-up, waits for a quiet spell of a whole look in a process busy from its start, not for the first short lull', async () => {
    const collections: number[] = [];
    const stop = compactWhenIdle({ firstMs: 20, busyRetryMs: 20, confirmMs: 20, startupMs: 100, everyMs: 60_000, minWorkMs: 0, idleShare: 0.2, minSlackBytes: 1, minReleasedBytes: Infinity, onCollect: () => collections.push(performance.now()) });
    try {
      // Busy past start-up, a lull of 120 ms (a look's window six times over), busy again.
      await busyUntil(performance.now() + 400);
      await sleep(120);
      await busyUntil(performance.now() + 200);
      expect(collections).toEqual([]);
    } finally {
      stop();
    }
  });
});
