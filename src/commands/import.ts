// bindery import <source>: bringing data in from elsewhere, one subcommand per source.
import type { Command } from 'commander';
import { registerImportBinderyExport } from './import-bindery-export.ts';
import type { RunCommand } from './run.ts';

export function registerImport(program: Command, run: RunCommand): void {
  const parent = program.command('import').description('bring data in from elsewhere (bindery-export: an archive of `bindery export`)');
  registerImportBinderyExport(parent, run);
}
