/** Why a file could not be read; every reason is a per-file error, never a crash. */
export type FormatErrorCode =
  | 'EMPTY' // zero-byte file or folder with no usable content
  | 'CORRUPT' // truncated or malformed container/structure
  | 'UNSAFE' // path traversal, absolute entry names, external entities
  | 'TOO_LARGE' // decompression bomb, oversized entry or image
  | 'UNSUPPORTED' // recognisable but not a variant we read (e.g. DRM)
  | 'IO'; // the file could not be read from disk

export class FormatError extends Error {
  readonly code: FormatErrorCode;
  constructor(code: FormatErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FormatError';
    this.code = code;
  }
}

/** Wraps anything thrown by a parser into a FormatError, keeping FormatErrors as they are. */
export function asFormatError(error: unknown, fallback: FormatErrorCode = 'CORRUPT'): FormatError {
  if (error instanceof FormatError) return error;
  const err = error as NodeJS.ErrnoException;
  if (err && typeof err.code === 'string' && /^E[A-Z]+$/.test(err.code) && err.syscall) {
    return new FormatError('IO', `${err.code}: ${err.message}`, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new FormatError(fallback, message, { cause: error });
}
