// AdditionalFileController's upload and delete (listing, download and detach are in duplicates.ts and book-files.ts):
// a file streamed into the book's library folder within the upload size limit, then placed beside the book; a deleted
// file goes to the library's trash.
import Type from 'typebox';
import { addAdditionalFile, AdditionalFileError, removeAdditionalFile, uploadRootOf, type AdditionalFileErrorCode } from '../../core/books/additional-files.ts';
import { maxUploadMb } from '../../core/bookdrop/upload.ts';
import { listBookFiles } from '../../core/duplicates/merge.ts';
import { BOOK_FILE_TYPES, type BookFileType } from '../../core/formats/types.ts';
import { requireBookAccess } from '../access.ts';
import { principalOf } from '../authenticate.ts';
import { ApiError, bookNotFound } from '../http-errors.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';
import { readUpload } from './uploads.ts';

const STATUS: Record<AdditionalFileErrorCode, number> = {
  BOOK_NOT_FOUND: 404,
  FILE_NOT_FOUND: 400,
  PRIMARY: 400,
  BAD_NAME: 400,
  EMPTY: 400,
  UNSUPPORTED: 400,
  UNREADABLE: 400,
  DUPLICATE: 400,
  EXISTS: 409,
  INVALID_PATH: 400,
  NO_LIBRARY_PATH: 409,
  ROOT_UNAVAILABLE: 503,
  TRASH_FAILED: 500,
};

function asApiError(error: unknown): unknown {
  if (!(error instanceof AdditionalFileError)) return error;
  return new ApiError(STATUS[error.code], error.message);
}

const validation = (detail: string): ApiError => new ApiError(400, 'Validation error', [detail]);

/** Spring's boolean binding: true/false, on/off, yes/no, 1/0, any case. */
function booleanParam(name: string, raw: string | undefined): boolean | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = raw.trim().toLowerCase();
  if (['true', 'on', 'yes', '1'].includes(value)) return true;
  if (['false', 'off', 'no', '0'].includes(value)) return false;
  throw validation(`${name}: '${raw}' is not a boolean`);
}

function bookTypeParam(raw: string | undefined): BookFileType | null {
  if (raw === undefined || raw.trim() === '') return null;
  const value = raw.trim().toUpperCase();
  if (!(BOOK_FILE_TYPES as readonly string[]).includes(value)) throw validation(`bookType: '${raw}' is not one of ${BOOK_FILE_TYPES.join(', ')}`);
  return value as BookFileType;
}

const UploadQuery = Type.Object({ isBook: Type.Optional(Type.String()), bookType: Type.Optional(Type.String()), description: Type.Optional(Type.String()) });

export const additionalFileRoutes: RouteSpec[] = [
  {
    method: 'POST',
    url: '/api/v1/books/{bookId}/files',
    auth: 'jwt',
    rule: adminOr('canUpload'),
    multipart: true,
    schema: { params: Type.Object({ bookId: Type.Integer() }), querystring: UploadQuery },
    handler: async (request, _reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      const query = request.query as { isBook?: string; bookType?: string; description?: string };
      // Who may touch the book is settled before a byte of the body is written anywhere.
      await requireBookAccess(ctx, principalOf(request), bookId);
      const root = await uploadRootOf(ctx.store.db, bookId).catch((error: unknown) => {
        throw asApiError(error);
      });
      const limitMb = await maxUploadMb(ctx.store);
      const upload = await readUpload(request, limitMb, async () => root.path, ctx.store.liveness);
      const file = upload.file;
      const field = (name: 'isBook' | 'bookType' | 'description'): string | undefined => query[name] ?? upload.fields[name];
      let fileId: number;
      try {
        const isBook = booleanParam('isBook', field('isBook'));
        if (isBook === undefined) throw validation('isBook: must not be null');
        const description = field('description');
        fileId = await addAdditionalFile(ctx.store, bookId, file, { fileName: file.fileName, isBook, bookType: bookTypeParam(field('bookType')), description: description === undefined || description === '' ? null : description });
      } catch (error) {
        await import('node:fs/promises').then((fs) => fs.rm(file.path, { force: true }));
        throw asApiError(error);
      }
      ctx.log.info({ bookId, fileId, user: principalOf(request).username }, 'upload: additional file');
      const added = (await listBookFiles(ctx.store.db, bookId)).find((f) => f.id === fileId);
      if (!added) throw bookNotFound(bookId);
      return added;
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/books/{bookId}/files/{fileId}',
    auth: 'jwt',
    rule: adminOr('canDeleteBook'),
    schema: { params: Type.Object({ bookId: Type.Integer(), fileId: Type.Integer() }) },
    handler: async (request, reply, ctx) => {
      const { bookId, fileId } = request.params as { bookId: number; fileId: number };
      await requireBookAccess(ctx, principalOf(request), bookId);
      try {
        const { trashedTo } = await removeAdditionalFile(ctx.store.db, bookId, fileId);
        ctx.log.info({ bookId, fileId, trashedTo, user: principalOf(request).username }, 'additional file deleted');
      } catch (error) {
        throw asApiError(error);
      }
      return reply.status(204).send();
    },
  },
];
