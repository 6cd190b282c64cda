// bindery restore ARCHIVE [--yes]
import type { Command } from 'commander';
import { backupCli, configFileOf } from './backup.ts';
import { CliError, EXIT } from './exit-codes.ts';
import type { RunCommand } from './run.ts';
import { megabytes, statusLine } from './status-line.ts';

export function registerRestore(program: Command, run: RunCommand): void {
  program
    .command('restore')
    .description('replace the catalog, covers, icons, fonts and settings with a backup (book files are never touched)')
    .argument('<archive>', 'the archive file')
    .option('--yes', 'do not ask for confirmation', false)
    .action((archive: string, flags: { yes: boolean }) =>
      run(async (ctx) => {
        const { restoreBackup, refuseWhileDaemonRuns } = await import('../core/backup/restore-backup.ts');
        // Before asking: a restore that cannot run should not ask for confirmation first.
        await backupCli(() => refuseWhileDaemonRuns(ctx.config.dataDir, ctx.paths.catalog));
        if (!flags.yes) {
          if (!ctx.interactive) throw new CliError('CONFIRMATION_REQUIRED', 'restore replaces the catalog, covers, icons and fonts of this data directory; add --yes to confirm', EXIT.USAGE);
          const { confirm } = await import('./confirm.ts');
          const yes = await confirm(`Replace the catalog, covers, icons and fonts in ${ctx.config.dataDir} with ${archive}? (the current ones are kept aside)`);
          if (!yes) throw new CliError('CANCELLED', 'nothing was changed', EXIT.USAGE);
        }
        const status = await statusLine(ctx, `reading ${archive}`);
        const result = await backupCli(() =>
          restoreBackup({
            dataDir: ctx.config.dataDir,
            catalogPath: ctx.paths.catalog,
            archive,
            configFile: configFileOf(program),
            onProgress: (members, bytes) => status.update(`restoring: ${members} files checked, ${megabytes(bytes)}`),
            onCatalogProgress: (rows, total) => status.update(`restoring the catalog: ${rows} of ${total} rows`),
          }),
        ).finally(() => status.stop());
        if (ctx.json) {
          ctx.printJson(result);
          return;
        }
        const files = Object.entries(result.files).map(([name, n]) => `${n} ${name}`).join(', ');
        ctx.print(`restored the backup of ${result.createdAt}: catalog with ${result.tables.book ?? 0} books, ${files} files`);
        if (result.previousDir) ctx.print(`the previous catalog and folders are in ${result.previousDir} (delete it once you are satisfied)`);
        if (result.config && 'keptAt' in result.config) ctx.print(`the backup's config file differs from ${result.config.current || 'yours'}; it is at ${result.config.keptAt}`);
        else if (result.config) ctx.print(`config file: ${result.config.restoredTo}`);
      }),
    );
}
