// The `bindery` command line. Command modules load on demand so each command pays only for what it uses.
import module from 'node:module';
import type { GlobalOptions } from './commands/context.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Cached V8 bytecode roughly halves module start-up on later runs; it is a cache, so any failure is harmless.
try {
  module.enableCompileCache?.(process.env.BINDERY_COMPILE_CACHE ?? join(tmpdir(), `bindery-compile-cache-${process.getuid?.() ?? 'u'}`));
} catch {
  // caching is an optimisation only
}

const { Command, CommanderError } = await import('commander');
const { EXIT } = await import('./commands/exit-codes.ts');
const { commandRunner } = await import('./commands/run.ts');
const { VERSION } = await import('./version.ts');

const program = new Command('bindery')
  .description('A self-hosted digital book library')
  .version(VERSION)
  .option('--data-dir <dir>', 'where the catalog, covers and caches live (env BINDERY_DATA_DIR)')
  .option('--database-url <url>', 'keep the catalog on PostgreSQL 15+: postgres://user:password@host:port/database (env BINDERY_DATABASE_URL)')
  .option('--config <file>', 'JSON config file (env BINDERY_CONFIG)')
  .option('--json', 'machine-readable output on stdout', false)
  .showHelpAfterError()
  .exitOverride();

const run = commandRunner(() => program.opts<GlobalOptions>());
const registrations = await Promise.all([
  import('./commands/library.ts').then((m) => m.registerLibrary),
  import('./commands/scan.ts').then((m) => m.registerScan),
  import('./commands/books.ts').then((m) => m.registerBooks),
  import('./commands/duplicates.ts').then((m) => m.registerDuplicates),
  import('./commands/serve.ts').then((m) => m.registerServe),
  import('./commands/setup.ts').then((m) => m.registerSetup),
  import('./commands/users.ts').then((m) => m.registerUsers),
  import('./commands/move.ts').then((m) => m.registerMove),
  import('./commands/bookdrop.ts').then((m) => m.registerBookdrop),
  import('./commands/metadata.ts').then((m) => m.registerMetadata),
  import('./commands/backup.ts').then((m) => m.registerBackup),
  import('./commands/restore.ts').then((m) => m.registerRestore),
  import('./commands/export.ts').then((m) => m.registerExport),
  import('./commands/import.ts').then((m) => m.registerImport),
]);
for (const register of registrations) register(program, run);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    process.exitCode = ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(error.code) ? EXIT.OK : EXIT.USAGE;
  } else throw error;
}
