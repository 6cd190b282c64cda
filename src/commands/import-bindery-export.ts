// bindery import bindery-export ARCHIVE [--as USER] [--dry-run]
import type { Command } from 'commander';
import { exportCli } from './export.ts';
import { EXIT } from './exit-codes.ts';
import type { RunCommand } from './run.ts';
import { statusLine } from './status-line.ts';

export function registerImportBinderyExport(parent: Command, run: RunCommand): void {
  parent
    .command('bindery-export')
    .description('read an archive made by `bindery export` into this catalog (books matched by file hash, path, then ISBN)')
    .argument('<archive>', 'the export archive')
    .option('--as <user>', 'import a one-user export into this user')
    .option('--dry-run', 'report what would be imported, change nothing', false)
    .action((archive: string, flags: { as?: string; dryRun: boolean }) =>
      run(async (ctx) => {
        const { importExport } = await import('../core/export/import-export.ts');
        const store = await ctx.store();
        const status = await statusLine(ctx, `importing ${archive}`);
        const result = await exportCli(() => importExport({ store, archive, asUser: flags.as, dryRun: flags.dryRun })).finally(() => status.stop());
        const incomplete = result.users.missing.length > 0 || result.books.unmatched.length > 0;
        if (ctx.json) {
          ctx.printJson(result);
          return incomplete ? EXIT.PARTIAL : EXIT.OK;
        }
        ctx.print(`${result.dryRun ? 'would import' : 'imported'}: ${result.users.matched.length} users, ${result.books.matched} books matched`);
        for (const [kind, c] of Object.entries(result.counts)) ctx.print(`  ${kind}: ${c.added} added, ${c.updated} updated, ${c.unchanged} unchanged, ${c.skipped} skipped`);
        for (const name of result.users.missing) ctx.print(`  no user named ${name} here: their data was skipped`);
        for (const book of result.books.unmatched.slice(0, 50)) ctx.print(`  book ${book.ref} (${book.title ?? 'untitled'}) not found: ${book.reason}`);
        if (result.books.unmatched.length > 50) ctx.print(`  ... and ${result.books.unmatched.length - 50} more books not found`);
        return incomplete ? EXIT.PARTIAL : EXIT.OK;
      }),
    );
}
