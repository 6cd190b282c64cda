// The daemon's Hardcover progress sync: one background queue per daemon, reached from every place progress changes
// (web and app readers, KOReader, Kobo) by one call that returns at once and never throws.
import { metadataProviderBaseUrls } from '../core/config.ts';
import { createProgressSync, type ProgressChange, type ProgressSync } from '../core/hardcover/progress-sync.ts';
import { hardcoverProvider } from '../core/metadata/providers/hardcover.ts';
import type { DaemonContext } from './context.ts';

const syncs = new WeakMap<DaemonContext, ProgressSync>();

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

export function hardcoverSyncOf(ctx: DaemonContext): ProgressSync {
  let sync = syncs.get(ctx);
  if (!sync) {
    sync = createProgressSync({
      db: ctx.store.db,
      http: ctx.http,
      endpoint: hardcoverGraphqlUrl(ctx),
      log: ctx.log,
      track: (job) => {
        ctx.background.add(job);
        const forget = (): boolean => ctx.background.delete(job);
        job.then(forget, forget);
      },
    });
    syncs.set(ctx, sync);
  }
  return sync;
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
