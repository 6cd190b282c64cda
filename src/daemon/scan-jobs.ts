// The daemon's library scans: one job set per store, tracked in the daemon's background set and logged.
import { libraryScanJobs, type LibraryScanJobs } from '../core/libraries/library-scan-jobs.ts';
import type { DaemonContext } from './context.ts';

/** The daemon's background scans; each scan's promise is kept in `ctx.background` until it ends. */
export function scanJobs(ctx: DaemonContext): LibraryScanJobs {
  return libraryScanJobs(ctx.store, {
    coversRoot: ctx.paths.covers,
    workers: ctx.config.scanWorkers,
    track: (job) => {
      ctx.background.add(job);
      const forget = (): boolean => ctx.background.delete(job);
      job.then(forget, forget);
    },
    onFinished: (s, folders) =>
      ctx.log.info({ library: s.libraryId, ...(folders ? { folders: folders.length } : {}), added: s.added, updated: s.updated, moved: s.moved, missing: s.missing, failed: s.failed.length, ms: s.durationMs }, 'library scan finished'),
    onFailed: (libraryId, error) => ctx.log.error({ library: libraryId, err: error }, 'library scan failed'),
  });
}
