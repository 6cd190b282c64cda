// bindery scan [LIBRARY] [--full]
import type { Command } from 'commander';
import { findLibrary, listLibraries, type Library } from '../core/libraries/libraries.ts';
import type { ScanProgress, ScanSummary } from '../core/scan/scanner.ts';
import { EXIT } from './exit-codes.ts';
import type { RunCommand } from './run.ts';

/** Live progress: a spinner on a terminal, a line every few seconds otherwise (cron, systemd, CI logs). */
async function progressReporter(libraryName: string, terminal: boolean, quiet: boolean): Promise<{ update(p: ScanProgress): void; stop(): void }> {
  if (quiet) return { update: () => {}, stop: () => {} };
  if (terminal) {
    const { default: ora } = await import('ora');
    const spinner = ora({ text: `${libraryName}: looking for books`, stream: process.stderr }).start();
    return {
      update: (p) => {
        if (p.phase === 'walking') spinner.text = `${libraryName}: looking for books in ${p.root}`;
        else if (p.phase === 'parsing') spinner.text = `${libraryName}: reading ${p.done}/${p.total} new or changed files`;
      },
      stop: () => spinner.stop(),
    };
  }
  let last = 0;
  return {
    update: (p) => {
      const now = Date.now();
      if (p.phase === 'walking') process.stderr.write(`${libraryName}: scanning ${p.root}\n`);
      else if (p.phase === 'parsing' && (now - last > 2000 || p.done === p.total)) {
        last = now;
        process.stderr.write(`${libraryName}: read ${p.done}/${p.total} files\n`);
      }
    },
    stop: () => {},
  };
}

function summaryLines(s: ScanSummary): string[] {
  const lines = [
    `${s.libraryName}: ${s.added} added, ${s.updated} updated, ${s.moved} moved, ${s.missing} missing, ${s.restored} back, ${s.unchanged} unchanged, ${s.failed.length} failed (${(s.durationMs / 1000).toFixed(1)} s)`,
  ];
  for (const r of s.skippedRoots) lines.push(`  skipped ${r.path}: ${r.reason}`);
  for (const f of s.failed) lines.push(`  failed ${f.path}: [${f.code}] ${f.reason}`);
  for (const w of s.warnings) lines.push(`  warning ${w.path}: ${w.reason}`);
  if (s.thumbnailsPending > 0) {
    lines.push(`  ${s.thumbnailsPending} cover thumbnails still to be made: bindery serve makes them in the background, and any one asked for first at once (--thumbnails makes them before returning)`);
  }
  return lines;
}

export function registerScan(program: Command, run: RunCommand): void {
  program
    .command('scan')
    .description('read new, changed, moved and missing books of one library (or all)')
    .argument('[library]', 'library id or name (default: every library)')
    .option('--full', 're-read every file, even unchanged ones', false)
    .option('--workers <n>', 'parallel file readers (default: from settings)')
    .option('--thumbnails', 'make the cover thumbnails before returning, rather than leave them to bindery serve', false)
    .action((name: string | undefined, opts: { full: boolean; workers?: string; thumbnails: boolean }) =>
      run(async (ctx) => {
        const { scanLibrary } = await import('../core/scan/scanner.ts');
        const store = await ctx.store();
        const libraries: Library[] = name ? [await findLibrary(store.db, name)] : await listLibraries(store.db);
        const workers = opts.workers === undefined ? ctx.config.scanWorkers : Number(opts.workers);
        const summaries: ScanSummary[] = [];
        for (const library of libraries) {
          const progress = await progressReporter(library.name, Boolean(process.stderr.isTTY) && !ctx.json, ctx.json);
          try {
            summaries.push(await scanLibrary(store, library, { coversRoot: ctx.paths.covers, full: opts.full, workers, onProgress: (p) => progress.update(p) }));
          } finally {
            progress.stop();
          }
        }
        if (opts.thumbnails) {
          const { makePendingThumbnails, pendingThumbnailCount } = await import('../core/covers/thumbnail-backlog.ts');
          await makePendingThumbnails(store, ctx.paths.covers, { concurrency: Math.max(1, workers + 1) });
          const pending = await pendingThumbnailCount(store);
          for (const summary of summaries) summary.thumbnailsPending = pending;
        }
        if (ctx.json) ctx.printJson(name ? summaries[0] : summaries);
        else if (summaries.length === 0) ctx.print('no libraries to scan: bindery library add NAME FOLDER');
        else summaries.flatMap(summaryLines).forEach((l) => ctx.print(l));
        const partial = summaries.some((s) => s.failed.length > 0 || s.skippedRoots.length > 0);
        return partial ? EXIT.PARTIAL : EXIT.OK;
      }),
    );
}
