// bindery import grimmory --from mysql://user@host:3306/db | --from-dump FILE
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { describeTable, skippedCount } from '../core/import/import-report.ts';
import { parsePathMapping, type PathMapping } from '../core/import/path-map.ts';
import { ImportError, type GrimmorySource } from '../core/import/grimmory/source.ts';
import type { CommandContext } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { importProgress } from './import-progress.ts';
import type { RunCommand } from './run.ts';

interface GrimmoryFlags {
  from?: string;
  fromDump?: string;
  passwordFile?: string;
  grimmoryData?: string;
  map: string[];
  dryRun?: boolean;
}

/** Refusals from the importer as CLI errors with their exit codes. */
export function importCliError(error: unknown): unknown {
  if (!(error instanceof ImportError)) return error;
  const exit = error.code === 'PATH_NOT_FOUND' ? EXIT.NOT_FOUND : error.code === 'SOURCE_UNREACHABLE' || error.code === 'SOURCE_INVALID' ? EXIT.FAILURE : EXIT.USAGE;
  return new CliError(error.code, error.message, exit);
}

/** The database password: from --password-file, else BINDERY_IMPORT_PASSWORD, else the URL's own, else none. */
function databasePassword(flags: GrimmoryFlags): string | undefined {
  if (flags.passwordFile) {
    try {
      return readFileSync(flags.passwordFile, 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      throw new CliError('INVALID_ARGUMENT', `cannot read password file ${flags.passwordFile}: ${(error as Error).message}`, EXIT.USAGE);
    }
  }
  return process.env.BINDERY_IMPORT_PASSWORD;
}

async function openSource(flags: GrimmoryFlags): Promise<GrimmorySource> {
  if (Boolean(flags.from) === Boolean(flags.fromDump)) throw new CliError('INVALID_ARGUMENT', 'give either --from mysql://user@host:3306/db or --from-dump FILE', EXIT.USAGE);
  if (flags.fromDump) {
    const { openDumpSource } = await import('../core/import/grimmory/dump-source.ts');
    return openDumpSource(flags.fromDump);
  }
  const { openMysqlSource, parseMysqlUrl } = await import('../core/import/grimmory/mysql-source.ts');
  const target = parseMysqlUrl(flags.from as string);
  return openMysqlSource({ ...target, password: databasePassword(flags) ?? target.password });
}

function pathMappings(values: readonly string[]): PathMapping[] {
  try {
    return values.map(parsePathMapping);
  } catch (error) {
    throw new CliError('INVALID_ARGUMENT', (error as Error).message, EXIT.USAGE);
  }
}

async function runGrimmory(ctx: CommandContext, flags: GrimmoryFlags): Promise<number> {
  const pathMap = pathMappings(flags.map);
  const source = await openSource(flags);
  const progress = await importProgress(ctx);
  try {
    const store = await ctx.store();
    const { importGrimmory } = await import('../core/import/grimmory/grimmory-import.ts');
    const result = await importGrimmory({
      source,
      store,
      dataDir: ctx.config.dataDir,
      coversRoot: ctx.paths.covers,
      grimmoryData: flags.grimmoryData,
      pathMap,
      dryRun: flags.dryRun ?? false,
      onProgress: (stage, table, rows) => progress.update(`${stage}: ${table} ${rows} rows`),
    });
    progress.stop();
    const skipped = skippedCount(result.stages);
    if (ctx.json) ctx.printJson(result);
    else {
      ctx.print(`${result.dryRun ? 'Dry run (nothing written): ' : ''}Grimmory ${result.source}, schema version ${result.schemaVersion}`);
      for (const stage of result.stages) {
        ctx.print(`${stage.stage}:`);
        for (const table of stage.tables) ctx.print(`  ${describeTable(table)}`);
      }
      if (result.notImported.length) ctx.print('not imported:');
      for (const n of result.notImported) ctx.print(`  ${n.table} (${n.rows} rows): ${n.reason}`);
      if (result.droppedFields.length) ctx.print('fields with no place in Bindery:');
      for (const d of result.droppedFields) ctx.print(`  ${d.table}: ${d.fields.join(', ')} (${d.reason})`);
      for (const w of result.warnings) ctx.print(`warning: ${w}`);
    }
    return skipped > 0 ? EXIT.PARTIAL : EXIT.OK;
  } finally {
    progress.stop();
    await source.close();
  }
}

export function registerImportGrimmory(parent: Command, run: RunCommand): void {
  parent
    .command('grimmory')
    .description('bring over a Grimmory (or Booklore) server: libraries, books, users, reading data, devices')
    .option('--from <url>', 'the live database, mysql://user@host:3306/db (password from --password-file or BINDERY_IMPORT_PASSWORD)')
    .option('--from-dump <file>', 'a mysqldump file of the database instead')
    .option('--password-file <file>', 'file holding the database password')
    .option('--grimmory-data <dir>', "Grimmory's data folder (/app/data in its container): covers and author photos")
    .option('--map <old=new>', 'a folder as Grimmory saw it and where it is here (repeatable)', (v: string, prev: string[]) => [...prev, v], [])
    .option('--dry-run', 'show what would be imported and what could not, write nothing')
    .action((flags: GrimmoryFlags) =>
      run(async (ctx) => {
        try {
          return await runGrimmory(ctx, flags);
        } catch (error) {
          throw importCliError(error);
        }
      }),
    );
}
