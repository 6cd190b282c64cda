// bindery db <command>: the catalog database itself, on either engine.
import type { Command } from 'commander';
import { registerDbCheck } from './db-check.ts';
import { registerDbCopy } from './db-copy.ts';
import type { RunCommand } from './run.ts';

export function registerDb(program: Command, run: RunCommand): void {
  const command = program.command('db').description('the catalog database: copy it between SQLite and PostgreSQL, check its integrity');
  registerDbCopy(command, run);
  registerDbCheck(command, run);
}
