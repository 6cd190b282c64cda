// bindery bookdrop list|import|discard: the bookdrop folder from the command line. Every command first brings the
// queue up to date with the folder (as the daemon's watcher and `POST /api/v1/bookdrop/rescan` do).
import type { Command } from 'commander';
import { relative } from 'node:path';
import type { BookdropFileJson } from '../core/bookdrop/bookdrop-files.ts';
import type { FinalizeOutcome } from '../core/bookdrop/finalize.ts';
import type { BookdropEnv, SyncSummary } from '../core/bookdrop/intake.ts';
import type { Library, LibraryPath } from '../core/libraries/libraries.ts';
import { confirm } from './confirm.ts';
import type { CommandContext } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import type { RunCommand } from './run.ts';

interface DirOption {
  bookdropDir?: string;
}

interface ImportOptions extends DirOption {
  library?: string;
  path?: string;
  yes: boolean;
}

interface DiscardOptions extends DirOption {
  all: boolean;
  yes: boolean;
}

const DIR_FLAG = ['--bookdrop-dir <dir>', 'the bookdrop folder (env BINDERY_BOOKDROP_DIR, default <data dir>/bookdrop)'] as const;

async function prepare(base: CommandContext, opts: DirOption): Promise<{ ctx: CommandContext; env: BookdropEnv; synced: SyncSummary }> {
  const ctx = base.withFlags({ bookdropDir: opts.bookdropDir });
  const { syncBookdrop } = await import('../core/bookdrop/intake.ts');
  const store = await ctx.store();
  const env: BookdropEnv = {
    store,
    bookdropDir: ctx.config.bookdropDir,
    dataDir: ctx.config.dataDir,
    log: (level, message) => {
      if (level !== 'info' && !ctx.json) process.stderr.write(`${message}\n`);
    },
  };
  const synced = await syncBookdrop(env);
  if (!ctx.json && synced.unsettled.length > 0) {
    process.stderr.write(`${synced.unsettled.length} file${synced.unsettled.length === 1 ? ' is' : 's are'} still being written; run again in a moment to include ${synced.unsettled.length === 1 ? 'it' : 'them'}\n`);
  }
  return { ctx, env, synced };
}

function ids(values: string[]): number[] {
  return values.map((v) => {
    if (!/^\d+$/.test(v)) throw new CliError('INVALID_ID', `not a bookdrop file id: ${v}`, EXIT.USAGE);
    return Number(v);
  });
}

function sizeText(bytes: number | null): string {
  if (bytes === null) return '';
  return bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function fileLine(f: BookdropFileJson): string {
  const meta = f.fetchedMetadata ?? f.originalMetadata ?? {};
  const authors = meta.authors?.length ? ` — ${meta.authors.join(', ')}` : '';
  return `${f.id}\t${f.fileName}\t${sizeText(f.fileSize)}\t${meta.title ?? ''}${authors}${f.status === 'PENDING_REVIEW' ? '' : `\t(${f.status}${f.originalLeft ? `: imported, the original could not be removed: ${f.originalLeft}` : ''})`}`;
}

async function pendingFiles(env: BookdropEnv, only?: number[]): Promise<BookdropFileJson[]> {
  const { bookdropFileJson, pendingRows } = await import('../core/bookdrop/bookdrop-files.ts');
  return (await pendingRows(env.store.db, only)).map(bookdropFileJson);
}

/** The library (by id or name; the only one when there is one) and its folder (by id or path; its first by default). */
async function target(ctx: CommandContext, opts: ImportOptions): Promise<{ library: Library; root: LibraryPath }> {
  const { findLibrary, listLibraries } = await import('../core/libraries/libraries.ts');
  const db = (await ctx.store()).db;
  let library: Library;
  if (opts.library !== undefined) library = await findLibrary(db, opts.library);
  else {
    const all = await listLibraries(db);
    if (all.length === 0) throw new CliError('NO_LIBRARY', 'there is no library to import into: bindery library add NAME FOLDER', EXIT.NOT_FOUND);
    if (all.length > 1) throw new CliError('LIBRARY_REQUIRED', `choose the library to import into with --library (${all.map((l) => `"${l.name}"`).join(', ')})`, EXIT.USAGE);
    library = all[0] as Library;
  }
  let root = library.paths[0];
  if (opts.path !== undefined) {
    const { resolve } = await import('node:path');
    const wanted = opts.path;
    root = library.paths.find((p) => String(p.id) === wanted || p.path === resolve(wanted));
    if (!root) throw new CliError('PATH_NOT_FOUND', `library "${library.name}" has no folder ${opts.path} (its folders: ${library.paths.map((p) => `${p.id} ${p.path}`).join(', ')})`, EXIT.NOT_FOUND);
  }
  if (!root) throw new CliError('PATH_NOT_FOUND', `library "${library.name}" has no folder`, EXIT.NOT_FOUND);
  return { library, root };
}

function printOutcome(ctx: CommandContext, outcome: FinalizeOutcome, root: LibraryPath): void {
  for (const r of outcome.results) {
    if (r.success) ctx.print(`imported ${r.fileId} → ${r.path ? relative(root.path, r.path) : r.fileName}${r.warning ? ` (${r.warning})` : ''}`);
    else ctx.print(`failed ${r.fileId} ${r.fileName ?? ''}: ${r.message}`);
  }
  ctx.print(`${outcome.successfullyImported} imported, ${outcome.failed} failed`);
}

export function registerBookdrop(program: Command, run: RunCommand): void {
  const bookdrop = program.command('bookdrop').description('review and import the books dropped into the bookdrop folder');

  bookdrop
    .command('list')
    .description('list the files waiting for review (after taking in new ones)')
    .option('--all', 'also list files already imported but not yet cleared', false)
    .option(...DIR_FLAG)
    .action((opts: DirOption & { all: boolean }) =>
      run(async (base) => {
        const { ctx, env, synced } = await prepare(base, opts);
        const { bookdropFileJson } = await import('../core/bookdrop/bookdrop-files.ts');
        const rows = opts.all ? await env.store.db.selectFrom('bookdrop_file').selectAll().orderBy('id').execute() : undefined;
        const files = rows ? rows.map(bookdropFileJson) : await pendingFiles(env);
        if (ctx.json) {
          ctx.printJson({ bookdropDir: env.bookdropDir, files, added: synced.added.length, stillBeingWritten: synced.unsettled });
          return;
        }
        if (files.length === 0) ctx.print(`nothing waiting for review in ${env.bookdropDir}`);
        for (const f of files) ctx.print(fileLine(f));
      }),
    );

  bookdrop
    .command('import')
    .description('import files into a library (on a terminal: review each first; otherwise needs --yes)')
    .argument('[ids...]', 'only these files (default: every file waiting for review)')
    .option('--library <library>', 'library id or name (needed when there are several)')
    .option('--path <path>', "the library's folder: its id or path (default: its first)")
    .option('--yes', 'import without reviewing (needed when not on a terminal)', false)
    .option(...DIR_FLAG)
    .action((idArgs: string[], opts: ImportOptions) =>
      run(async (base) => {
        const { ctx, env } = await prepare(base, opts);
        const { library, root } = await target(ctx, opts);
        const files = await pendingFiles(env, idArgs.length > 0 ? ids(idArgs) : undefined);
        if (files.length === 0) {
          if (ctx.json) ctx.printJson({ totalFiles: 0, successfullyImported: 0, failed: 0, results: [] });
          else ctx.print('nothing waiting for review');
          return EXIT.OK;
        }
        const { finalizeImport } = await import('../core/bookdrop/finalize.ts');
        let request: Parameters<typeof finalizeImport>[1];
        if (opts.yes) {
          request = { files: files.map((f) => ({ fileId: f.id })), defaultLibraryId: library.id, defaultPathId: root.id };
        } else {
          if (!ctx.interactive) {
            throw new CliError('CONFIRMATION_REQUIRED', `${files.length} file${files.length === 1 ? '' : 's'} would be imported into "${library.name}"; add --yes to import without reviewing (or run on a terminal to review each)`, EXIT.USAGE);
          }
          const [{ runReview }, { movePattern }, { renderPath }] = await Promise.all([import('./bookdrop-review.ts'), import('../core/moves/plan.ts'), import('../core/naming/render.ts')]);
          const pattern = await movePattern(env.store.db, library);
          const review = await runReview(
            files.map((f) => ({ id: f.id, fileName: f.fileName, fileSize: f.fileSize, metadata: f.fetchedMetadata ?? f.originalMetadata ?? {} })),
            {
              libraryName: library.name,
              targetOf: (item) => renderPath(pattern, { ...item.metadata, authors: item.metadata.authors ?? [], fileName: item.fileName }),
            },
          );
          if (review.outcome !== 'import' || review.accepted.length === 0) {
            ctx.print('nothing imported');
            return EXIT.OK;
          }
          // Edited files carry their metadata; the others import with what the bookdrop holds for them.
          request = { files: review.accepted.map((a) => ({ fileId: a.id, ...(a.edited ? { metadata: a.metadata } : {}) })), defaultLibraryId: library.id, defaultPathId: root.id };
        }
        const outcome = await finalizeImport(env, request, {
          workers: 0,
          onProgress: (done, total) => {
            if (!ctx.json && process.stderr.isTTY) process.stderr.write(`\rimporting ${done}/${total}`);
          },
        });
        if (!ctx.json && process.stderr.isTTY) process.stderr.write('\n');
        if (ctx.json) ctx.printJson(outcome);
        else printOutcome(ctx, outcome, root);
        return outcome.failed > 0 ? EXIT.PARTIAL : EXIT.OK;
      }),
    );

  bookdrop
    .command('discard')
    .description('delete files from the bookdrop folder (and from the review queue)')
    .argument('[ids...]', 'the files to delete')
    .option('--all', 'every file in the queue', false)
    .option('--yes', 'delete without asking (needed when not on a terminal)', false)
    .option(...DIR_FLAG)
    .action((idArgs: string[], opts: DiscardOptions) =>
      run(async (base) => {
        if (idArgs.length === 0 && !opts.all) throw new CliError('NOTHING_SELECTED', 'name the files to discard (their ids, from `bindery bookdrop list`) or use --all', EXIT.USAGE);
        const { ctx, env } = await prepare(base, opts);
        const { selectedIds } = await import('../core/bookdrop/bookdrop-files.ts');
        const selection = await selectedIds(env.store.db, opts.all ? { selectAll: true } : { selectedIds: ids(idArgs) });
        const known = await env.store.db.selectFrom('bookdrop_file').select(['id', 'file_path']).where('id', 'in', selection.length > 0 ? selection : [-1]).execute();
        if (known.length === 0) {
          if (ctx.json) ctx.printJson({ rows: 0, deletedFiles: 0, failures: [] });
          else ctx.print('nothing to discard');
          return opts.all ? EXIT.OK : EXIT.NOT_FOUND;
        }
        if (!opts.yes) {
          if (!ctx.interactive) throw new CliError('CONFIRMATION_REQUIRED', `${known.length} file${known.length === 1 ? '' : 's'} would be deleted from ${env.bookdropDir}; add --yes to delete ${known.length === 1 ? 'it' : 'them'}`, EXIT.USAGE);
          for (const k of known) ctx.print(`  ${relative(env.bookdropDir, k.file_path)}`);
          if (!(await confirm(`Delete these ${known.length} file${known.length === 1 ? '' : 's'} from the bookdrop?`))) {
            ctx.print('nothing deleted');
            return EXIT.OK;
          }
        }
        const { discardFiles } = await import('../core/bookdrop/bookdrop-cleanup.ts');
        const summary = await discardFiles(env, known.map((k) => k.id));
        if (ctx.json) ctx.printJson(summary);
        else {
          for (const f of summary.failures) ctx.print(`could not delete ${f.path}: ${f.reason}`);
          ctx.print(`${summary.deletedFiles} file${summary.deletedFiles === 1 ? '' : 's'} deleted`);
        }
        return summary.failures.length > 0 ? EXIT.PARTIAL : EXIT.OK;
      }),
    );
}
