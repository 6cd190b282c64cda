// The addresses a user sends books to (an e-reader's address, a friend's), one of them the default.
import type { Db } from '../store/store.ts';
import { EmailError } from './email-error.ts';

export interface EmailRecipient {
  id: number;
  userId: number;
  email: string;
  name: string;
  defaultRecipient: boolean;
}

export interface RecipientInput {
  email: string;
  name: string;
  defaultRecipient?: boolean;
}

type Row = { id: number; user_id: number; email: string; name: string; is_default: number };
const toRecipient = (r: Row): EmailRecipient => ({ id: r.id, userId: r.user_id, email: r.email, name: r.name, defaultRecipient: r.is_default === 1 });
const notFound = (id: number): EmailError => new EmailError('EMAIL_RECIPIENT_NOT_FOUND', `Email recipient not found: ${id}`);

export async function listRecipients(db: Db, userId: number): Promise<EmailRecipient[]> {
  return (await db.selectFrom('email_recipient_v2').selectAll().where('user_id', '=', userId).orderBy('id').execute()).map(toRecipient);
}

export async function getRecipient(db: Db, userId: number, id: number): Promise<EmailRecipient> {
  const row = await db.selectFrom('email_recipient_v2').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  if (!row) throw notFound(id);
  return toRecipient(row);
}

export async function defaultRecipient(db: Db, userId: number): Promise<EmailRecipient> {
  const row = await db.selectFrom('email_recipient_v2').selectAll().where('user_id', '=', userId).where('is_default', '=', 1).executeTakeFirst();
  if (!row) throw new EmailError('DEFAULT_EMAIL_RECIPIENT_NOT_FOUND', 'No default email recipient configured');
  return toRecipient(row);
}

/** Saves a recipient (new when `id` is undefined); one address once per user; the first one, or one marked so, is the default. */
async function save(db: Db, userId: number, input: RecipientInput, id?: number): Promise<EmailRecipient> {
  const email = input.email.trim();
  const name = input.name.trim();
  return db.transaction().execute(async (tx) => {
    if (id !== undefined && !(await tx.selectFrom('email_recipient_v2').select('id').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst())) throw notFound(id);
    let clash = tx.selectFrom('email_recipient_v2').select('id').where('user_id', '=', userId).where('email', '=', email);
    if (id !== undefined) clash = clash.where('id', '!=', id);
    if (await clash.executeTakeFirst()) throw new EmailError('DUPLICATE_RECIPIENT', `Email recipient ${email} already exists`);
    const hasDefault = await tx.selectFrom('email_recipient_v2').select('id').where('user_id', '=', userId).where('is_default', '=', 1).executeTakeFirst();
    const makeDefault = input.defaultRecipient === true || !hasDefault || hasDefault.id === id;
    if (makeDefault) await tx.updateTable('email_recipient_v2').set({ is_default: 0 }).where('user_id', '=', userId).execute();
    const values = { email, name, is_default: makeDefault ? 1 : 0 };
    const row =
      id === undefined
        ? await tx.insertInto('email_recipient_v2').values({ user_id: userId, ...values }).returningAll().executeTakeFirstOrThrow()
        : await tx.updateTable('email_recipient_v2').set(values).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
    return toRecipient(row);
  });
}

export const createRecipient = (db: Db, userId: number, input: RecipientInput): Promise<EmailRecipient> => save(db, userId, input);
export const updateRecipient = (db: Db, userId: number, id: number, input: RecipientInput): Promise<EmailRecipient> => save(db, userId, input, id);

export async function setDefaultRecipient(db: Db, userId: number, id: number): Promise<void> {
  await getRecipient(db, userId, id);
  await db.transaction().execute(async (tx) => {
    await tx.updateTable('email_recipient_v2').set({ is_default: 0 }).where('user_id', '=', userId).execute();
    await tx.updateTable('email_recipient_v2').set({ is_default: 1 }).where('id', '=', id).execute();
  });
}

export async function deleteRecipient(db: Db, userId: number, id: number): Promise<void> {
  const result = await db.deleteFrom('email_recipient_v2').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  if (result.numDeletedRows === 0n) throw notFound(id);
}
