// The `bindery` command line.
import { Command, CommanderError } from 'commander';
import { registerBooks } from './commands/books.ts';
import { EXIT, type GlobalOptions } from './commands/context.ts';
import { registerLibrary } from './commands/library.ts';
import { commandRunner } from './commands/run.ts';
import { registerScan } from './commands/scan.ts';
import { VERSION } from './version.ts';

const program = new Command('bindery')
  .description('A self-hosted digital book library')
  .version(VERSION)
  .option('--data-dir <dir>', 'where the catalog, covers and caches live (env BINDERY_DATA_DIR)')
  .option('--config <file>', 'JSON config file (env BINDERY_CONFIG)')
  .option('--json', 'machine-readable output on stdout', false)
  .showHelpAfterError()
  .exitOverride();

const run = commandRunner(() => program.opts<GlobalOptions>());
registerLibrary(program, run);
registerScan(program, run);
registerBooks(program, run);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') process.exitCode = EXIT.OK;
    else process.exitCode = EXIT.USAGE;
  } else throw error;
}
