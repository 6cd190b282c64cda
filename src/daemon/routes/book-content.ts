// BookController's content replacement (the PDF reader saving annotations into the file) and similar books.
import type { Readable } from 'node:stream';
import Type from 'typebox';
import { booksJson } from '../../core/books/book-list.ts';
import { recommendBooks } from '../../core/books/recommendations.ts';
import { replaceBookFileContent, ReplaceContentError, type ReplaceContentErrorCode } from '../../core/books/replace-content.ts';
import { maxUploadMb } from '../../core/bookdrop/upload.ts';
import { requireBookAccess } from '../access.ts';
import { principalOf } from '../authenticate.ts';
import { accessibleBookFiles, fileOfType } from '../book-file-access.ts';
import { ApiError } from '../http-errors.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

const STATUS: Record<ReplaceContentErrorCode, number> = {
  NOT_FOUND: 404,
  NOT_A_FILE: 400,
  UNSUPPORTED: 400,
  EMPTY: 400,
  TOO_LARGE: 400,
  UNREADABLE: 400,
  CONFLICT: 409,
};

const isStream = (body: unknown): body is Readable => typeof (body as Readable | undefined)?.iterator === 'function';

export const bookContentRoutes: RouteSpec[] = [
  {
    method: 'PUT',
    url: '/api/v1/books/{bookId}/content',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    rawBody: true,
    schema: { params: Type.Object({ bookId: Type.Integer() }), querystring: Type.Object({ bookType: Type.Optional(Type.String()) }) },
    handler: async (request, reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      const { bookType } = request.query as { bookType?: string };
      // The body stays unread until the caller, the book and the file are settled; an early answer closes the connection.
      reply.header('Connection', 'close');
      const file = fileOfType(await accessibleBookFiles(request, ctx, bookId), bookType);
      if (!file) throw new ApiError(404, `File not found: the book ${bookId} has no file`);
      if (!isStream(request.body)) throw new ApiError(request.body === undefined ? 400 : 415, request.body === undefined ? 'The new content is empty' : 'Send the file itself, not JSON, text or a form');
      const declared = Number(request.headers['content-length']);
      try {
        const result = await replaceBookFileContent(ctx.store, file.id, request.body, {
          minLimitBytes: (await maxUploadMb(ctx.store)) * 1024 * 1024,
          ...(Number.isFinite(declared) ? { declaredBytes: declared } : {}),
        });
        ctx.log.info({ bookId, fileId: file.id, size: result.sizeBytes, keptAt: result.keptAt, user: principalOf(request).username }, 'book content replaced');
      } catch (error) {
        if (error instanceof ReplaceContentError) throw new ApiError(STATUS[error.code], error.message);
        throw error;
      }
      reply.removeHeader('Connection');
      return reply.status(204).send();
    },
  },
  {
    method: 'GET',
    url: '/api/v1/books/{id}/recommendations',
    auth: 'jwt',
    schema: { params: Type.Object({ id: Type.Integer() }), querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 25, default: 25 }) }) },
    handler: async (request, _reply, ctx) => {
      const { id } = request.params as { id: number };
      const { limit } = request.query as { limit: number };
      const principal = principalOf(request);
      await requireBookAccess(ctx, principal, id);
      return ctx.store.read(async (scope) => {
        const recommended = await recommendBooks(scope, principal, id, limit);
        const found = await booksJson(ctx.store, recommended.map((r) => r.bookId), {
          principal,
          listView: false,
          withDescription: false,
          user: { reading: false, unsetWithoutProgress: false, emptyShelves: 'empty' },
        }, scope);
        const books = new Map(found.map((book) => [book.id as number, book]));
        return recommended.flatMap((r) => {
          const book = books.get(r.bookId);
          return book ? [{ book, similarityScore: r.similarityScore }] : [];
        });
      });
    },
  },
];
