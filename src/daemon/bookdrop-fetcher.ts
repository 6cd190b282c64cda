// Provider metadata for files dropped into the bookdrop (when METADATA_DOWNLOAD_ON_BOOKDROP is on): the quick-match
// refresh options (QUICK_BOOK_MATCH) choose the providers and which one wins each field, as a metadata refresh of a
// book in no library would. Like Grimmory's, the result holds what the providers say, not the file's own values.
import type { BookdropMetadataFetcher } from '../core/bookdrop/intake.ts';
import { dropMetadata } from '../core/bookdrop/bookdrop-metadata.ts';
import type { DaemonContext } from './context.ts';

export function daemonBookdropFetcher(ctx: Pick<DaemonContext, 'store' | 'http' | 'config' | 'log'>): BookdropMetadataFetcher {
  return async (extracted) => {
    // Loaded on the first lookup: a daemon whose bookdrop stays empty never loads the providers.
    const [{ providerRuntimeFor }, match, merge, search] = await Promise.all([
      import('./metadata-runtime.ts'),
      import('../core/metadata/book-match.ts'),
      import('../core/metadata/merge.ts'),
      import('../core/metadata/search.ts'),
    ]);
    const runtime = await providerRuntimeFor(ctx as DaemonContext);
    const options = await match.storedRefreshOptions(ctx.store.db, null);
    const query = match.queryFor({ values: extracted as Record<string, unknown> });
    if (!query.isbn && !query.title) return null;
    const asked = merge.providersToQuery(options, match.usableProviders(runtime));
    if (asked.length === 0) return null;
    const chosen = new Map<(typeof asked)[number], NonNullable<ReturnType<typeof search.bestCandidate>>>();
    for (const outcome of await search.searchProviders(asked, query, runtime)) {
      if (outcome.error) ctx.log.warn({ provider: outcome.provider, reason: outcome.error.message }, 'bookdrop: metadata provider failed');
      const best = search.bestCandidate(outcome, query);
      if (best) chosen.set(outcome.provider, best);
    }
    if (chosen.size === 0) return null;
    const fetched = dropMetadata(merge.fetchedMetadata(chosen, options).metadata);
    return Object.keys(fetched).length > 0 ? fetched : null;
  };
}
