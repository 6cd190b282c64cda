// Gives memory back while the daemon is idle. Loading the route modules at start-up makes V8 grow its young
// generation to its largest size (32 MB reserved, ~14 MB of it resident), and a burst of requests leaves the same
// behind; V8's own memory reducer, which would shrink it, judges an idle process by the allocation rate it saw at its
// last collection, and so never runs in a daemon that has gone quiet. One full collection that also shrinks the young
// generation, when the process has used almost no CPU for a while, takes the idle daemon from ~130 to ~115 MB. Under
// load V8 grows the young generation again as it needs. Once start-up is over, the old generation may also grow
// further between full collections than V8 would choose (growHeapForServing).
import v8 from 'node:v8';
import vm from 'node:vm';

type Collect = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

export interface IdleMemoryOptions {
  /** How often to look until the first collection (start-up is followed by a quiet spell in most cases). */
  firstMs: number;
  /** How often to look after it. */
  everyMs: number;
  /**
   * Until the first collection and within `startupMs` of the start, how soon to look again after a look that found the
   * process busy. Start-up's tail (~50–60 ms of CPU just after the daemon listens) makes the first look find it busy
   * more often than not; waiting `firstMs` again would keep start-up's heap resident for another second. Busy after
   * that is work, not start-up: the next look comes after `everyMs`.
   */
  busyRetryMs: number;
  /**
   * A look that finds the process quiet collects only if it stays quiet this much longer: a collection holds the event
   * loop for ~100 ms, and work that began just before the look hardly shows in the look's window.
   */
  confirmMs: number;
  /** After the first, collect again only when the process has used at least this much CPU (ms) since the last one. */
  minWorkMs: number;
  /** Idle: at most this share of one core used since the last look. */
  idleShare: number;
  /** After the first, a collection (~90 ms of CPU) is worth it only when V8 holds at least this much more heap than it uses. */
  minSlackBytes: number;
  /** …or when caches have let go of at least this much memory outside the heap (Buffers) since the last one. */
  minReleasedBytes: number;
  /**
   * Called once, at the first look at least `startupMs` after the start that finds the process busier than
   * `idleShare`; until then the looks come every `firstMs`.
   */
  onBusy?: () => void;
  /** Called after each collection this makes (V8's own collections are not told). */
  onCollect?: () => void;
  /** Busy looks before this long after the start are start-up's own tail (the singletons, the first background work). */
  startupMs: number;
  /** Called once, when the first look ends (after its confirmation and collection, if any): start-up is over. */
  afterStartUp: () => void;
}

// A look costs two system calls; a collection ~90 ms of CPU, so at most one per half second of work done in between.
const DEFAULTS: IdleMemoryOptions = { firstMs: 1000, everyMs: 5000, busyRetryMs: 250, confirmMs: 100, minWorkMs: 500, idleShare: 0.05, minSlackBytes: 8 * 1024 * 1024, minReleasedBytes: 4 * 1024 * 1024, startupMs: 3000, afterStartUp: () => {} };

/**
 * How far V8 lets the old generation grow past what its last full collection kept before it marks it again, once the
 * daemon serves: to twice that. V8's own choice, with the 8 MB young generation bin/bindery gives `serve`, was ~1.1×
 * for a heap that grows slowly: a daemon building feed pages ran a full collection (50–70 ms of CPU, on the main
 * thread and V8's helper threads) every 100–200 pages, and the page it fell on paid for it. Set after start-up, which
 * keeps V8's choice (the larger start-up heap would stay resident in an idle daemon: +1 MB); the idle collection
 * gives back what a burst of pages left, whatever the factor. docs/benchmarks.md, "Session 9: OPDS 2.0 and
 * /books/page built".
 */
const SERVING_HEAP_GROWING_PERCENT = 100;

/** Lets the old generation grow further between full collections from now on (see SERVING_HEAP_GROWING_PERCENT). */
export function growHeapForServing(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${SERVING_HEAP_GROWING_PERCENT}`);
}

let collect: Collect | undefined;
let released = 0;

/**
 * Tells the idle compaction that a cache dropped `bytes` of Buffers: their memory returns only once V8 collects the
 * objects that held them, which an idle process does not do by itself.
 */
export function noteReleased(bytes: number): void {
  released += bytes;
}

/** V8's `gc`, without exposing it to the daemon's own global scope (it exists in a context made for the purpose). */
function collector(): Collect {
  if (!collect) {
    v8.setFlagsFromString('--expose-gc');
    collect = vm.runInNewContext('gc') as Collect;
    v8.setFlagsFromString('--no-expose-gc');
  }
  return collect;
}

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/**
 * When to look next. Before the first collection a busy look is retried soon, but only within start-up: a daemon busy
 * from its start (clients reconnecting after a restart) would otherwise be looked at four times a second until the
 * first lull between two bursts of requests, and collected right as the next burst began (docs/benchmarks.md,
 * "Session 21").
 */
function nextLookMs(options: IdleMemoryOptions, collected: boolean, busyTold: boolean, busy: boolean, sinceStartMs: number): number {
  if (collected && busyTold) return options.everyMs;
  if (collected || !busy) return options.firstMs;
  return sinceStartMs < options.startupMs ? Math.min(options.busyRetryMs, options.firstMs) : options.everyMs;
}

/** Starts looking; the returned function stops it. The timer never keeps the process alive. */
export function compactWhenIdle(overrides: Partial<IdleMemoryOptions> = {}): () => void {
  const options = { ...DEFAULTS, ...overrides };
  let timer: NodeJS.Timeout | undefined;
  let lastCpu = cpuMicros();
  let lastAt = performance.now();
  const startedAt = performance.now();
  let collected = false;
  let looked = false;
  let cpuAtCollection = 0;
  let busyTold = options.onBusy === undefined;
  const shareSince = (cpu: number, at: number): number => (cpuMicros() - cpu) / 1000 / Math.max(1, performance.now() - at);
  const collectNow = (): void => {
    collector()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    collected = true;
    cpuAtCollection = cpuMicros();
    released = 0;
    options.onCollect?.();
  };
  /** Ends a look (and its confirmation): the next look's window starts now. */
  const lookAgain = (busy: boolean): void => {
    if (!looked) {
      looked = true;
      options.afterStartUp();
    }
    lastCpu = cpuMicros();
    lastAt = performance.now();
    timer = setTimeout(look, nextLookMs(options, collected, busyTold, busy, performance.now() - startedAt)).unref();
  };
  const look = (): void => {
    const share = shareSince(lastCpu, lastAt);
    const worked = !collected || (cpuMicros() - cpuAtCollection) / 1000 >= options.minWorkMs;
    const heap = v8.getHeapStatistics();
    const slack = worked && heap.total_heap_size - heap.used_heap_size >= options.minSlackBytes;
    // The first quiet look after start collects whatever the slack: start-up's code (configuration, migrations, the
    // route table, the singletons' set-up) never runs again, and this collection lets V8 drop its bytecode (~1 MB of
    // the ~1.6 MB an idle daemon holds) with the rest of start-up's garbage.
    const busy = share > options.idleShare;
    if (busy) {
      if (!busyTold && performance.now() - startedAt >= options.startupMs) {
        busyTold = true;
        options.onBusy?.();
      }
    } else if (!collected || slack || released >= options.minReleasedBytes) {
      const cpu = cpuMicros();
      const at = performance.now();
      timer = setTimeout(() => {
        const stillQuiet = shareSince(cpu, at) <= options.idleShare;
        if (stillQuiet) collectNow();
        lookAgain(!stillQuiet);
      }, options.confirmMs).unref();
      return;
    }
    lookAgain(busy);
  };
  timer = setTimeout(look, options.firstMs).unref();
  return () => clearTimeout(timer);
}
