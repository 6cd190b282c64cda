// Sending books by e-mail: SMTP providers, recipients, and the send itself (answered at once, sent in the background).
import Type from 'typebox';
import { EmailError, type EmailErrorCode } from '../../core/email/email-error.ts';
import { createProvider, deleteProvider, getProvider, listProviders, setDefaultProvider, smtpAccount, updateProvider, type ProviderInput } from '../../core/email/providers.ts';
import { createRecipient, defaultRecipient, deleteRecipient, getRecipient, listRecipients, setDefaultRecipient, updateRecipient, type RecipientInput } from '../../core/email/recipients.ts';
import { sendBookMail } from '../../core/email/send-book.ts';
import { isAdmin } from '../../core/auth/principal.ts';
import { audit } from '../audit.ts';
import { principalOf } from '../authenticate.ts';
import { accessibleBookFiles } from '../book-file-access.ts';
import type { DaemonContext } from '../context.ts';
import { ApiError } from '../http-errors.ts';
import { adminOr, type RouteRequest, type RouteSpec } from '../route-spec.ts';
import { nullable } from '../schema-types.ts';

const RULE = adminOr('canEmailBook');
const IdParams = Type.Object({ id: Type.Integer() });
const CreateEmailProviderRequest = Type.Object({
  name: nullable(Type.String({ maxLength: 255 })),
  host: nullable(Type.String({ maxLength: 255 })),
  port: nullable(Type.Integer({ minimum: 1, maximum: 65535 })),
  username: nullable(Type.String({ maxLength: 255 })),
  password: nullable(Type.String({ maxLength: 1024 })),
  fromAddress: nullable(Type.String({ maxLength: 255 })),
  auth: nullable(Type.Boolean()),
  startTls: nullable(Type.Boolean()),
  shared: nullable(Type.Boolean()),
});
const CreateEmailRecipientRequest = Type.Object({
  email: Type.String({ minLength: 3, maxLength: 255, pattern: '^[^\\s@]+@[^\\s@]+$' }),
  name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
  defaultRecipient: Type.Optional(Type.Boolean()),
});
const SendBookByEmailRequest = Type.Object({ bookId: Type.Integer(), providerId: Type.Integer(), recipientId: Type.Integer(), bookFileId: nullable(Type.Integer()) });

const EMAIL_STATUS: Record<EmailErrorCode, number> = {
  EMAIL_PROVIDER_NOT_FOUND: 404,
  DEFAULT_EMAIL_PROVIDER_NOT_FOUND: 404,
  EMAIL_RECIPIENT_NOT_FOUND: 404,
  DEFAULT_EMAIL_RECIPIENT_NOT_FOUND: 404,
  DUPLICATE_RECIPIENT: 409,
  FORBIDDEN: 403,
  FILE_NOT_FOUND: 404,
};

async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof EmailError) throw new ApiError(error.code === 'FORBIDDEN' && /needs/.test(error.message) ? 400 : EMAIL_STATUS[error.code], error.message);
    throw error;
  }
}

const caller = (request: RouteRequest) => {
  const principal = principalOf(request);
  return { userId: principal.userId, isAdmin: isAdmin(principal) };
};
const idOf = (request: RouteRequest): number => (request.params as { id: number }).id;

/** Checks everything a send needs now (book visible, file on disk, provider and recipient), then sends in the background. */
async function dispatch(request: RouteRequest, ctx: DaemonContext, bookId: number, provider: number | 'default', recipient: number | 'default', bookFileId?: number | null): Promise<void> {
  const { userId } = caller(request);
  const files = await accessibleBookFiles(request, ctx, bookId);
  const account = await mapped(() => smtpAccount(ctx.store.db, userId, provider));
  const to = await mapped(() => (recipient === 'default' ? defaultRecipient(ctx.store.db, userId) : getRecipient(ctx.store.db, userId, recipient)));
  const file = bookFileId === undefined || bookFileId === null ? files.primary : files.files.find((f) => f.id === bookFileId);
  if (!file?.path || file.folderBased) throw new ApiError(404, `File not found: ${bookFileId ?? bookId}`);
  const title = files.title ?? file.fileName;
  const job = sendBookMail(account, { to: to.email, title, filePath: file.path })
    .then(async () => {
      ctx.log.info({ bookId, to: to.email }, 'book sent by e-mail');
      await audit(ctx, request, 'BOOK_SENT', `Sent book: ${title} to ${to.email}`, { type: 'Book', id: bookId });
    })
    .catch((error: unknown) => ctx.log.error({ bookId, to: to.email, err: error }, 'sending the book by e-mail failed'));
  ctx.background.add(job);
  void job.finally(() => ctx.background.delete(job));
}

export const emailRoutes: RouteSpec[] = [
  { method: 'GET', url: '/api/v1/email/providers', auth: 'jwt', rule: RULE, handler: async (request, _reply, ctx) => listProviders(ctx.store.db, caller(request).userId) },
  {
    method: 'GET',
    url: '/api/v1/email/providers/{id}',
    auth: 'jwt',
    rule: RULE,
    schema: { params: IdParams },
    handler: async (request, _reply, ctx) => mapped(() => getProvider(ctx.store.db, caller(request).userId, idOf(request))),
  },
  {
    method: 'POST',
    url: '/api/v1/email/providers',
    auth: 'jwt',
    rule: RULE,
    schema: { body: CreateEmailProviderRequest },
    handler: async (request, _reply, ctx) => mapped(() => createProvider(ctx.store.db, caller(request), request.body as ProviderInput)),
  },
  {
    method: 'PUT',
    url: '/api/v1/email/providers/{id}',
    auth: 'jwt',
    rule: RULE,
    schema: { params: IdParams, body: CreateEmailProviderRequest },
    handler: async (request, _reply, ctx) => mapped(() => updateProvider(ctx.store.db, caller(request), idOf(request), request.body as ProviderInput)),
  },
  {
    method: 'PATCH',
    url: '/api/v1/email/providers/{id}/set-default',
    auth: 'jwt',
    rule: RULE,
    schema: { params: IdParams },
    handler: async (request, reply, ctx) => {
      await mapped(() => setDefaultProvider(ctx.store.db, caller(request).userId, idOf(request)));
      return reply.status(204).send();
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/email/providers/{id}',
    auth: 'jwt',
    rule: RULE,
    schema: { params: IdParams },
    handler: async (request, reply, ctx) => {
      await mapped(() => deleteProvider(ctx.store.db, caller(request), idOf(request)));
      return reply.status(204).send();
    },
  },
  { method: 'GET', url: '/api/v1/email/recipients', auth: 'jwt', rule: RULE, handler: async (request, _reply, ctx) => listRecipients(ctx.store.db, caller(request).userId) },
  {
    method: 'GET',
    url: '/api/v1/email/recipients/{id}',
    auth: 'jwt',
    rule: RULE,
    schema: { params: IdParams },
    handler: async (request, _reply, ctx) => mapped(() => getRecipient(ctx.store.db, caller(request).userId, idOf(request))),
  },
  {
    method: 'POST',
    url: '/api/v1/email/recipients',
    auth: 'jwt',
    rule: RULE,
    schema: { body: CreateEmailRecipientRequest },
    handler: async (request, _reply, ctx) => mapped(() => createRecipient(ctx.store.db, caller(request).userId, request.body as RecipientInput)),
  },
  {
    method: 'PUT',
    url: '/api/v1/email/recipients/{id}',
    auth: 'jwt',
    rule: RULE,
    schema: { params: IdParams, body: CreateEmailRecipientRequest },
    handler: async (request, _reply, ctx) => mapped(() => updateRecipient(ctx.store.db, caller(request).userId, idOf(request), request.body as RecipientInput)),
  },
  {
    method: 'PATCH',
    url: '/api/v1/email/recipients/{id}/set-default',
    auth: 'jwt',
    rule: RULE,
    schema: { params: IdParams },
    handler: async (request, reply, ctx) => {
      await mapped(() => setDefaultRecipient(ctx.store.db, caller(request).userId, idOf(request)));
      return reply.status(204).send();
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/email/recipients/{id}',
    auth: 'jwt',
    rule: RULE,
    schema: { params: IdParams },
    handler: async (request, reply, ctx) => {
      await mapped(() => deleteRecipient(ctx.store.db, caller(request).userId, idOf(request)));
      return reply.status(204).send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/email/book',
    auth: 'jwt',
    rule: RULE,
    schema: { body: SendBookByEmailRequest },
    handler: async (request, reply, ctx) => {
      const body = request.body as { bookId: number; providerId: number; recipientId: number; bookFileId?: number | null };
      await dispatch(request, ctx, body.bookId, body.providerId, body.recipientId, body.bookFileId);
      return reply.status(204).send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/email/book/{bookId}',
    auth: 'jwt',
    rule: RULE,
    schema: { params: Type.Object({ bookId: Type.Integer() }) },
    handler: async (request, reply, ctx) => {
      await dispatch(request, ctx, (request.params as { bookId: number }).bookId, 'default', 'default');
      return reply.status(204).send();
    },
  },
];
