// Komga's DTOs built from Bindery's catalog, Spring-style pages, and clean mode. Like Komga, every property of a DTO is
// sent, `null` when unknown: strict clients (Komelia's kotlinx decoder with explicitNulls) reject a missing key even
// where the value may be null. See docs/komga.md for where this departs from Grimmory.
import type { KomgaBookRow, LibraryRow } from './catalog.ts';
import { bookName } from './catalog.ts';
import { komgaPage, type BookProgress } from './read-progress.ts';
import type { BookSeries, SeriesSummary } from './series.ts';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

export interface Links {
  /** Absolute or root-relative URL of the Komga API root (`…/komga`), without a trailing slash. */
  apiRoot: string;
}

/** Stored instants are ISO strings; anything unparsable becomes the epoch rather than an invalid date-time. */
export function instant(value: string | null | undefined): string {
  if (!value) return new Date(0).toISOString();
  const date = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
  return Number.isNaN(date.getTime()) ? new Date(0).toISOString() : date.toISOString();
}

/** `yyyy-MM-dd` when the stored date has at least a year; null otherwise (Komga's `LocalDate?`). */
export function releaseDate(value: string | null): string | null {
  if (!value) return null;
  const full = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
  if (full) return `${full[1]}-${full[2]}-${full[3]}`;
  const year = /^(\d{4})/.exec(value);
  return year ? `${year[1]}-01-01` : null;
}

const MEDIA_TYPES: Record<string, string> = {
  PDF: 'application/pdf',
  EPUB: 'application/epub+zip',
  CBX: 'application/x-cbz',
  FB2: 'application/fictionbook2+zip',
  MOBI: 'application/x-mobipocket-ebook',
  AZW3: 'application/vnd.amazon.ebook',
  AUDIOBOOK: 'audio/*',
};

const MEDIA_PROFILES: Record<string, string> = { PDF: 'PDF', EPUB: 'EPUB', MOBI: 'EPUB', AZW3: 'EPUB', CBX: 'DIVINA', FB2: 'DIVINA', AUDIOBOOK: 'AUDIOBOOK' };

export function mediaType(bookType: string | null): string {
  return MEDIA_TYPES[bookType ?? ''] ?? 'application/octet-stream';
}

/** Human size as Grimmory writes it: integer division, B / KB / MB / GB. */
export function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.floor(bytes / 1024)} KB`;
  if (bytes < 1024 * 1024 * 1024) return `${Math.floor(bytes / (1024 * 1024))} MB`;
  return `${Math.floor(bytes / (1024 * 1024 * 1024))} GB`;
}

function bytesOf(row: KomgaBookRow): number {
  if (row.sizeBytes !== null && row.sizeBytes >= 0) return row.sizeBytes;
  return Math.max(0, Math.round((row.fileSizeKb ?? 0) * 1024));
}

/** Series number as Java's Float.toString writes whole numbers (`1.0`), default `1.0`. */
function numberString(n: number | null): string {
  const value = n ?? 1;
  return Number.isInteger(value) ? `${value}.0` : String(value);
}

function authorsOf(row: KomgaBookRow): JsonObject[] {
  return row.authors.map((name) => ({ name, role: 'writer' }));
}

/** Komga's ReadProgressDto; Bindery has no device of its own, so a KOReader device is named when there is one. */
export function readProgressDto(progress: BookProgress, pagesCount: number): JsonObject {
  const epoch = new Date(0).toISOString();
  return {
    page: komgaPage(progress, pagesCount),
    completed: progress.state === 'READ',
    readDate: instant(progress.readDate ?? epoch),
    created: instant(progress.created ?? progress.readDate ?? epoch),
    lastModified: instant(progress.lastModified ?? progress.readDate ?? epoch),
    deviceId: progress.deviceId,
    deviceName: progress.device,
  };
}

export function pagesCountOf(row: KomgaBookRow): number {
  return row.pageCount ?? row.filePageCount ?? 0;
}

export function bookDto(row: KomgaBookRow, series: BookSeries, links: Links, progress?: BookProgress): JsonObject {
  const created = instant(row.addedOn);
  const bytes = bytesOf(row);
  const isbn = row.isbn13 ?? row.isbn10 ?? '';
  const title = bookName(row);
  const profile = MEDIA_PROFILES[row.bookType ?? ''] ?? 'EPUB';
  return {
    id: String(row.id),
    seriesId: series.id,
    seriesTitle: series.title,
    libraryId: String(row.libraryId),
    name: title,
    url: `${links.apiRoot}/api/v1/books/${row.id}/file`,
    number: Math.trunc(row.seriesNumber ?? 1),
    created,
    lastModified: created,
    fileLastModified: created,
    sizeBytes: bytes,
    size: humanSize(bytes),
    media: {
      status: 'READY',
      mediaType: mediaType(row.bookType),
      mediaProfile: profile,
      pagesCount: pagesCountOf(row),
      comment: '',
      epubDivinaCompatible: false,
      epubIsKepub: false,
    },
    metadata: {
      title,
      titleLock: false,
      summary: row.description ?? '',
      summaryLock: false,
      number: numberString(row.seriesNumber),
      numberLock: false,
      numberSort: row.seriesNumber ?? 1,
      numberSortLock: false,
      releaseDate: releaseDate(row.publishedDate),
      releaseDateLock: false,
      authors: authorsOf(row),
      authorsLock: false,
      tags: row.tags,
      tagsLock: false,
      isbn,
      isbnLock: false,
      links: [],
      linksLock: false,
      created,
      lastModified: created,
    },
    readProgress: progress && progress.state !== 'UNREAD' ? readProgressDto(progress, pagesCountOf(row)) : null,
    deleted: false,
    fileHash: row.hash ?? '',
    oneshot: series.oneshot,
  };
}

/** A SeriesDto's first fields: the series, its link, dates and counts (the reader's among them). */
function seriesLead(summary: SeriesSummary, links: Links): JsonObject {
  const { ref, count } = summary;
  const modified = instant(summary.modified);
  return {
    id: ref.id,
    libraryId: String(ref.libraryId),
    name: ref.name,
    url: `${links.apiRoot}/api/v1/series/${encodeURIComponent(ref.id)}`,
    created: instant(summary.created),
    lastModified: modified,
    fileLastModified: modified,
    booksCount: count,
    booksReadCount: summary.read,
    booksUnreadCount: Math.max(0, count - summary.read - summary.inProgress),
    booksInProgressCount: summary.inProgress,
  };
}

/** The first fields of a SeriesDto's metadata, up to its sort title (the series' name as the reader's list spells it). */
const metadataLead = (name: string): JsonObject => ({ status: 'ONGOING', statusLock: false, title: name, titleLock: false, titleSort: name });

/** A SeriesDto from the series' summary and its first book (in series order). */
export function seriesDto(summary: SeriesSummary, first: KomgaBookRow | undefined, links: Links): JsonObject {
  const { ref, count } = summary;
  const created = instant(summary.created);
  const modified = instant(summary.modified);
  const ageRating = first?.ageRating ?? null;
  return {
    ...seriesLead(summary, links),
    metadata: {
      ...metadataLead(ref.name),
      titleSortLock: false,
      summary: first?.description ?? '',
      summaryLock: false,
      readingDirection: 'LEFT_TO_RIGHT',
      readingDirectionLock: false,
      publisher: first?.publisher ?? '',
      publisherLock: false,
      ageRating,
      ageRatingLock: false,
      language: first?.language ?? 'en',
      languageLock: false,
      genres: first?.categories ?? [],
      genresLock: false,
      tags: first?.tags ?? [],
      tagsLock: false,
      totalBookCount: count,
      totalBookCountLock: false,
      alternateTitles: [],
      alternateTitlesLock: false,
      links: [],
      linksLock: false,
      sharingLabels: [],
      sharingLabelsLock: false,
      created,
      lastModified: modified,
    },
    booksMetadata: {
      authors: summary.authors.map((name) => ({ name, role: 'writer' })),
      tags: summary.tags,
      releaseDate: releaseDate(summary.release),
      summary: first?.description ?? '',
      summaryNumber: first ? numberString(first.seriesNumber) : '',
      created,
      lastModified: modified,
    },
    deleted: false,
    oneshot: count === 1,
  };
}

/**
 * The JSON of a SeriesDto's fields up to its metadata's sort title: all that depends on who reads it (their counts,
 * the list's spelling of the name) and on the link root. seriesDtoTail gives the rest.
 */
export function seriesDtoLead(summary: SeriesSummary, links: Links): string {
  return `${JSON.stringify(seriesLead(summary, links)).slice(0, -1)},"metadata":${JSON.stringify(metadataLead(summary.ref.name)).slice(0, -1)}`;
}

/**
 * The JSON of a SeriesDto after seriesDtoLead's part: the same for every reader of the series, so it may be kept and
 * put after any reader's lead (seriesDtoLead(summary, links) + tail is JSON.stringify(seriesDto(summary, first, links))).
 */
export function seriesDtoTail(summary: SeriesSummary, first: KomgaBookRow | undefined): string {
  const links = { apiRoot: '' };
  const whole = JSON.stringify(seriesDto(summary, first, links));
  const lead = seriesDtoLead(summary, links);
  if (!whole.startsWith(lead)) throw new Error(`the SeriesDto of ${summary.ref.id} does not start with its lead`);
  return whole.slice(lead.length);
}

export function libraryDto(library: LibraryRow): JsonObject {
  return {
    id: String(library.id),
    name: library.name,
    root: library.root,
    importComicInfoBook: true,
    importComicInfoSeries: true,
    importComicInfoCollection: true,
    importComicInfoReadList: true,
    importComicInfoSeriesAppendVolume: false,
    importEpubBook: true,
    importEpubSeries: true,
    importMylarSeries: true,
    importLocalArtwork: true,
    importBarcodeIsbn: true,
    scanForceModifiedTime: false,
    scanInterval: 'EVERY_6H',
    scanOnStartup: false,
    scanCbx: true,
    scanPdf: true,
    scanEpub: true,
    scanDirectoryExclusions: [],
    repairExtensions: false,
    convertToCbz: false,
    emptyTrashAfterScan: false,
    seriesCover: 'FIRST',
    hashFiles: true,
    hashPages: false,
    hashKoreader: false,
    analyzeDimensions: true,
    oneshotsDirectory: null,
    unavailable: false,
  };
}

/** Komga's PageDto: a page of a comic or PDF; sizes in pixels and bytes are null when not known. */
export function pageDto(page: { number: number; fileName: string; mediaType: string; sizeBytes?: number }, dimension?: { width: number; height: number }): JsonObject {
  const known = dimension !== undefined && dimension.width > 0 && dimension.height > 0;
  return {
    number: page.number,
    fileName: page.fileName,
    mediaType: page.mediaType,
    width: known ? dimension.width : null,
    height: known ? dimension.height : null,
    sizeBytes: page.sizeBytes ?? null,
    size: page.sizeBytes === undefined ? '' : humanSize(page.sizeBytes),
  };
}

export interface CollectionRow {
  /** `12` for a shelf, `magic-12` for a magic shelf. */
  id: string;
  name: string;
  seriesIds: string[];
  created: string;
  modified: string;
  /** Some books of the collection are hidden from the reader. */
  filtered: boolean;
}

export function collectionDto(collection: CollectionRow): JsonObject {
  return {
    id: collection.id,
    name: collection.name,
    ordered: false,
    seriesIds: collection.seriesIds,
    createdDate: instant(collection.created),
    lastModifiedDate: instant(collection.modified),
    filtered: collection.filtered,
  };
}

/**
 * The OPDS account as Komga's UserDto. Every account may download files and stream pages (Komga's FILE_DOWNLOAD and
 * PAGE_STREAMING roles, which Komelia checks before offering its reader and downloads); content restrictions are
 * applied by the server, so no age restriction is announced.
 */
export function userDto(opdsUserId: number, username: string, sharedLibraryIds: number[] | 'all'): JsonObject {
  return {
    id: String(opdsUserId),
    email: `${username}@booklore.local`,
    roles: ['USER', 'FILE_DOWNLOAD', 'PAGE_STREAMING'],
    sharedAllLibraries: sharedLibraryIds === 'all',
    sharedLibrariesIds: sharedLibraryIds === 'all' ? [] : sharedLibraryIds.map(String),
    labelsAllow: [],
    labelsExclude: [],
    ageRestriction: null,
  };
}

export interface PageRequest {
  page: number;
  size: number;
  unpaged: boolean;
}

/** `page` (0-based, default 0), `size` (default 20, 1…1000), `unpaged`; bad values fall back to the defaults. */
export function pageRequest(query: Record<string, unknown>, allowUnpaged = true): PageRequest {
  const int = (value: unknown, fallback: number, min: number, max: number): number => {
    const text = Array.isArray(value) ? value[0] : value;
    if (typeof text !== 'string' || !/^\d{1,9}$/.test(text)) return fallback;
    return Math.min(max, Math.max(min, Number(text)));
  };
  const flag = Array.isArray(query.unpaged) ? query.unpaged[0] : query.unpaged;
  return { page: int(query.page, 0, 0, 1_000_000), size: int(query.size, 20, 1, 1000), unpaged: allowUnpaged && (flag === '' || flag === 'true') };
}

/** The slice of a list a page request asks for (everything when unpaged). */
export function sliceOf(request: PageRequest): { offset: number; limit: number } | 'all' {
  return request.unpaged ? 'all' : { offset: request.page * request.size, limit: request.size };
}

/** Spring's `Page` as Komga serializes it after its content, for a page of `count` items of a list of `total`. */
function pageFields(count: number, total: number, request: PageRequest, sorted: boolean): JsonObject {
  const sort = { empty: !sorted, sorted, unsorted: !sorted };
  if (request.unpaged) {
    return {
      pageable: { sort, offset: 0, pageNumber: 0, pageSize: total, paged: false, unpaged: true },
      totalElements: total,
      totalPages: 1,
      last: true,
      size: total,
      number: 0,
      sort,
      first: true,
      numberOfElements: count,
      empty: count === 0,
    };
  }
  const totalPages = Math.ceil(total / request.size);
  return {
    pageable: { sort, offset: request.page * request.size, pageNumber: request.page, pageSize: request.size, paged: true, unpaged: false },
    totalElements: total,
    totalPages,
    last: request.page + 1 >= totalPages,
    size: request.size,
    number: request.page,
    sort,
    first: request.page === 0,
    numberOfElements: count,
    empty: count === 0,
  };
}

/** Spring's `Page` as Komga serializes it, `pageable` and `sort` included, for a page of a list of `total` items. */
export function pageEnvelope<T extends Json>(content: readonly T[], total: number, request: PageRequest, sorted = false): JsonObject {
  return { content: [...content], ...pageFields(content.length, total, request, sorted) };
}

/** An answer already written as JSON: sent as it is. */
export class JsonText {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** pageEnvelope's JSON for content already written as JSON, one text per item. */
export function pageEnvelopeText(content: readonly string[], total: number, request: PageRequest, sorted = false): JsonText {
  return new JsonText(`{"content":[${content.join(',')}],${JSON.stringify(pageFields(content.length, total, request, sorted)).slice(1)}`);
}

/** A page of a list held in memory. */
export function pageOf<T extends Json>(items: readonly T[], request: PageRequest): JsonObject {
  const slice = sliceOf(request);
  return pageEnvelope(slice === 'all' ? items : items.slice(slice.offset, slice.offset + slice.limit), items.length, request);
}

/**
 * Clean mode (`?clean`, `?clean=true`): properties whose name ends in `Lock`, nulls and empty arrays are dropped and
 * empty strings count as null. Applied recursively.
 */
export function cleaned(value: Json): Json {
  if (Array.isArray(value)) return value.map(cleaned);
  if (value === null || typeof value !== 'object') return value;
  const out: JsonObject = {};
  for (const [key, v] of Object.entries(value)) {
    if (key.endsWith('Lock') || v === null || v === '') continue;
    // A page's `content` stays, even when empty: it is the envelope, not a property of a DTO.
    if (Array.isArray(v) && v.length === 0 && key !== 'content') continue;
    out[key] = cleaned(v);
  }
  return out;
}

export function isCleanMode(query: Record<string, unknown>): boolean {
  const value = Array.isArray(query.clean) ? query.clean[0] : query.clean;
  return value === '' || value === 'true';
}
