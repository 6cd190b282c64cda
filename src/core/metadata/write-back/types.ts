// What write-back puts into a book file, and how it reports what happened.
import { CodedError } from '../../coded-error.ts';

export interface FileComicMetadata {
  issueNumber?: string;
  volumeNumber?: number;
  storyArc?: string;
  storyArcNumber?: number;
  alternateSeries?: string;
  alternateIssue?: string;
  imprint?: string;
  format?: string;
  blackAndWhite?: boolean;
  manga?: boolean;
  readingDirection?: string;
  webLink?: string;
  notes?: string;
  pencillers: string[];
  inkers: string[];
  colorists: string[];
  letterers: string[];
  coverArtists: string[];
  editors: string[];
  characters: string[];
  teams: string[];
  locations: string[];
}

/** A book's catalog metadata in the shape the format writers take; absent means "the catalog has nothing". */
export interface FileMetadata {
  title?: string;
  subtitle?: string;
  authors: string[];
  publisher?: string;
  /** `yyyy-MM-dd`. */
  publishedDate?: string;
  description?: string;
  language?: string;
  isbn13?: string;
  isbn10?: string;
  asin?: string;
  goodreadsId?: string;
  googleId?: string;
  hardcoverId?: string;
  hardcoverBookId?: string;
  comicvineId?: string;
  lubimyczytacId?: string;
  ranobedbId?: string;
  seriesName?: string;
  seriesNumber?: number;
  seriesTotal?: number;
  categories: string[];
  tags: string[];
  ageRating?: number;
  comic?: FileComicMetadata;
}

export type WriteBackFormat = 'epub' | 'pdf' | 'cbz';

export type WriteBackErrorCode =
  /** The file is a variant write-back does not handle (encrypted PDF, ZIP64, an unknown compression method). */
  | 'UNSUPPORTED'
  /** The file could not be understood well enough to change it safely. */
  | 'CORRUPT'
  /** The rewritten file did not read back as what was written; the original was kept. */
  | 'VERIFY_FAILED'
  /** The file changed on disk while it was being rewritten; the original (as changed) was kept. */
  | 'CONFLICT'
  | 'IO';

export class WriteBackError extends CodedError<WriteBackErrorCode> {}

export type WriteBackResult =
  | { status: 'written' }
  /** The file already says exactly this: nothing was written, not a byte. */
  | { status: 'unchanged' }
  | { status: 'skipped'; reason: string };

/** Test seams: each runs at its stage and may throw (or damage the temporary file) to prove the original survives. */
export interface WriteBackHooks {
  /** The new file is complete and synced beside the original, not yet verified. */
  afterTempWritten?(tempPath: string): Promise<void> | void;
  /** Verified; the rename over the original comes next. */
  beforeRename?(tempPath: string): Promise<void> | void;
}

export interface WriteBackOptions {
  /** Files larger than this are left alone (the per-format limit of the persistence settings). */
  maxFileBytes?: number;
  hooks?: WriteBackHooks;
}
