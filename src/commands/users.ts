// bindery users add|list|passwd|remove|grant
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { AccountError } from '../core/auth/account-error.ts';
import { allPermissions, PERMISSIONS, type Permission } from '../core/auth/permissions.ts';
import { findLibrary } from '../core/libraries/libraries.ts';
import type { Db } from '../core/store/store.ts';
import { trimPasswordText } from '../core/users/seed-admin.ts';
import { UserError, findUserByName } from '../core/users/users.ts';
import type { CommandBody, RunCommand } from './run.ts';
import { CliError, EXIT } from './exit-codes.ts';

export interface PasswordFlags {
  passwordStdin?: boolean;
  passwordFile?: string;
}

/** The password from a file or from standard input; never from the command line, where other users could read it. */
export async function readPassword(flags: PasswordFlags): Promise<string> {
  if (flags.passwordStdin && flags.passwordFile) throw new CliError('INVALID_ARGUMENT', 'give either --password-stdin or --password-file, not both', EXIT.USAGE);
  let text: string;
  if (flags.passwordFile) {
    try {
      text = readFileSync(flags.passwordFile, 'utf8');
    } catch (error) {
      throw new CliError('INVALID_ARGUMENT', `cannot read password file ${flags.passwordFile}: ${(error as Error).message}`, EXIT.USAGE);
    }
  } else if (flags.passwordStdin) {
    if (process.stdin.isTTY) process.stderr.write('password (end with Ctrl-D): ');
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Buffer));
    text = Buffer.concat(chunks).toString('utf8');
  } else {
    throw new CliError('INVALID_ARGUMENT', 'a password is needed: pass it on standard input with --password-stdin or in a file with --password-file FILE', EXIT.USAGE);
  }
  const password = trimPasswordText(text);
  if (password.length < 8) throw new CliError('INVALID_ARGUMENT', 'the password must be at least 8 characters long', EXIT.USAGE);
  if (Buffer.byteLength(password, 'utf8') > 72) throw new CliError('INVALID_ARGUMENT', 'the password must be at most 72 bytes long', EXIT.USAGE);
  return password;
}

/** Account refusals from core, as CLI errors with the documented exit codes. */
export function cliErrorFrom(error: unknown): unknown {
  if (error instanceof AccountError) {
    if (error.code === 'USER_NOT_FOUND') return new CliError('USER_NOT_FOUND', error.message, EXIT.NOT_FOUND);
    if (error.code === 'USERNAME_ALREADY_TAKEN' || error.code === 'DATA_CONFLICT') return new CliError('USER_CONFLICT', error.message, EXIT.CONFLICT);
    if (error.code === 'PASSWORD_TOO_SHORT') return new CliError('INVALID_ARGUMENT', 'the password must be at least 8 characters long', EXIT.USAGE);
    return new CliError(error.code, error.message, EXIT.USAGE);
  }
  if (error instanceof UserError) {
    const exitCode = error.code === 'CONFLICT' ? EXIT.CONFLICT : error.code === 'NOT_FOUND' ? EXIT.NOT_FOUND : EXIT.USAGE;
    return new CliError(`USER_${error.code}`, error.message, exitCode);
  }
  return error;
}

export function withUserErrors(body: CommandBody): CommandBody {
  return async (ctx) => {
    try {
      return await body(ctx);
    } catch (error) {
      throw cliErrorFrom(error);
    }
  };
}

const collect = (value: string, previous: string[]): string[] => [...previous, ...value.split(',').map((v) => v.trim()).filter(Boolean)];

/** `canUpload`, `permissionUpload` or `upload` (any case) → the flag. */
export function parsePermission(name: string): Permission {
  const wanted = name.toLowerCase();
  for (const [json, entity] of PERMISSIONS) {
    const short = json.replace(/^can/, '').toLowerCase();
    if ([json.toLowerCase(), entity.toLowerCase(), short].includes(wanted)) return json;
  }
  throw new CliError('INVALID_ARGUMENT', `unknown permission "${name}"; known: ${PERMISSIONS.map(([json]) => json).join(', ')}`, EXIT.USAGE);
}

async function requireUserId(db: Db, username: string): Promise<number> {
  const user = await findUserByName(db, username);
  if (!user) throw new CliError('USER_NOT_FOUND', `no user "${username}"`, EXIT.NOT_FOUND);
  return user.id;
}

async function libraryIds(db: Db, names: string[]): Promise<number[]> {
  const ids: number[] = [];
  for (const name of names) ids.push((await findLibrary(db, name)).id);
  return ids;
}

export interface UserSummary {
  id: number;
  username: string;
  name: string | null;
  email: string | null;
  provisioningMethod: string | null;
  defaultPassword: boolean;
  admin: boolean;
  permissions: Permission[];
  libraries: { id: number; name: string }[];
}

async function summaries(db: Db, onlyId?: number): Promise<UserSummary[]> {
  const { bookLoreUser, listBookLoreUsers } = await import('../core/users/user-view.ts');
  const users = onlyId === undefined ? await listBookLoreUsers(db) : [await bookLoreUser(db, onlyId)].filter((u) => u !== undefined);
  return users.map((u) => ({
    id: u.id,
    username: u.username,
    name: u.name,
    email: u.email,
    provisioningMethod: u.provisioningMethod,
    defaultPassword: u.defaultPassword,
    admin: u.permissions.admin,
    permissions: (Object.keys(u.permissions) as Permission[]).filter((p) => u.permissions[p]),
    libraries: u.assignedLibraries.map((l) => ({ id: l.id as number, name: l.name as string })),
  }));
}

async function summary(db: Db, id: number): Promise<UserSummary> {
  const [one] = await summaries(db, id);
  if (!one) throw new CliError('USER_NOT_FOUND', `no user with id ${id}`, EXIT.NOT_FOUND);
  return one;
}

function describe(user: UserSummary): string {
  const perms = user.admin ? 'admin' : user.permissions.join(',') || '-';
  const libs = user.libraries.map((l) => l.name).join(',') || '-';
  return `${user.id}\t${user.username}\t${user.name ?? ''}\t${user.email ?? ''}\t${perms}\t${libs}`;
}

async function adminCount(db: Db): Promise<number> {
  const row = await db.selectFrom('user_permissions').select((eb) => eb.fn.countAll<number>().as('n')).where('permission_admin', '=', 1).executeTakeFirstOrThrow();
  return Number(row.n);
}

async function isAdmin(db: Db, userId: number): Promise<boolean> {
  const row = await db.selectFrom('user_permissions').select('permission_admin').where('user_id', '=', userId).executeTakeFirst();
  return row?.permission_admin === 1;
}

async function refuseLastAdmin(db: Db, userId: number, what: string): Promise<void> {
  if ((await isAdmin(db, userId)) && (await adminCount(db)) <= 1) {
    throw new CliError('LAST_ADMIN', `${what} would leave no administrator; make another user admin first`, EXIT.CONFLICT);
  }
}

interface AddFlags extends PasswordFlags {
  admin: boolean;
  email?: string;
  name?: string;
  library: string[];
  permission: string[];
  passwordChange: boolean;
}

interface GrantFlags {
  permission: string[];
  library: string[];
  revoke: boolean;
}

export function registerUsers(program: Command, run: RunCommand): void {
  const users = program.command('users').description('manage user accounts');

  users
    .command('add')
    .description('create a user; the password comes from standard input or a file, never from the command line')
    .argument('<username>', 'login name')
    .option('--admin', 'an administrator with every permission', false)
    .option('--email <email>', 'e-mail address')
    .option('--name <name>', 'display name (default: the username)')
    .option('--password-stdin', 'read the password from standard input')
    .option('--password-file <file>', 'read the password from this file')
    .option('--library <library>', 'give access to this library (id or name; repeatable)', collect, [])
    .option('--permission <permission>', 'grant this permission, e.g. canDownload (repeatable)', collect, [])
    .option('--no-password-change', 'do not ask the user to change the password at first login')
    .action((username: string, opts: AddFlags) =>
      run(
        withUserErrors(async (ctx) => {
          const granted = opts.permission.map(parsePermission);
          const password = await readPassword(opts);
          const { db } = await ctx.store();
          const ids = await libraryIds(db, opts.library);
          const { registerUser } = await import('../core/users/user-admin.ts');
          const permissions = opts.admin ? allPermissions() : Object.fromEntries(granted.map((p) => [p, true]));
          const id = await registerUser(db, {
            username,
            password,
            name: opts.name ?? username,
            email: opts.email ?? null,
            permissions,
            libraryIds: ids,
            isDefaultPassword: opts.passwordChange,
          });
          const created = await summary(db, id);
          if (ctx.json) ctx.printJson(created);
          else ctx.print(`added user ${created.id} "${created.username}"${created.admin ? ' (administrator)' : ''}`);
        }),
      ),
    );

  users
    .command('list')
    .description('list users: id, username, name, e-mail, permissions, libraries')
    .action(() =>
      run(async (ctx) => {
        const all = await summaries((await ctx.store()).db);
        if (ctx.json) ctx.printJson(all);
        else if (all.length === 0) ctx.print('no users yet: bindery setup --username NAME --password-stdin');
        else all.forEach((u) => ctx.print(describe(u)));
      }),
    );

  users
    .command('passwd')
    .description("set a user's password (from standard input or a file) and sign them out of every session")
    .argument('<username>', 'login name')
    .option('--password-stdin', 'read the password from standard input')
    .option('--password-file <file>', 'read the password from this file')
    .action((username: string, opts: PasswordFlags) =>
      run(
        withUserErrors(async (ctx) => {
          const password = await readPassword(opts);
          const { db } = await ctx.store();
          const id = await requireUserId(db, username);
          const { setUserPassword } = await import('../core/users/user-admin.ts');
          await setUserPassword(db, id, password);
          if (ctx.json) ctx.printJson({ id, username, passwordChanged: true });
          else ctx.print(`changed the password of "${username}"; their sessions were signed out`);
        }),
      ),
    );

  users
    .command('sign-out')
    .description('sign a user out of every session at once (web, apps, refresh tokens); their password stays')
    .argument('<username>', 'login name')
    .action((username: string) =>
      run(
        withUserErrors(async (ctx) => {
          const { db } = await ctx.store();
          const id = await requireUserId(db, username);
          const { revokeAllSessions } = await import('../core/auth/sessions.ts');
          await revokeAllSessions(db, id, 'sign-out-everywhere');
          if (ctx.json) ctx.printJson({ id, username, signedOut: true });
          else ctx.print(`signed "${username}" out of every session`);
        }),
      ),
    );

  users
    .command('remove')
    .description('delete a user with their reading progress, shelves and settings')
    .argument('<username>', 'login name')
    .option('--yes', 'confirm: their reading progress, shelves and settings are deleted too', false)
    .action((username: string, opts: { yes: boolean }) =>
      run(
        withUserErrors(async (ctx) => {
          if (!opts.yes) {
            throw new CliError('CONFIRMATION_REQUIRED', `removing "${username}" deletes their reading progress, shelves and settings; add --yes to confirm`, EXIT.USAGE);
          }
          const { db } = await ctx.store();
          const id = await requireUserId(db, username);
          await refuseLastAdmin(db, id, `removing "${username}"`);
          const { deleteUser } = await import('../core/users/user-admin.ts');
          const removed = await deleteUser(db, null, id);
          if (ctx.json) ctx.printJson({ removed: removed.id, username: removed.username });
          else ctx.print(`removed user ${removed.id} "${removed.username}"`);
        }),
      ),
    );

  users
    .command('grant')
    .description('grant (or with --revoke take away) permissions and library access')
    .argument('<username>', 'login name')
    .option('--permission <permission>', 'a permission, e.g. canDownload or admin (repeatable)', collect, [])
    .option('--library <library>', 'a library id or name (repeatable)', collect, [])
    .option('--revoke', 'take the permissions and libraries away instead', false)
    .action((username: string, opts: GrantFlags) =>
      run(
        withUserErrors(async (ctx) => {
          if (opts.permission.length === 0 && opts.library.length === 0) {
            throw new CliError('INVALID_ARGUMENT', 'name at least one --permission or --library', EXIT.USAGE);
          }
          const flags = opts.permission.map(parsePermission);
          const { db } = await ctx.store();
          const id = await requireUserId(db, username);
          const ids = await libraryIds(db, opts.library);
          if (opts.revoke && flags.includes('admin')) await refuseLastAdmin(db, id, `revoking admin from "${username}"`);
          const { changeLibraryAccess, setPermissionFlags } = await import('../core/users/user-admin.ts');
          await setPermissionFlags(db, id, Object.fromEntries(flags.map((p) => [p, !opts.revoke])));
          await changeLibraryAccess(db, id, ids, !opts.revoke);
          const updated = await summary(db, id);
          if (ctx.json) ctx.printJson(updated);
          else ctx.print(describe(updated));
        }),
      ),
    );
}
