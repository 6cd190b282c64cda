// The daemon's side of metadata matching: provider runtimes built from the settings and the config, the one task
// runner of the daemon (metadata refreshes and library rescans in its background set), and provider errors as HTTP.
// The scheduler makes the runner at start; what the tasks run (providers, scans, refreshes) loads when one runs.
import { metadataProviderBaseUrls } from '../core/config.ts';
import type { ProviderRuntime } from '../core/metadata/provider-context.ts';
import { ProviderError } from '../core/metadata/provider.ts';
import type { RefreshRequest } from '../core/metadata/refresh-run.ts';
import { TaskRunner } from '../core/tasks/task-runner.ts';
import type { DaemonContext } from './context.ts';
import { ApiError } from './http-errors.ts';

export async function providerRuntimeFor(ctx: DaemonContext): Promise<ProviderRuntime> {
  const { loadProviderRuntime } = await import('../core/metadata/book-match.ts');
  return loadProviderRuntime(ctx.store.db, ctx.http, { baseUrls: metadataProviderBaseUrls(ctx.config) });
}

/** A provider failure as an HTTP answer the caller can act on. */
export function providerHttpError(error: unknown): never {
  if (!(error instanceof ProviderError)) throw error;
  switch (error.code) {
    case 'UNKNOWN_PROVIDER':
      throw new ApiError(400, 'Metadata source not implement or does not exist');
    case 'DISABLED':
    case 'NOT_CONFIGURED':
      throw new ApiError(400, error.message);
    case 'NOT_FOUND':
      throw new ApiError(404, error.message);
    case 'TIMEOUT':
      throw new ApiError(504, error.message);
    case 'RATE_LIMITED':
      throw new ApiError(503, error.message);
    default:
      throw new ApiError(502, error.message);
  }
}

/** LibraryRescanOptions: re-read every file (updateMetadataFromFiles) or only new and changed ones. */
async function rescanLibraries(ctx: DaemonContext, options: unknown, isCancelled: () => boolean): Promise<string> {
  const full = typeof options === 'object' && options !== null && (options as { updateMetadataFromFiles?: unknown }).updateMetadataFromFiles === true;
  const [{ scanJobs }, { listLibraries }, { scanLibrary }] = await Promise.all([import('./scan-jobs.ts'), import('../core/libraries/libraries.ts'), import('../core/scan/scanner.ts')]);
  const jobs = scanJobs(ctx);
  const libraries = await listLibraries(ctx.store.db);
  let scanned = 0;
  for (const library of libraries) {
    if (isCancelled()) break;
    // A scan the library already has running finishes first; two scans of one library never overlap.
    while (jobs.isScanning(library.id)) await jobs.idle();
    await scanLibrary(ctx.store, library, { coversRoot: ctx.paths.covers, workers: ctx.config.scanWorkers, full });
    scanned++;
  }
  return `Rescanned ${scanned} of ${libraries.length} libraries`;
}

const runners = new WeakMap<DaemonContext, TaskRunner>();

/** The runner if one was made (shutdown asks it to stop without making one). */
export function existingTaskRunner(ctx: DaemonContext): TaskRunner | undefined {
  return runners.get(ctx);
}

export function taskRunnerFor(ctx: DaemonContext): TaskRunner {
  let runner = runners.get(ctx);
  if (runner) return runner;
  runner = new TaskRunner(
    ctx.store.db,
    {
      REFRESH_METADATA_MANUAL: {
        prepare: async (options) => {
          const { booksOfRequest } = await import('../core/metadata/refresh-run.ts');
          await booksOfRequest(ctx.store.db, options as RefreshRequest);
        },
        run: async (task) => {
          const { runMetadataRefresh } = await import('../core/metadata/refresh-run.ts');
          const summary = await runMetadataRefresh(
            {
              db: ctx.store.db,
              http: ctx.http,
              coversRoot: ctx.paths.covers,
              runtime: await providerRuntimeFor(ctx),
              userId: task.userId,
              isCancelled: task.isCancelled,
              onBook: (_outcome, index, total) => void task.progress(((index + 1) / Math.max(total, 1)) * 100, `Processed ${index + 1} of ${total} books`),
            },
            task.options as RefreshRequest,
            task.taskId,
          );
          const c = summary.counts;
          return `Metadata refresh: ${c.updated} updated, ${c.proposed} for review, ${c.unchanged} unchanged, ${c['no-match']} not found, ${c.locked} locked, ${c.failed} failed`;
        },
      },
      REFRESH_LIBRARY_METADATA: { run: (task) => rescanLibraries(ctx, task.options, task.isCancelled) },
      SYNC_LIBRARY_FILES: { run: (task) => rescanLibraries(ctx, {}, task.isCancelled) },
      BOOKDROP_PERIODIC_SCANNING: {
        run: async () => {
          const [{ syncBookdrop }, { daemonBookdropEnv }, { daemonBookdropFetcher }] = await Promise.all([import('../core/bookdrop/intake.ts'), import('./bookdrop-watcher.ts'), import('./bookdrop-fetcher.ts')]);
          const summary = await syncBookdrop(daemonBookdropEnv(ctx, daemonBookdropFetcher(ctx)));
          return `Bookdrop: ${summary.added.length} new, ${summary.removed} gone, ${summary.unsettled.length} still being written`;
        },
      },
      BACKUP: {
        run: async (task) => {
          const { runScheduledBackup } = await import('../core/backup/scheduled-backup.ts');
          return runScheduledBackup({ config: ctx.config, catalogPath: ctx.paths.catalog, isCancelled: task.isCancelled, progress: (percentage, message) => void task.progress(percentage, message) });
        },
      },
      CLEANUP_TEMP_METADATA: {
        run: async () => {
          const { forgetFinishedFetchJobs } = await import('../core/metadata/fetch-task-cleanup.ts');
          return `Forgot ${await forgetFinishedFetchJobs(ctx.store.db)} finished metadata fetch jobs`;
        },
      },
    },
    (job) => {
      ctx.background.add(job);
      const forget = (): boolean => ctx.background.delete(job);
      job.then(forget, forget);
    },
  );
  runners.set(ctx, runner);
  return runner;
}
