// Why a reading-state change was refused; routes turn the code into an HTTP status.
import { CodedError } from '../coded-error.ts';
export type ReadingErrorCode = 'BOOK_NOT_FOUND' | 'FILE_NOT_FOUND' | 'UNSUPPORTED_BOOK_TYPE' | 'INVALID';

export class ReadingError extends CodedError<ReadingErrorCode> {}
