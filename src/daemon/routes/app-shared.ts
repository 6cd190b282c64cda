// What the mobile-app route groups share: core refusals turned into Grimmory's statuses, and the paging parameters.
import Type from 'typebox';
import { ReaderNoteError } from '../../core/annotations/reader-note-error.ts';
import { AppError } from '../../core/app/app-error.ts';
import { ReadingError } from '../../core/reading/reading-error.ts';
import { ApiError } from '../http-errors.ts';

const APP_STATUS = { BAD_REQUEST: 400, FORBIDDEN: 403, NOT_FOUND: 404 } as const;
const NOTE_STATUS = { NOT_FOUND: 404, DUPLICATE: 409, INVALID: 400 } as const;

export function asApiError(error: unknown): unknown {
  if (error instanceof AppError) return new ApiError(APP_STATUS[error.code], error.message);
  if (error instanceof ReaderNoteError) return new ApiError(NOTE_STATUS[error.code], error.message);
  if (error instanceof ReadingError) return new ApiError(error.code === 'BOOK_NOT_FOUND' || error.code === 'FILE_NOT_FOUND' ? 404 : 400, error.message);
  return error;
}

/** Runs the work, answering the core's refusals with their status (sync or async work alike). */
export async function appWork<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asApiError(error);
  }
}

/** `page` and `size` as integers; out-of-range values are replaced by the defaults, not refused. */
export const PagingQuery = { page: Type.Optional(Type.Integer()), size: Type.Optional(Type.Integer()) };

export const BookIdParams = Type.Object({ bookId: Type.Integer() });
