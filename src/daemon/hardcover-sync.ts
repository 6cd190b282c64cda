// The daemon's Hardcover progress sync. Every place progress changes (web and app readers, KOReader, Kobo) records the
// change in the catalog's push queue by one call that returns at once and never throws; the hardcover-push singleton
// (src/daemon/singletons.ts) sends the queue in whichever server process holds its lease.
import type { StopSingleton } from '../core/cluster/singletons.ts';
import { metadataProviderBaseUrls } from '../core/config.ts';
import { startProgressPusher, type ProgressPusher } from '../core/hardcover/progress-pusher.ts';
import { createProgressSync, type ProgressChange, type ProgressSync } from '../core/hardcover/progress-sync.ts';
import { hardcoverProvider } from '../core/metadata/providers/hardcover.ts';
import type { DaemonContext } from './context.ts';

const syncs = new WeakMap<DaemonContext, ProgressSync>();
const pushers = new WeakMap<DaemonContext, ProgressPusher>();

/** Hardcover's GraphQL URL: the metadata provider's base URL (overridable with `metadataProviderBaseUrls.Hardcover`). */
export function hardcoverGraphqlUrl(ctx: Pick<DaemonContext, 'config'>): string {
  let base = hardcoverProvider.defaultBaseUrl({});
  try {
    base = metadataProviderBaseUrls(ctx.config).Hardcover ?? base;
  } catch {
    // A malformed override was refused when the config was loaded; the public URL stands.
  }
  return `${base.replace(/\/+$/, '')}/graphql`;
}

/** Background work the daemon waits for on shutdown (and the tests, to see what was sent). */
function trackerOf(ctx: DaemonContext): (job: Promise<void>) => void {
  return (job) => {
    ctx.background.add(job);
    const forget = (): boolean => ctx.background.delete(job);
    job.then(forget, forget);
  };
}

function hardcoverSyncOf(ctx: DaemonContext): ProgressSync {
  let sync = syncs.get(ctx);
  if (!sync) {
    sync = createProgressSync({ db: ctx.store.db, log: ctx.log, track: trackerOf(ctx), recorded: () => pushers.get(ctx)?.wake() });
    syncs.set(ctx, sync);
  }
  return sync;
}

/** The hardcover-push singleton: sends the queued changes while this process holds the lease. */
export function startHardcoverPush(ctx: DaemonContext): StopSingleton {
  const pusher = startProgressPusher({
    db: ctx.store.db,
    http: ctx.http,
    endpoint: hardcoverGraphqlUrl(ctx),
    log: ctx.log,
    generation: () => ctx.store.generation(),
    track: trackerOf(ctx),
  });
  pushers.set(ctx, pusher);
  return async () => {
    if (pushers.get(ctx) === pusher) pushers.delete(ctx);
    await pusher.stop();
  };
}

/** Hands a progress change (percent 0..100) to the Hardcover sync; nothing happens for users without sync. */
export function syncToHardcover(ctx: DaemonContext, userId: number, bookId: ProgressChange['bookId'], percent: number | null | undefined): void {
  if (percent === null || percent === undefined) return;
  try {
    hardcoverSyncOf(ctx).progressChanged({ userId, bookId, percent });
  } catch (error) {
    ctx.log.warn({ err: error, userId }, 'hardcover: progress sync not queued');
  }
}
