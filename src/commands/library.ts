// bindery library add|list|remove|add-path
import type { Command } from 'commander';
import { Option } from 'commander';
import { addLibraryPath, createLibrary, listLibraries, ORGANIZATION_MODES, removeLibrary, type Library, type OrganizationMode } from '../core/libraries/libraries.ts';
import type { CommandContext } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import type { RunCommand } from './run.ts';

function describe(library: Library): string {
  return `${library.id}\t${library.name}\t${library.organizationMode}\t${library.paths.map((p) => p.path).join(', ')}`;
}

export function registerLibrary(program: Command, run: RunCommand): void {
  const library = program.command('library').description('manage libraries (named sets of folders)');

  library
    .command('add')
    .description('create a library from one or more folders')
    .argument('<name>', 'library name')
    .argument('<paths...>', 'folders holding the books')
    .addOption(new Option('--mode <mode>', 'how files become books').choices(ORGANIZATION_MODES).default('AUTO_DETECT'))
    .option('--watch', 'let `bindery serve` watch the folders for changes', false)
    .action((name: string, paths: string[], opts: { mode: OrganizationMode; watch: boolean }) =>
      run(async (ctx: CommandContext) => {
        const created = await createLibrary((await ctx.store()).db, { name, paths, organizationMode: opts.mode, watch: opts.watch });
        if (ctx.json) ctx.printJson(created);
        else ctx.print(`added library ${created.id} "${created.name}" (${created.paths.length} folder${created.paths.length === 1 ? '' : 's'}); run \`bindery scan "${created.name}"\` to read its books`);
      }),
    );

  library
    .command('list')
    .description('list libraries')
    .action(() =>
      run(async (ctx) => {
        const all = await listLibraries((await ctx.store()).db);
        if (ctx.json) ctx.printJson(all);
        else if (all.length === 0) ctx.print('no libraries yet: bindery library add NAME FOLDER');
        else all.forEach((l) => ctx.print(describe(l)));
      }),
    );

  library
    .command('add-path')
    .description('add another folder to a library')
    .argument('<library>', 'library id or name')
    .argument('<path>', 'folder')
    .action((id: string, path: string) =>
      run(async (ctx) => {
        const updated = await addLibraryPath((await ctx.store()).db, id, path);
        if (ctx.json) ctx.printJson(updated);
        else ctx.print(describe(updated));
      }),
    );

  library
    .command('remove')
    .description('remove a library from the catalog, with its books and their reading progress; files on disk are not touched')
    .argument('<library>', 'library id or name')
    .option('--yes', 'confirm: also forget the reading progress and shelves of its books', false)
    .action((id: string, opts: { yes: boolean }) =>
      run(async (ctx) => {
        if (!opts.yes) {
          throw new CliError('CONFIRMATION_REQUIRED', 'removing a library forgets the reading progress of its books; add --yes to confirm (files on disk stay)', EXIT.USAGE);
        }
        const { library: removed, books } = await removeLibrary((await ctx.store()).db, id, ctx.paths.covers);
        if (ctx.json) ctx.printJson({ removed: removed.id, name: removed.name, books });
        else ctx.print(`removed library ${removed.id} "${removed.name}" and ${books} book${books === 1 ? '' : 's'} from the catalog; no file was deleted`);
      }),
    );
}
