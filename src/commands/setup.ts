// bindery setup: creates the first administrator without the web UI (scripts, containers, headless servers).
import type { Command } from 'commander';
import { countUsers, createFirstAdmin } from '../core/users/users.ts';
import { CliError, EXIT } from './exit-codes.ts';
import type { RunCommand } from './run.ts';
import { readPassword, withUserErrors, type PasswordFlags } from './users.ts';

interface SetupFlags extends PasswordFlags {
  username: string;
  email?: string;
  name?: string;
}

const SETUP_DONE = 'setup is already complete: users exist (add more with `bindery users add`)';

export function registerSetup(program: Command, run: RunCommand): void {
  program
    .command('setup')
    .description('create the first administrator (only while no user exists)')
    .requiredOption('--username <username>', 'login name of the administrator')
    .option('--password-stdin', 'read the password from standard input')
    .option('--password-file <file>', 'read the password from this file')
    .option('--email <email>', 'e-mail address')
    .option('--name <name>', 'display name (default: the username)')
    .action((opts: SetupFlags) =>
      run(
        withUserErrors(async (ctx) => {
          const username = opts.username.trim();
          if (!username) throw new CliError('INVALID_ARGUMENT', '--username must not be blank', EXIT.USAGE);
          if (opts.email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(opts.email)) {
            throw new CliError('INVALID_ARGUMENT', `not an e-mail address: "${opts.email}"`, EXIT.USAGE);
          }
          const { db } = await ctx.store();
          if ((await countUsers(db)) > 0) throw new CliError('SETUP_DONE', SETUP_DONE, EXIT.CONFLICT);
          const password = await readPassword(opts);
          let id: number;
          try {
            id = await createFirstAdmin(db, { username, password, name: opts.name?.trim() || username, email: opts.email ?? null });
          } catch (error) {
            if ((await countUsers(db)) > 0) throw new CliError('SETUP_DONE', SETUP_DONE, EXIT.CONFLICT);
            throw error;
          }
          if (ctx.json) ctx.printJson({ id, username, admin: true });
          else ctx.print(`created administrator ${id} "${username}"; sign in with it in the web UI or the app`);
        }),
      ),
    );
}
