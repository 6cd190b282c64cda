// bindery import calibre LIBRARY_DIR [--map-column '#read=readStatus' …] [--list-columns]
import type { Command } from 'commander';
import { describeTable } from '../core/import/import-report.ts';
import { parseColumnMapping } from '../core/import/calibre/column-map.ts';
import { findUserByName } from '../core/users/users.ts';
import type { CommandContext } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { importCliError } from './import-grimmory.ts';
import { importProgress } from './import-progress.ts';
import type { RunCommand } from './run.ts';

interface CalibreFlags {
  mapColumn: string[];
  listColumns?: boolean;
  user?: string;
  name?: string;
}

async function runCalibre(ctx: CommandContext, dir: string, flags: CalibreFlags): Promise<number> {
  const { importCalibre, listCalibreColumns } = await import('../core/import/calibre/calibre-import.ts');
  if (flags.listColumns) {
    const columns = listCalibreColumns(dir);
    if (ctx.json) ctx.printJson({ columns });
    else if (!columns.length) ctx.print('this calibre library has no custom columns');
    else for (const c of columns) ctx.print(`${c.column}\t${c.name}\t${c.datatype}${c.multiple ? ' (several values)' : ''}\t${c.books} books\tmap to: ${c.suggested.join(', ') || '-'}`);
    return EXIT.OK;
  }
  const columns = flags.mapColumn.map(parseColumnMapping);
  const store = await ctx.store();
  let userId: number | undefined;
  if (flags.user) {
    const user = await findUserByName(store.db, flags.user);
    if (!user) throw new CliError('USER_NOT_FOUND', `no user "${flags.user}"`, EXIT.NOT_FOUND);
    userId = user.id;
  }
  const progress = await importProgress(ctx);
  try {
    const result = await importCalibre({ store, root: dir, coversRoot: ctx.paths.covers, libraryName: flags.name, columns, userId, onProgress: (done, total) => progress.update(`calibre: ${done}/${total} books`) });
    progress.stop();
    if (ctx.json) ctx.printJson(result);
    else {
      ctx.print(`${result.library.created ? 'created' : 'updated'} library "${result.library.name}" (#${result.library.id}) at ${result.library.path}`);
      for (const table of [result.books, result.files, result.covers]) ctx.print(`  ${describeTable(table)}`);
      for (const c of result.columns) ctx.print(`  ${c.column} → ${c.target}: ${c.books} books`);
    }
    const skipped = [result.books, result.files, result.covers].some((t) => t.skipped.length > 0);
    return skipped ? EXIT.PARTIAL : EXIT.OK;
  } finally {
    progress.stop();
  }
}

export function registerImportCalibre(parent: Command, run: RunCommand): void {
  parent
    .command('calibre')
    .description('make a calibre library a Bindery library, in place (calibre’s metadata.db is only read)')
    .argument('<library-dir>', 'the calibre library folder (the one holding metadata.db)')
    .option('--map-column <#column=target>', 'where a custom column goes: readStatus, dateFinished, personalRating, shelf, tags, categories, moods, subtitle, narrator, pageCount (repeatable)', (v: string, prev: string[]) => [...prev, v], [])
    .option('--list-columns', 'list the custom columns and what they can map to, import nothing')
    .option('--user <name>', 'whose read status, ratings and shelves the mapped columns fill')
    .option('--name <name>', 'name of the new library (default: the folder name)')
    .action((dir: string, flags: CalibreFlags) =>
      run(async (ctx) => {
        try {
          return await runCalibre(ctx, dir, flags);
        } catch (error) {
          throw importCliError(error);
        }
      }),
    );
}
