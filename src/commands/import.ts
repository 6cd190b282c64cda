// bindery import <source>: bringing a catalog over from another server. Each source is its own subcommand file.
import type { Command } from 'commander';
import type { RunCommand } from './run.ts';
import { registerImportCalibre } from './import-calibre.ts';
import { registerImportGrimmory } from './import-grimmory.ts';

export function registerImport(program: Command, run: RunCommand): void {
  const command = program.command('import').description('bring a library over from another server');
  registerImportGrimmory(command, run);
  registerImportCalibre(command, run);
}
