// bindery import <source>: bringing data in from elsewhere, one subcommand file per source.
import type { Command } from 'commander';
import { registerImportBinderyExport } from './import-bindery-export.ts';
import { registerImportCalibre } from './import-calibre.ts';
import { registerImportGrimmory } from './import-grimmory.ts';
import type { RunCommand } from './run.ts';

export function registerImport(program: Command, run: RunCommand): void {
  const command = program.command('import').description('bring data in from elsewhere: another server, a calibre library, a `bindery export` archive');
  registerImportGrimmory(command, run);
  registerImportCalibre(command, run);
  registerImportBinderyExport(command, run);
}
