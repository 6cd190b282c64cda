// bindery export (--user NAME | --all) [--to DIR|FILE]
import type { Command } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ExportError } from '../core/export/export-format.ts';
import { withCliErrors } from './coded-cli-error.ts';
import { CliError, EXIT } from './exit-codes.ts';
import type { RunCommand } from './run.ts';
import { megabytes, statusLine } from './status-line.ts';

const EXIT_BY_CODE: Record<ExportError['code'], number> = {
  USER_NOT_FOUND: EXIT.NOT_FOUND,
  NOT_FOUND: EXIT.NOT_FOUND,
  DAMAGED: EXIT.DAMAGED,
  UNSUPPORTED: EXIT.DAMAGED,
  INVALID: EXIT.USAGE,
};

/** Runs export work, turning its refusals into the CLI's errors (code `EXPORT_<CODE>`) with their exit codes. */
export async function exportCli<T>(work: () => Promise<T>): Promise<T> {
  const { ExportError } = await import('../core/export/export-format.ts');
  return withCliErrors(ExportError, 'EXPORT_', EXIT_BY_CODE, work);
}

/** `bindery-export-<who>-20261127-101500.tar.gz` in a folder; a file name is taken as given. */
function exportPath(to: string | undefined, who: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const name = `bindery-export-${who.replace(/[^A-Za-z0-9._-]/g, '_')}-${stamp}.tar.gz`;
  if (to === undefined) return resolve(name);
  const absolute = resolve(to);
  return to.endsWith('/') || (existsSync(absolute) && statSync(absolute).isDirectory()) ? join(absolute, name) : absolute;
}

export function registerExport(program: Command, run: RunCommand): void {
  program
    .command('export')
    .description("write one user's books, shelves, progress, bookmarks, annotations, notes, sessions and ratings (or everyone's) to an archive")
    .option('--user <name>', "export this user's own data")
    .option('--all', "export every user's data", false)
    .option('--to <dir|file>', 'a folder (the archive gets a dated name) or a file name (default: the current folder)')
    .action((flags: { user?: string; all: boolean; to?: string }) =>
      run(async (ctx) => {
        if ((flags.user === undefined) === !flags.all) throw new CliError('INVALID_ARGUMENT', 'name one user with --user NAME, or export everyone with --all', EXIT.USAGE);
        const { createExport } = await import('../core/export/write-export.ts');
        const status = await statusLine(ctx, 'exporting');
        const result = await exportCli(() =>
          createExport({
            catalogPath: ctx.paths.catalog,
            users: flags.all ? 'all' : [flags.user as string],
            target: exportPath(flags.to, flags.all ? 'all' : (flags.user as string), new Date()),
            workDir: ctx.paths.tmp,
          }),
        ).finally(() => status.stop());
        if (ctx.json) {
          ctx.printJson(result);
          return;
        }
        const c = result.counts;
        ctx.print(
          `wrote ${result.path} (${megabytes(result.bytes)}): ${result.users.length} users, ${c.books} books, ${c.shelves} shelves, ${c.progress} progress, ${c.bookmarks} bookmarks, ${c.annotations} annotations, ${c.notes} notes, ${c.sessions} sessions, ${c.ratings} ratings, ${result.markdownFiles} Markdown pages`,
        );
      }),
    );
}
