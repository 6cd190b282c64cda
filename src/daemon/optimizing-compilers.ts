// bin/bindery starts `serve` with V8's optimizing compilers (Maglev and TurboFan) switched off, and the daemon switches
// them on with its first request of the API or once it gets busy after its start (src/daemon/app.ts, idle-memory.ts).
// The flags are the process's: the password pool's threads run bcrypt unoptimized until then. Start-up
// makes ~260 functions hot that never run hot again (the route table's registration, the resolution of the bundle's
// modules): compiling them took ~85 ms of start-up's CPU and touched ~8 MB of the compilers' own code in the node
// binary, which then stayed resident in a daemon that answered nothing; switched on at idle, the daemon's periodic work
// (lease renewals) would recompile start-up's hot query-building code and touch it again (docs/benchmarks.md,
// "Session 9: idle memory"). Requests get optimized code as before, once they make it hot.
//
// TurboFan comes on with a tier-up threshold of 10,000 invocations instead of V8's 3,000: the daemon compiles on its own
// thread (`--no-concurrent-recompilation`), and at V8's threshold TurboFan took a feed's page code in its first pages
// (OPDS 1.2 read 5-9 ms a page the first time it was asked), for code that runs about as fast on Maglev's output
// (SQLite reads and string building). Built pages, quiet machine: OPDS 1.2 1.43-1.59 -> 1.20-1.25 ms, OPDS 2.0
// 1.42-1.51 -> 1.02-1.06, kept pages no dearer (docs/benchmarks.md, "Session 10: TurboFan's threshold"). Code that
// is really hot still gets it soon: a bcrypt check on the password pool costs 55 ms either way (160 ms on Maglev alone).
import type { IncomingMessage, Server } from 'node:http';
import module from 'node:module';
import v8 from 'node:v8';

/** The flags bin/bindery gives `serve`, each with what undoes it. */
const DEFERRED = [
  ['--no-maglev', ['--maglev']],
  ['--no-turbofan', ['--invocation-count-for-turbofan=10000', '--turbofan']],
] as const;

let switchedOn = false;

/**
 * Switches on (once) the optimizing compilers this process was started without by bin/bindery's flags; a process
 * started without them is left as it is. Returns the flags it set.
 */
export function optimizeFromNowOn(execArgv: readonly string[] = process.execArgv): string[] {
  if (switchedOn) return [];
  switchedOn = true;
  const switched = DEFERRED.filter(([off]) => execArgv.includes(off)).flatMap(([, on]) => on);
  if (switched.length === 0) return switched;
  // V8's code cache is only taken by a process with the same flags: what start-up compiled is written now, under the
  // flags the next start runs with, and what loads later (route groups on their first request) under the new ones.
  try {
    module.flushCompileCache?.();
  } catch {
    // the cache is an optimisation only
  }
  for (const flag of switched) v8.setFlagsFromString(flag);
  return switched;
}

/** A request of the API (Grimmory's, the devices', Komga's), not a health check: work a client is waiting for. */
export function isApiWork(url: string | undefined): boolean {
  const path = url?.split('?', 1)[0] ?? '';
  return /\/(api|komga)\//.test(path) && !path.endsWith('/healthcheck');
}

/**
 * Switches them on with the first request of the API the server receives: a client waits for its answer, and the
 * requests after it are most likely its own (a device's sync session, a reader's pages, the web UI's calls). Health
 * checks (a container's or a monitor's probe, every few seconds) and the web UI's static files do not count: a daemon
 * that answered only those keeps its idle memory.
 */
export function optimizeOnFirstApiRequest(server: Server): void {
  const first = (request: IncomingMessage): void => {
    if (!isApiWork(request.url)) return;
    server.off('request', first);
    optimizeFromNowOn();
  };
  server.on('request', first);
}
