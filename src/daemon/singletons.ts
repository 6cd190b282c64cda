// The daemon's singleton jobs, each run by whichever server process sharing the catalog holds its lease (see
// src/core/cluster/singletons.ts): the task scheduler, the bookdrop watcher, the watcher of library folders, recovery
// of interrupted file moves and bookdrop imports, the clean-up of the live-events outbox, and the Hardcover progress
// push. A process alone on its catalog takes every lease at start and runs them all.
import { currentInstance } from '../core/cluster/instance.ts';
import { DEFAULT_LEASE_CHECK_MS, SingletonKeeper, type Singleton, type StopSingleton } from '../core/cluster/singletons.ts';
import type { LeaseHolding } from '../core/store/leases.ts';
import type { DaemonContext } from './context.ts';

export const SINGLETONS = ['bookdrop-watcher', 'hardcover-push', 'library-watcher', 'move-recovery', 'outbox-prune', 'scheduler', 'thumbnail-backlog'] as const;

const OUTBOX_PRUNE_MS = 60_000;

async function startScheduler(ctx: DaemonContext): Promise<StopSingleton> {
  const { startScheduler } = await import('./scheduler.ts');
  const scheduler = await startScheduler(ctx);
  ctx.log.info({ tasks: scheduler.scheduled() }, 'scheduled tasks');
  return () => scheduler.stop();
}

/** A bookdrop folder that cannot be watched is logged and the daemon runs on without it. */
async function startBookdrop(ctx: DaemonContext): Promise<StopSingleton> {
  try {
    const [{ startBookdropWatcher, daemonBookdropEnv }, { daemonBookdropFetcher }] = await Promise.all([import('./bookdrop-watcher.ts'), import('./bookdrop-fetcher.ts')]);
    const watcher = await startBookdropWatcher(daemonBookdropEnv(ctx, daemonBookdropFetcher(ctx)), { polling: 'auto' });
    ctx.log.info({ bookdropDir: ctx.config.bookdropDir, polling: watcher.polling }, 'watching the bookdrop folder');
    return () => watcher.close();
  } catch (error) {
    ctx.log.warn({ err: error, bookdropDir: ctx.config.bookdropDir }, 'the bookdrop folder cannot be watched; files dropped there are picked up by a rescan');
    return () => undefined;
  }
}

/** Folders of libraries with `watch` on are rescanned where they changed, through the daemon's one set of scan jobs. */
async function watchLibraries(ctx: DaemonContext): Promise<StopSingleton> {
  const [{ startLibraryWatcher }, { scanJobs }] = await Promise.all([import('./library-watcher.ts'), import('./scan-jobs.ts')]);
  const jobs = scanJobs(ctx);
  const watcher = await startLibraryWatcher(
    {
      store: ctx.store,
      log: (level, message, detail) => ctx.log[level](detail ?? {}, message),
      rescan: (libraryId, folders) => void jobs.request(libraryId, folders),
    },
    { polling: 'auto', delayMs: ctx.config.libraryWatchDelayMs, pollIntervalMs: ctx.config.libraryWatchPollMs },
  );
  return () => watcher.close();
}

const leaseCheckMs = (): number => Number(process.env.BINDERY_LEASE_CHECK_MS) || DEFAULT_LEASE_CHECK_MS;

/**
 * Moves and bookdrop imports a killed process left half done are completed or rolled back when the lease is taken (at
 * start, or on takeover), and whenever a look (as often as the leases are looked at) finds such work whose process has
 * gone since: another replica killed in the middle of a move or an import, or a `bindery` command on another machine.
 */
async function recoverInterruptedWork(ctx: DaemonContext): Promise<StopSingleton> {
  const [{ recoverMoves }, { hasOpenRows }, { hasClaimedImports, recoverAbandonedClaims }, { daemonBookdropEnv }] = await Promise.all([
    import('../core/moves/recover.ts'),
    import('../core/moves/journal.ts'),
    import('../core/bookdrop/bookdrop-cleanup.ts'),
    import('./bookdrop-watcher.ts'),
  ]);
  const bookdrop = daemonBookdropEnv(ctx);
  const recover = async (): Promise<void> => {
    const report = await recoverMoves(ctx.store, { log: (message) => ctx.log.warn(message) });
    if (report.resumed + report.rolledBack + report.problems.length > 0) ctx.log.warn({ ...report }, 'recovered interrupted file moves');
  };
  await recover();
  await recoverAbandonedClaims(bookdrop);
  let looking: Promise<void> | undefined;
  const timer = setInterval(() => {
    looking ??= (async () => {
      if (await hasOpenRows(ctx.store.db)) await recover();
      if (await hasClaimedImports(ctx.store)) await recoverAbandonedClaims(bookdrop);
    })()
      .catch((error: unknown) => ctx.log.warn({ err: error }, 'recovery of interrupted work: look skipped'))
      .finally(() => (looking = undefined));
  }, leaseCheckMs());
  timer.unref();
  return async () => {
    clearInterval(timer);
    await looking;
  };
}

async function pruneOutbox(ctx: DaemonContext): Promise<StopSingleton> {
  const { pruneExpiredEvents } = await import('../core/events/outbox.ts');
  const prune = (): void => void pruneExpiredEvents(ctx.store.db).catch((error: unknown) => ctx.log.debug({ err: error }, 'live updates: outbox clean-up skipped'));
  prune();
  const timer = setInterval(prune, OUTBOX_PRUNE_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** Sends the progress changes any process queued for Hardcover, including those a previous holder left. */
async function pushToHardcover(ctx: DaemonContext): Promise<StopSingleton> {
  const { startHardcoverPush } = await import('./hardcover-sync.ts');
  return startHardcoverPush(ctx);
}

const THUMBNAIL_LOOK_MS = 2_000;

/**
 * Makes the thumbnails scans left (see src/core/covers/thumbnail-backlog.ts): at start, and whenever the catalog has
 * changed since the last look (a scan by this process, a replica or a `bindery scan`), newest books first. A request
 * for a thumbnail not made yet makes it at once, whichever process serves it.
 */
async function makeThumbnails(ctx: DaemonContext): Promise<StopSingleton> {
  const [{ makePendingThumbnails }, { watchCatalogChanges }] = await Promise.all([import('../core/covers/thumbnail-backlog.ts'), import('./catalog-change-watch.ts')]);
  const watch = watchCatalogChanges(
    ctx.store,
    THUMBNAIL_LOOK_MS,
    async (stop) => {
      const started = performance.now();
      const made = await makePendingThumbnails(ctx.store, ctx.paths.covers, {
        stopped: () => stop.aborted,
        onError: (error, bookId, kind) => ctx.log.warn({ err: error, bookId, kind }, 'thumbnail not made; tried again after the next change'),
      });
      if (made > 0) ctx.log.info({ made, ms: Math.round(performance.now() - started) }, 'made the thumbnails a scan left');
    },
    (error) => ctx.log.warn({ err: error }, 'thumbnails: look skipped'),
  );
  return () => watch.stop();
}

const STARTS: Record<(typeof SINGLETONS)[number], (ctx: DaemonContext) => Promise<StopSingleton>> = {
  'bookdrop-watcher': startBookdrop,
  'hardcover-push': pushToHardcover,
  'library-watcher': watchLibraries,
  'move-recovery': recoverInterruptedWork,
  'outbox-prune': pruneOutbox,
  scheduler: startScheduler,
  'thumbnail-backlog': makeThumbnails,
};

const keepers = new WeakMap<DaemonContext, SingletonKeeper>();

/** Starts looking after the leases (the first look awaited) and stops the jobs and hands the leases over on close. */
export async function startSingletons(ctx: DaemonContext): Promise<SingletonKeeper> {
  const singletons: Singleton[] = SINGLETONS.map((name) => ({ name, start: () => STARTS[name](ctx) }));
  const keeper = new SingletonKeeper(ctx.store.leases(currentInstance()), singletons, { everyMs: leaseCheckMs(), log: ctx.log });
  keepers.set(ctx, keeper);
  await keeper.start();
  return keeper;
}

export function singletonsOf(ctx: DaemonContext): SingletonKeeper | undefined {
  return keepers.get(ctx);
}

export interface ClusterStatus {
  /** This process. */
  instance: string;
  /** The singletons this process runs. */
  running: string[];
  /** Every lease: who holds it, since when, whether the holder runs. */
  leases: Pick<LeaseHolding, 'lease' | 'holder' | 'acquiredAt' | 'alive'>[];
}

/** For the health and task routes: which process runs which singleton. */
export async function clusterStatus(ctx: DaemonContext): Promise<ClusterStatus> {
  const keeper = keepers.get(ctx);
  const instance = keeper?.instance ?? currentInstance().name;
  if (!keeper) return { instance, running: [], leases: [] };
  const holdings = await keeper.holdings();
  return { instance, running: keeper.running(), leases: holdings.map(({ lease, holder, acquiredAt, alive }) => ({ lease, holder, acquiredAt, alive })) };
}
