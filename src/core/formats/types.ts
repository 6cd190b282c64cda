// The contract every format extractor fulfils: what a book file says about itself.

export const BOOK_FILE_TYPES = ['PDF', 'EPUB', 'CBX', 'FB2', 'MOBI', 'AZW3', 'AUDIOBOOK'] as const;
export type BookFileType = (typeof BOOK_FILE_TYPES)[number];

export const ARCHIVE_TYPES = ['ZIP', 'RAR', 'SEVEN_ZIP', 'UNKNOWN'] as const;
export type ArchiveType = (typeof ARCHIVE_TYPES)[number];

/** Metadata fields shared by every format; absent means "the file does not say". */
export interface ExtractedMetadata {
  title?: string;
  subtitle?: string;
  authors: string[];
  publisher?: string;
  /** ISO date `yyyy-MM-dd` (a bare year becomes `yyyy-01-01`). */
  publishedDate?: string;
  description?: string;
  /** BCP 47 / ISO 639 code as found in the file. */
  language?: string;
  isbn13?: string;
  isbn10?: string;
  asin?: string;
  googleId?: string;
  goodreadsId?: string;
  hardcoverId?: string;
  comicvineId?: string;
  /** Every identifier found, scheme (lower case) → value, including the ones above. */
  identifiers: Record<string, string>;
  seriesName?: string;
  seriesNumber?: number;
  seriesTotal?: number;
  categories: string[];
  tags: string[];
  pageCount?: number;
  narrator?: string;
  abridged?: boolean;
  rating?: number;
  ageRating?: number;
}

export interface ExtractedComic {
  issueNumber?: string;
  volumeName?: string;
  volumeNumber?: number;
  storyArc?: string;
  storyArcNumber?: number;
  alternateSeries?: string;
  alternateIssue?: string;
  writers: string[];
  pencillers: string[];
  inkers: string[];
  colorists: string[];
  letterers: string[];
  coverArtists: string[];
  editors: string[];
  imprint?: string;
  format?: string;
  blackAndWhite?: boolean;
  manga?: boolean;
  /** `ltr` or `rtl`. */
  readingDirection?: 'ltr' | 'rtl';
  characters: string[];
  teams: string[];
  locations: string[];
  webLink?: string;
  notes?: string;
}

export interface AudioChapter {
  index: number;
  title: string;
  startTimeMs: number;
  endTimeMs: number;
  durationMs: number;
}

export interface ExtractedAudio {
  durationSeconds?: number;
  bitrate?: number;
  sampleRate?: number;
  channels?: number;
  codec?: string;
  chapters: AudioChapter[];
}

/** Raw image bytes as found in (or rendered from) the book; the cover module normalises them. */
export interface ExtractedCover {
  data: Buffer;
  mime?: string;
}

export interface Extraction {
  bookType: BookFileType;
  archiveType?: ArchiveType;
  fixedLayout?: boolean;
  metadata: ExtractedMetadata;
  comic?: ExtractedComic;
  audio?: ExtractedAudio;
  cover?: ExtractedCover;
  /** Comic page entry names in reading order (natural sort of image entries). */
  pages?: string[];
  /** Problems that cost part of the metadata but not the book (e.g. a malformed ComicInfo.xml). */
  warnings?: string[];
}

export interface ExtractOptions {
  /** Skip reading/rendering the cover (e.g. an unchanged-cover rescan). */
  skipCover?: boolean;
  /**
   * Read with blocking calls where the extractor can (ZIP containers, audio files, PDFs read without pdf.js): for scan
   * worker threads, where nothing else waits on the thread and a trip through the thread pool costs more than the
   * small read it carries.
   */
  blocking?: boolean;
}

/**
 * Extract what a file (or, for folder audiobooks, a folder of tracks) says about itself.
 * Must never throw anything but a {@link FormatError} for bad input, and must stream rather than load whole books.
 */
export type Extractor = (path: string, options?: ExtractOptions) => Promise<Extraction>;

export function emptyMetadata(): ExtractedMetadata {
  return { authors: [], identifiers: {}, categories: [], tags: [] };
}

export function emptyComic(): ExtractedComic {
  return {
    writers: [], pencillers: [], inkers: [], colorists: [], letterers: [], coverArtists: [], editors: [],
    characters: [], teams: [], locations: [],
  };
}
