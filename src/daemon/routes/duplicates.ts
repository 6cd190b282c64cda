// Duplicate detection and merging: BookController.findDuplicates / attachBookFiles, and the listing and detach
// operations of AdditionalFileController.
import Type from 'typebox';
import { bookJson } from '../../core/books/book-view.ts';
import { displayReason, findDuplicates } from '../../core/duplicates/find.ts';
import { attachBookFiles, detachBookFile, listBookFiles, MergeError } from '../../core/duplicates/merge.ts';
import type { Db } from '../../core/store/store.ts';
import { requireBookAccess } from '../access.ts';
import { principalOf } from '../authenticate.ts';
import { ApiError, badRequest, bookNotFound, forbidden } from '../http-errors.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

const DuplicateDetectionRequest = Type.Object({
  libraryId: Type.Integer(),
  matchByIsbn: Type.Optional(Type.Boolean()),
  matchByExternalId: Type.Optional(Type.Boolean()),
  matchByTitleAuthor: Type.Optional(Type.Boolean()),
  matchByDirectory: Type.Optional(Type.Boolean()),
  matchByFilename: Type.Optional(Type.Boolean()),
  // Bindery extension: identical file content; on by default whenever another strategy is on.
  matchByContent: Type.Optional(Type.Boolean()),
});

const AttachBookFileRequest = Type.Object({
  sourceBookIds: Type.Array(Type.Integer(), { minItems: 1 }),
  moveFiles: Type.Optional(Type.Boolean()),
});

const DetachBookFileRequest = Type.Object({ copyMetadata: Type.Optional(Type.Boolean()) });

const BookParams = Type.Object({ bookId: Type.Integer() });
const TargetParams = Type.Object({ targetBookId: Type.Integer() });
const FileParams = Type.Object({ bookId: Type.Integer(), fileId: Type.Integer() });
const FilesQuery = Type.Object({ isBook: Type.Optional(Type.Boolean()) });

function asApiError(error: unknown): unknown {
  if (!(error instanceof MergeError)) return error;
  if (error.code === 'NOT_FOUND') return error.bookId !== undefined ? bookNotFound(error.bookId) : new ApiError(404, error.message);
  if (error.code === 'HIDDEN') return forbidden(error.message);
  return badRequest(error.message);
}

async function bookOrThrow(db: Db, id: number): Promise<Record<string, unknown>> {
  const book = await bookJson(db, id);
  if (!book) throw bookNotFound(id);
  return book;
}

export const duplicateRoutes: RouteSpec[] = [
  {
    method: 'POST',
    url: '/api/v1/books/duplicates',
    auth: 'jwt',
    rule: adminOr('canManageLibrary'),
    schema: { body: DuplicateDetectionRequest },
    handler: async (request, _reply, ctx) => {
      const body = request.body as Parameters<typeof findDuplicates>[1];
      const found = await findDuplicates(ctx.store, body, principalOf(request));
      const out = [];
      for (const group of found.groups) {
        const books = [];
        for (const id of group.bookIds) {
          const book = await bookJson(ctx.store.db, id);
          if (book) books.push(book);
        }
        // The web UI only has texts for Grimmory's reasons; content identity is flagged beside it.
        const identical = group.matchReason === 'IDENTICAL_CONTENT' ? { identicalContent: true } : {};
        out.push({ suggestedTargetBookId: group.suggestedTargetBookId, matchReason: displayReason(group, found.books), ...identical, books });
      }
      return out;
    },
  },
  {
    method: 'POST',
    url: '/api/v1/books/{targetBookId}/attach-file',
    auth: 'jwt',
    rule: adminOr('canManageLibrary'),
    schema: { params: TargetParams, body: AttachBookFileRequest },
    handler: async (request, _reply, ctx) => {
      const { targetBookId } = request.params as { targetBookId: number };
      const body = request.body as { sourceBookIds: number[]; moveFiles?: boolean };
      try {
        const result = await attachBookFiles(ctx.store, targetBookId, body.sourceBookIds, { moveFiles: body.moveFiles ?? false, principal: principalOf(request) });
        return { updatedBook: await bookOrThrow(ctx.store.db, targetBookId), deletedSourceBookIds: result.deletedSourceBookIds };
      } catch (error) {
        throw asApiError(error);
      }
    },
  },
  {
    method: 'GET',
    url: '/api/v1/books/{bookId}/files',
    auth: 'jwt',
    schema: { params: BookParams, querystring: FilesQuery },
    handler: async (request, _reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      const { isBook } = request.query as { isBook?: boolean };
      await requireBookAccess(ctx, principalOf(request), bookId);
      return listBookFiles(ctx.store.db, bookId, isBook);
    },
  },
  {
    method: 'POST',
    url: '/api/v1/books/{bookId}/files/{fileId}/detach',
    auth: 'jwt',
    rule: adminOr('canManageLibrary'),
    schema: { params: FileParams, body: DetachBookFileRequest },
    handler: async (request, _reply, ctx) => {
      const { bookId, fileId } = request.params as { bookId: number; fileId: number };
      const { copyMetadata } = request.body as { copyMetadata?: boolean };
      try {
        const result = await detachBookFile(ctx.store, bookId, fileId, { copyMetadata: copyMetadata ?? false, principal: principalOf(request), coversRoot: ctx.paths.covers });
        return { sourceBook: await bookOrThrow(ctx.store.db, result.sourceBookId), newBook: await bookOrThrow(ctx.store.db, result.newBookId) };
      } catch (error) {
        throw asApiError(error);
      }
    },
  },
];
