// Komga's DTOs (its OpenAPI `components.schemas`) built from Bindery's catalog, Spring-style pages, and clean mode.
// Every field Komga's schema requires is always present (Mihon's deserializer rejects a missing non-null field);
// see docs/komga.md for where this departs from Grimmory.
import type { KomgaBookRow, KomgaSeries, LibraryRow, ShelfRow } from './catalog.ts';
import { bookName } from './catalog.ts';

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

/** `yyyy-MM-dd` when the stored date has at least a year; undefined otherwise. */
export function releaseDate(value: string | null): string | undefined {
  if (!value) return undefined;
  const full = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
  if (full) return `${full[1]}-${full[2]}-${full[3]}`;
  const year = /^(\d{4})/.exec(value);
  return year ? `${year[1]}-01-01` : undefined;
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

export interface BookContext {
  seriesId: string;
  seriesTitle: string;
  oneshot: boolean;
}

export function bookDto(row: KomgaBookRow, series: BookContext, links: Links): JsonObject {
  const created = instant(row.addedOn);
  const bytes = bytesOf(row);
  const isbn = row.isbn13 ?? row.isbn10 ?? '';
  const release = releaseDate(row.publishedDate);
  const title = bookName(row);
  const profile = MEDIA_PROFILES[row.bookType ?? ''] ?? 'EPUB';
  return {
    id: String(row.id),
    seriesId: series.seriesId,
    seriesTitle: series.seriesTitle,
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
      pagesCount: row.pageCount ?? row.filePageCount ?? 0,
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
      ...(release ? { releaseDate: release } : {}),
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
    deleted: false,
    fileHash: row.hash ?? '',
    oneshot: series.oneshot,
  };
}

export function seriesContext(series: KomgaSeries): BookContext {
  return { seriesId: series.id, seriesTitle: series.name, oneshot: series.books.length === 1 };
}

function latest(values: string[]): string {
  return values.reduce((a, b) => (b > a ? b : a), new Date(0).toISOString());
}

function earliest(values: string[]): string {
  return values.reduce((a, b) => (b < a ? b : a), values[0] ?? new Date(0).toISOString());
}

export function seriesDto(series: KomgaSeries, links: Links): JsonObject {
  const first = series.books[0];
  const dates = series.books.map((b) => instant(b.addedOn));
  const created = earliest(dates);
  const modified = latest(dates);
  const count = series.books.length;
  const authors = new Map<string, JsonObject>();
  for (const book of series.books) for (const a of authorsOf(book)) authors.set(String(a.name), a);
  const tags = [...new Set(series.books.flatMap((b) => b.tags))];
  const releases = series.books.map((b) => releaseDate(b.publishedDate)).filter((d): d is string => d !== undefined).sort();
  const ageRating = first?.ageRating ?? null;
  return {
    id: series.id,
    libraryId: String(series.libraryId),
    name: series.name,
    url: `${links.apiRoot}/api/v1/series/${encodeURIComponent(series.id)}`,
    created,
    lastModified: modified,
    fileLastModified: modified,
    booksCount: count,
    booksReadCount: 0,
    booksUnreadCount: count,
    booksInProgressCount: 0,
    metadata: {
      status: 'ONGOING',
      statusLock: false,
      title: series.name,
      titleLock: false,
      titleSort: series.name,
      titleSortLock: false,
      summary: first?.description ?? '',
      summaryLock: false,
      readingDirection: 'LEFT_TO_RIGHT',
      readingDirectionLock: false,
      publisher: first?.publisher ?? '',
      publisherLock: false,
      ...(ageRating !== null ? { ageRating } : {}),
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
      authors: [...authors.values()],
      tags,
      ...(releases[0] ? { releaseDate: releases[0] } : {}),
      summary: first?.description ?? '',
      summaryNumber: first ? numberString(first.seriesNumber) : '',
      created,
      lastModified: modified,
    },
    deleted: false,
    oneshot: count === 1,
  };
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
    unavailable: false,
  };
}

/** A shelf as a Komga collection: the series (as the reader sees them) of the shelf's visible books. */
export function collectionDto(shelf: ShelfRow, seriesIdOfBook: ReadonlyMap<number, string>, createdDate: string): JsonObject {
  const seriesIds = [...new Set(shelf.bookIds.flatMap((id) => seriesIdOfBook.get(id) ?? []))];
  return { id: String(shelf.id), name: shelf.name, ordered: false, seriesIds, createdDate, lastModifiedDate: createdDate, filtered: false };
}

export function userDto(opdsUserId: number, username: string, sharedLibraryIds: number[] | 'all'): JsonObject {
  return {
    id: String(opdsUserId),
    email: `${username}@booklore.local`,
    roles: ['USER'],
    sharedAllLibraries: sharedLibraryIds === 'all',
    sharedLibrariesIds: sharedLibraryIds === 'all' ? [] : sharedLibraryIds.map(String),
    labelsAllow: [],
    labelsExclude: [],
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

/** Spring's `Page` as Komga serializes it, `pageable` and `sort` included. */
export function pageOf<T extends Json>(items: readonly T[], request: PageRequest): JsonObject {
  const total = items.length;
  const sort = { empty: true, sorted: false, unsorted: true };
  if (request.unpaged) {
    return {
      content: [...items],
      pageable: { sort, offset: 0, pageNumber: 0, pageSize: total, paged: false, unpaged: true },
      totalElements: total,
      totalPages: 1,
      last: true,
      size: total,
      number: 0,
      sort,
      first: true,
      numberOfElements: total,
      empty: total === 0,
    };
  }
  const offset = request.page * request.size;
  const content = items.slice(offset, offset + request.size);
  const totalPages = Math.ceil(total / request.size);
  return {
    content,
    pageable: { sort, offset, pageNumber: request.page, pageSize: request.size, paged: true, unpaged: false },
    totalElements: total,
    totalPages,
    last: request.page + 1 >= totalPages,
    size: request.size,
    number: request.page,
    sort,
    first: request.page === 0,
    numberOfElements: content.length,
    empty: content.length === 0,
  };
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
