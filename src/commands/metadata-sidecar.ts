// bindery metadata sidecar export|import|status [--library L | --book ID]
import type { Command } from 'commander';
import type { SidecarError } from '../core/sidecar/errors.ts';
import type { LibrarySidecarRun } from '../core/sidecar/library-sidecars.ts';
import type { CommandContext } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import type { RunCommand } from './run.ts';

interface ScopeOptions {
  library?: string;
  book?: string;
}

interface ExportOptions extends ScopeOptions {
  force: boolean;
  cover?: boolean;
}

type Scope = { kind: 'book'; bookId: number } | { kind: 'libraries'; library?: string };

function scopeOf(opts: ScopeOptions): Scope {
  if (opts.library !== undefined && opts.book !== undefined) throw new CliError('INVALID_ARGUMENT', 'give --library or --book, not both', EXIT.USAGE);
  if (opts.book !== undefined) {
    if (!/^\d+$/.test(opts.book.trim())) throw new CliError('INVALID_ARGUMENT', `--book takes a book id, not ${JSON.stringify(opts.book)}`, EXIT.USAGE);
    return { kind: 'book', bookId: Number(opts.book) };
  }
  return opts.library !== undefined ? { kind: 'libraries', library: opts.library } : { kind: 'libraries' };
}

const EXIT_BY_CODE: Record<SidecarError['code'], number> = {
  BOOK_NOT_FOUND: EXIT.NOT_FOUND,
  LIBRARY_NOT_FOUND: EXIT.NOT_FOUND,
  NO_BOOK_FILE: EXIT.NOT_FOUND,
  SIDECAR_NOT_FOUND: EXIT.NOT_FOUND,
  SIDECARS_DISABLED: EXIT.USAGE,
  SIDECAR_INVALID: EXIT.FAILURE,
  IO: EXIT.FAILURE,
};

/** Runs core work, turning a sidecar refusal into the CLI's error with its exit code. */
async function cli<T>(work: () => Promise<T>): Promise<T> {
  const { SidecarError } = await import('../core/sidecar/errors.ts');
  try {
    return await work();
  } catch (error) {
    if (error instanceof SidecarError) {
      const hint = error.code === 'SIDECARS_DISABLED' ? '; turn them on in the settings, or add --force' : '';
      throw new CliError(error.code, error.message + hint, EXIT_BY_CODE[error.code]);
    }
    throw error;
  }
}

/** One line to stderr every few seconds while a library is worked through (not with --json). */
function progress(ctx: CommandContext, verb: string, libraryName: string): (done: number) => void {
  let last = Date.now();
  return (done) => {
    if (ctx.json || Date.now() - last < 3000) return;
    last = Date.now();
    process.stderr.write(`${libraryName}: ${verb} ${done} books so far\n`);
  };
}

function runLines(run: LibrarySidecarRun, action: 'export' | 'import'): string[] {
  const done = action === 'export' ? `${run.done} exported` : `${run.done} imported (${run.changed} changed the catalog)`;
  const lines = [`${run.libraryName}: ${done}, ${run.skipped} skipped, ${run.failed} failed`];
  for (const f of run.failures) lines.push(`  failed book ${f.bookId}: [${f.code}] ${f.message}`);
  if (run.failed > run.failures.length) lines.push(`  ... and ${run.failed - run.failures.length} more`);
  return lines;
}

function runJson(run: LibrarySidecarRun, action: 'export' | 'import'): Record<string, unknown> {
  return {
    libraryId: run.libraryId,
    libraryName: run.libraryName,
    books: run.books,
    [action === 'export' ? 'exported' : 'imported']: run.done,
    ...(action === 'import' ? { changed: run.changed } : {}),
    skipped: run.skipped,
    failed: run.failed,
    failures: run.failures,
  };
}

async function overLibraries(ctx: CommandContext, scope: Extract<Scope, { kind: 'libraries' }>, action: 'export' | 'import', one: (libraryId: number, onProgress: (n: number) => void, name: string) => Promise<LibrarySidecarRun>): Promise<number> {
  const { findLibrary, listLibraries } = await import('../core/libraries/libraries.ts');
  const store = await ctx.store();
  const libraries = scope.library !== undefined ? [await findLibrary(store.db, scope.library)] : await listLibraries(store.db);
  const runs: LibrarySidecarRun[] = [];
  for (const library of libraries) runs.push(await cli(() => one(library.id, progress(ctx, action === 'export' ? 'exported' : 'imported', library.name), library.name)));
  if (ctx.json) ctx.printJson(scope.library !== undefined ? runJson(runs[0] as LibrarySidecarRun, action) : runs.map((r) => runJson(r, action)));
  else for (const r of runs) for (const line of runLines(r, action)) ctx.print(line);
  return runs.some((r) => r.failed > 0) ? EXIT.PARTIAL : EXIT.OK;
}

export function registerSidecarCommands(metadataCommand: Command, run: RunCommand): void {
  const sidecar = metadataCommand.command('sidecar').description('sidecar metadata files (<book>.metadata.json beside each book), as Grimmory reads and writes them');

  sidecar
    .command('export')
    .description("write the catalog's metadata to each book's sidecar file (default: every library)")
    .option('--library <library>', 'only this library (id or name)')
    .option('--book <id>', 'only this book')
    .option('--force', 'write even though sidecar files are turned off in the settings', false)
    .option('--cover', 'also write <book>.cover.jpg (default: the includeCoverFile setting)')
    .option('--no-cover', 'do not write the cover image')
    .action((opts: ExportOptions) =>
      run(async (ctx) => {
        const scope = scopeOf(opts);
        const store = await ctx.store();
        const options = { force: opts.force, ...(opts.cover !== undefined ? { includeCover: opts.cover } : {}) };
        if (scope.kind === 'book') {
          const { exportBookSidecar } = await import('../core/sidecar/book-sidecar.ts');
          const result = await cli(() => exportBookSidecar(store, ctx.paths.covers, scope.bookId, options));
          if (ctx.json) ctx.printJson({ bookId: scope.bookId, ...result });
          else ctx.print(`wrote ${result.sidecarPath}${result.coverPath ? ` and ${result.coverPath}` : ''}`);
          return EXIT.OK;
        }
        const { exportLibrarySidecars } = await import('../core/sidecar/library-sidecars.ts');
        return overLibraries(ctx, scope, 'export', (libraryId, onProgress) => exportLibrarySidecars(store, ctx.paths.covers, libraryId, { ...options, onProgress }));
      }),
    );

  sidecar
    .command('import')
    .description("merge each book's sidecar file into the catalog; locked fields are kept (default: every library)")
    .option('--library <library>', 'only this library (id or name)')
    .option('--book <id>', 'only this book')
    .action((opts: ScopeOptions) =>
      run(async (ctx) => {
        const scope = scopeOf(opts);
        const store = await ctx.store();
        if (scope.kind === 'book') {
          const { importBookSidecar } = await import('../core/sidecar/book-sidecar.ts');
          const result = await cli(() => importBookSidecar(store, ctx.paths.covers, scope.bookId));
          if (ctx.json) ctx.printJson({ bookId: scope.bookId, ...result });
          else {
            ctx.print(result.changed.length > 0 ? `imported ${result.sidecarPath}: changed ${result.changed.join(', ')}` : `imported ${result.sidecarPath}: nothing changed`);
            if (result.locked.length > 0) ctx.print(`  kept (locked): ${result.locked.join(', ')}`);
          }
          return EXIT.OK;
        }
        const { importLibrarySidecars } = await import('../core/sidecar/library-sidecars.ts');
        return overLibraries(ctx, scope, 'import', (libraryId, onProgress) => importLibrarySidecars(store, ctx.paths.covers, libraryId, { onProgress }));
      }),
    );

  sidecar
    .command('status')
    .description("whether a book's sidecar file agrees with the catalog: IN_SYNC, OUTDATED, MISSING, CONFLICT or NOT_APPLICABLE")
    .requiredOption('--book <id>', 'the book')
    .action((opts: ScopeOptions) =>
      run(async (ctx) => {
        const scope = scopeOf(opts);
        if (scope.kind !== 'book') throw new CliError('INVALID_ARGUMENT', '--book is required', EXIT.USAGE);
        const store = await ctx.store();
        const { bookSidecarStatus, locateSidecar } = await import('../core/sidecar/book-sidecar.ts');
        const status = await cli(() => bookSidecarStatus(store.db, scope.bookId));
        const location = await locateSidecar(store.db, scope.bookId);
        if (ctx.json) ctx.printJson({ bookId: scope.bookId, status, ...(location ? { sidecarPath: location.sidecarPath } : {}) });
        else ctx.print(location ? `${status} ${location.sidecarPath}` : status);
        return EXIT.OK;
      }),
    );
}
