// Why a sidecar operation refused; routes and the CLI map each code to their transport.
import { CodedError } from '../coded-error.ts';

export type SidecarErrorCode =
  /** No such book or library. */
  | 'BOOK_NOT_FOUND'
  | 'LIBRARY_NOT_FOUND'
  /** The book has no file on disk to put a sidecar beside (a physical book, a missing file or library folder). */
  | 'NO_BOOK_FILE'
  /** Import asked for, but there is no sidecar file. */
  | 'SIDECAR_NOT_FOUND'
  /** The sidecar file is not one: bad JSON, wrong types, too large, not a regular file. */
  | 'SIDECAR_INVALID'
  /** Writing sidecars is turned off in the metadata persistence settings. */
  | 'SIDECARS_DISABLED'
  /** Reading or writing a file failed. */
  | 'IO';

export class SidecarError extends CodedError<SidecarErrorCode> {}
