// bindery backup [--to DIR|FILE]   and   bindery backup verify ARCHIVE
import type { Command } from 'commander';
import { configFilePath } from '../core/config.ts';
import type { BackupError } from '../core/backup/backup-format.ts';
import { withCliErrors } from './coded-cli-error.ts';
import { EXIT } from './exit-codes.ts';
import type { RunCommand } from './run.ts';
import { megabytes, statusLine } from './status-line.ts';

const EXIT_BY_CODE: Record<BackupError['code'], number> = {
  NOT_FOUND: EXIT.NOT_FOUND,
  DAMAGED: EXIT.DAMAGED,
  UNSUPPORTED: EXIT.DAMAGED,
  CATALOG_INVALID: EXIT.DAMAGED,
  DAEMON_RUNNING: EXIT.CONFLICT,
  INVALID_TARGET: EXIT.USAGE,
  CANCELLED: EXIT.FAILURE,
};

/** Runs backup work, turning its refusals into the CLI's errors (code `BACKUP_<CODE>`) with their exit codes. */
export async function backupCli<T>(work: () => Promise<T>): Promise<T> {
  const { BackupError } = await import('../core/backup/backup-format.ts');
  return withCliErrors(BackupError, 'BACKUP_', EXIT_BY_CODE, work);
}

/** The config file this command reads, if any (carried in a backup, put back by a restore). */
export function configFileOf(program: Command): string | undefined {
  return configFilePath(program.opts<{ config?: string }>().config);
}

export function registerBackup(program: Command, run: RunCommand): void {
  const backup = program
    .command('backup')
    .description('write one archive with the catalog, covers, icons, fonts and settings')
    .option('--to <dir|file>', 'a folder (the archive gets a dated name) or a file name (default: the backupDir setting)')
    .action((flags: { to?: string }) =>
      run(async (ctx) => {
        const { createBackup } = await import('../core/backup/create-backup.ts');
        const status = await statusLine(ctx, 'copying the catalog');
        const result = await backupCli(() =>
          createBackup({
            dataDir: ctx.config.dataDir,
            catalogPath: ctx.paths.catalog,
            target: flags.to ?? `${ctx.config.backupDir}/`,
            configFile: configFileOf(program),
            onProgress: (p) => {
              if (p.phase === 'catalog') status.update(`copying the catalog: ${Math.round((p.done / Math.max(p.total ?? 1, 1)) * 100)}%`);
              else status.update(`archiving files: ${p.done} written, ${megabytes(p.bytes)}`);
            },
          }),
        ).finally(() => status.stop());
        if (ctx.json) {
          ctx.printJson(result);
          return;
        }
        const books = result.tables.book ?? 0;
        const files = Object.entries(result.sections).map(([name, s]) => `${s.files} ${name}`).join(', ');
        ctx.print(`wrote ${result.path} (${megabytes(result.bytes)}): catalog with ${books} books, ${files} files (${(result.durationMs / 1000).toFixed(1)} s)`);
      }),
    );

  backup
    .command('verify')
    .description('check every checksum and the format version of a backup archive')
    .argument('<archive>', 'the archive file')
    .action((archive: string) =>
      run(async (ctx) => {
        const { readBackup } = await import('../core/backup/read-backup.ts');
        const status = await statusLine(ctx, `checking ${archive}`);
        let seen = 0;
        const verified = await backupCli(() =>
          readBackup(archive, async () => {
            seen++;
            if (seen % 200 === 0) status.update(`checking ${archive}: ${seen} members`);
          }),
        ).finally(() => status.stop());
        const m = verified.manifest;
        if (ctx.json) {
          ctx.printJson({ archive, ok: true, formatVersion: m.formatVersion, createdAt: m.createdAt, binderyVersion: m.binderyVersion, members: verified.members, bytes: verified.bytes, schema: m.catalog.schema, tables: m.catalog.tables });
          return;
        }
        ctx.print(`${archive}: OK — format ${m.formatVersion}, made ${m.createdAt} by Bindery ${m.binderyVersion}, ${verified.members} members (${megabytes(verified.bytes)}), ${m.catalog.tables.book ?? 0} books`);
      }),
    );
}
