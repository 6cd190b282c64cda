// SMTP providers: each user's own, plus those an admin shares with everyone. The password is kept to sign in to the
// server and never leaves through the API; each user picks a default provider for quick sending.
import type { Db } from '../store/store.ts';
import { EmailError } from './email-error.ts';

export interface EmailProvider {
  id: number;
  userId: number;
  name: string;
  host: string;
  port: number;
  username: string | null;
  fromAddress: string | null;
  auth: boolean;
  startTls: boolean;
  defaultProvider: boolean;
  shared: boolean;
}

export interface ProviderInput {
  name?: string | null;
  host?: string | null;
  port?: number | null;
  username?: string | null;
  /** Absent or empty on update: the stored password stays. */
  password?: string | null;
  fromAddress?: string | null;
  auth?: boolean | null;
  startTls?: boolean | null;
  shared?: boolean | null;
}

/** What sending needs, password included: for core use only. */
export interface SmtpAccount {
  host: string;
  port: number;
  username: string | null;
  password: string | null;
  fromAddress: string | null;
  auth: boolean;
  startTls: boolean;
}

interface Caller {
  userId: number;
  isAdmin: boolean;
}

type Row = { id: number; user_id: number; name: string; host: string; port: number; username: string | null; password: string | null; from_address: string | null; auth: number; start_tls: number; shared: number };

async function defaultProviderId(db: Db, userId: number): Promise<number | undefined> {
  return (await db.selectFrom('user_email_provider_preference').select('default_provider_id').where('user_id', '=', userId).executeTakeFirst())?.default_provider_id;
}

function toProvider(r: Row, defaultId: number | undefined): EmailProvider {
  return { id: r.id, userId: r.user_id, name: r.name, host: r.host, port: r.port, username: r.username, fromAddress: r.from_address, auth: r.auth === 1, startTls: r.start_tls === 1, defaultProvider: r.id === defaultId, shared: r.shared === 1 };
}

/** The provider if the caller owns it or it is shared; undefined otherwise. */
async function accessibleRow(db: Db, userId: number, id: number): Promise<Row | undefined> {
  return db.selectFrom('email_provider_v2').selectAll().where('id', '=', id).where((eb) => eb.or([eb('user_id', '=', userId), eb('shared', '=', 1)])).executeTakeFirst();
}

const notFound = (id: number): EmailError => new EmailError('EMAIL_PROVIDER_NOT_FOUND', `Email provider not found: ${id}`);

export async function listProviders(db: Db, userId: number): Promise<EmailProvider[]> {
  const rows = await db.selectFrom('email_provider_v2').selectAll().where((eb) => eb.or([eb('user_id', '=', userId), eb('shared', '=', 1)])).orderBy('id').execute();
  const defaultId = await defaultProviderId(db, userId);
  return rows.map((r) => toProvider(r, defaultId));
}

export async function getProvider(db: Db, userId: number, id: number): Promise<EmailProvider> {
  const row = await accessibleRow(db, userId, id);
  if (!row) throw notFound(id);
  return toProvider(row, await defaultProviderId(db, userId));
}

function requireFields(input: ProviderInput): { name: string; host: string; port: number } {
  const name = input.name?.trim();
  const host = input.host?.trim();
  const port = input.port;
  if (!name || !host || port === undefined || port === null) throw new EmailError('FORBIDDEN', 'An email provider needs a name, a host and a port');
  return { name, host, port };
}

/** Only an admin may share a provider with everyone. The user's first provider becomes their default. */
export async function createProvider(db: Db, caller: Caller, input: ProviderInput): Promise<EmailProvider> {
  const { name, host, port } = requireFields(input);
  if (input.shared && !caller.isAdmin) throw new EmailError('FORBIDDEN', 'Only an admin can share an email provider');
  return db.transaction().execute(async (tx) => {
    const row = await tx
      .insertInto('email_provider_v2')
      .values({ user_id: caller.userId, name, host, port, username: input.username ?? null, password: input.password ?? null, from_address: input.fromAddress ?? null, auth: input.auth ? 1 : 0, start_tls: input.startTls ? 1 : 0, shared: input.shared ? 1 : 0 })
      .returningAll()
      .executeTakeFirstOrThrow();
    if ((await defaultProviderId(tx, caller.userId)) === undefined) await tx.insertInto('user_email_provider_preference').values({ user_id: caller.userId, default_provider_id: row.id }).execute();
    return toProvider(row, await defaultProviderId(tx, caller.userId));
  });
}

/** The owner changes their provider; a shared one cannot be changed by the users it is shared with. */
export async function updateProvider(db: Db, caller: Caller, id: number, input: ProviderInput): Promise<EmailProvider> {
  const row = await accessibleRow(db, caller.userId, id);
  if (!row) throw notFound(id);
  if (row.user_id !== caller.userId) throw new EmailError('FORBIDDEN', 'Only the owner can change this email provider');
  const { name, host, port } = requireFields(input);
  if (input.shared && !caller.isAdmin) throw new EmailError('FORBIDDEN', 'Only an admin can share an email provider');
  await db
    .updateTable('email_provider_v2')
    .set({
      name, host, port,
      username: input.username ?? null,
      ...(input.password ? { password: input.password } : {}),
      from_address: input.fromAddress ?? null,
      auth: input.auth ? 1 : 0,
      start_tls: input.startTls ? 1 : 0,
      shared: input.shared ? 1 : 0,
    })
    .where('id', '=', id)
    .execute();
  return getProvider(db, caller.userId, id);
}

export async function deleteProvider(db: Db, caller: Caller, id: number): Promise<void> {
  const row = await accessibleRow(db, caller.userId, id);
  if (!row) throw notFound(id);
  if (row.user_id !== caller.userId && !caller.isAdmin) throw new EmailError('FORBIDDEN', 'Only the owner can delete this email provider');
  await db.deleteFrom('email_provider_v2').where('id', '=', id).execute();
}

export async function setDefaultProvider(db: Db, userId: number, id: number): Promise<void> {
  if (!(await accessibleRow(db, userId, id))) throw notFound(id);
  await db.insertInto('user_email_provider_preference').values({ user_id: userId, default_provider_id: id }).onConflict((oc) => oc.column('user_id').doUpdateSet({ default_provider_id: id })).execute();
}

function toAccount(r: Row): SmtpAccount {
  return { host: r.host, port: r.port, username: r.username, password: r.password, fromAddress: r.from_address, auth: r.auth === 1, startTls: r.start_tls === 1 };
}

/** The SMTP account of a provider the user may use: `id`, or their default. */
export async function smtpAccount(db: Db, userId: number, id: number | 'default'): Promise<SmtpAccount> {
  if (id === 'default') {
    const defaultId = await defaultProviderId(db, userId);
    const row = defaultId === undefined ? undefined : await accessibleRow(db, userId, defaultId);
    if (!row) throw new EmailError('DEFAULT_EMAIL_PROVIDER_NOT_FOUND', 'No default email provider configured');
    return toAccount(row);
  }
  const row = await accessibleRow(db, userId, id);
  if (!row) throw notFound(id);
  return toAccount(row);
}
