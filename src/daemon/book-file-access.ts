// A book's files for a caller who may see the book, and the one a `bookType` query names.
import { bookFiles, type BookFiles, type LocatedFile } from '../core/books/file-locations.ts';
import { BOOK_FILE_TYPES } from '../core/formats/types.ts';
import { requireBookAccess } from './access.ts';
import { principalOf } from './authenticate.ts';
import type { DaemonContext } from './context.ts';
import { ApiError, badRequest, bookNotFound } from './http-errors.ts';
import type { RouteRequest } from './route-spec.ts';

/** 403 for a hidden book, 404 for an unknown one; otherwise its files. */
export async function accessibleBookFiles(request: RouteRequest, ctx: DaemonContext, bookId: number): Promise<BookFiles> {
  await requireBookAccess(ctx, principalOf(request), bookId);
  const files = await bookFiles(ctx.store.db, bookId);
  if (!files) throw bookNotFound(bookId);
  return files;
}

/** The primary file, or the file of `bookType` (Grimmory's BookFileType names, any case) when one is asked for. */
export function fileOfType(files: BookFiles, bookType: string | undefined): LocatedFile | undefined {
  if (bookType === undefined || bookType === '') return files.primary;
  const wanted = bookType.toUpperCase();
  if (!(BOOK_FILE_TYPES as readonly string[]).includes(wanted)) throw badRequest(`No enum constant BookFileType.${wanted}`);
  const file = files.files.find((f) => f.bookType === wanted);
  if (!file) throw new ApiError(404, `File not found: No file of type ${bookType} found for book`);
  return file;
}
