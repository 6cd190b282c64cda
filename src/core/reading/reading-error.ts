// Why a reading-state change was refused; routes turn the code into an HTTP status.
export type ReadingErrorCode = 'BOOK_NOT_FOUND' | 'FILE_NOT_FOUND' | 'UNSUPPORTED_BOOK_TYPE' | 'INVALID';

export class ReadingError extends Error {
  override name = 'ReadingError';
  readonly code: ReadingErrorCode;
  constructor(code: ReadingErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}
