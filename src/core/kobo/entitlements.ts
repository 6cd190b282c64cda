// The JSON a device syncs: book entitlements, book metadata, removal notices and shelf tags, property by property in
// the order and spelling of Kobo's store API (UpperCamelCase).
import { koboFormat } from './compatibility.ts';
import { javaStringHash } from './java-hash.ts';
import type { KoboBook, KoboPrimaryFile } from './kobo-books.ts';
import { koboTimeOf } from './kobo-time.ts';
import type { KoboReadingState } from './reading-state.ts';
import type { KoboServerSettings } from './server-settings.ts';

export type Json = Record<string, unknown>;

/** What of the server's Kobo settings decides the format a download is announced in. */
type KoboFormatSettings = Pick<KoboServerSettings, 'convertToKepub' | 'conversionLimitInMb'>;

/** Kobo's "no genre / no category" id. */
export const DEFAULT_CATEGORY = '00000000-0000-0000-0000-000000000001';

/** Where a device fetches things from this server: `<base>/api/kobo/<token>`. */
export interface KoboUrls {
  /** Absolute URL of `/api/kobo/<token>` on this server, no trailing slash. */
  koboBase: string;
}

export function downloadUrl(urls: KoboUrls, bookId: number): string {
  return `${urls.koboBase}/v1/books/${bookId}/download`;
}

/**
 * A book's entitlement. `stamp` is the answer's instant as Kobo writes it (koboTimestamp), spelled once per answer:
 * a page writes a hundred of these.
 */
export function bookEntitlement(book: Pick<KoboBook, 'id' | 'created'>, removed: boolean, stamp: string): Json {
  const id = String(book.id);
  return {
    ActivePeriod: { From: stamp },
    IsRemoved: removed,
    Status: 'Active',
    Accessibility: 'Full',
    CrossRevisionId: id,
    RevisionId: id,
    IsHiddenFromArchive: false,
    Id: id,
    Created: book.created ?? stamp,
    LastModified: stamp,
    IsLocked: false,
    OriginCategory: 'Imported',
  };
}

/** `2001-05-17` as Grimmory writes a publication date (midnight UTC, seconds left out). */
function publicationDate(value: string | null): string | null {
  const day = value === null ? undefined : /^(\d{4}-\d{2}-\d{2})/.exec(value.trim())?.[1];
  return day ? `${day}T00:00Z` : null;
}

function seriesOf(book: KoboBook): Json {
  const name = book.seriesName?.trim() ? book.seriesName : undefined;
  if (!name) return { Id: '', Name: '', Number: '', NumberFloat: 0 };
  const number = book.seriesNumber ?? 1;
  return { Id: `series_${javaStringHash(name)}`, Name: name, Number: String(number), NumberFloat: number };
}

// What every BookMetadata holds alike, made once and shared (frozen): JSON.stringify writes a shared value as often
// as it meets it.
const NONE: readonly never[] = Object.freeze([]);
const DEFAULT_CATEGORIES = Object.freeze([DEFAULT_CATEGORY]);
const FREE = Object.freeze({ TotalAmount: 0, CurrencyCode: 'USD' });
const FREE_WITH_LOVE = Object.freeze({ TotalAmount: 0 });
const NO_PRONUNCIATIONS = Object.freeze({});

/** The metadata properties every BookMetadata carries, in Kobo's order, around the book-specific ones. */
function metadataShape(parts: {
  id: string;
  coverImageId: string | null;
  title: string | null;
  publisher?: Json | null;
  publicationDate?: string | null;
  language?: string;
  isbn?: string | null;
  genre?: string;
  slug?: string | null;
  description?: string | null;
  subtitle?: string | null;
  downloadUrls?: readonly Json[];
  contributors?: readonly string[];
  series?: Json | null;
}): Json {
  // One literal, so every BookMetadata has one shape: a Subtitle left undefined is left out by JSON.stringify.
  return {
    CrossRevisionId: parts.id,
    RevisionId: parts.id,
    Publisher: parts.publisher ?? null,
    PublicationDate: parts.publicationDate ?? null,
    Language: parts.language ?? 'en',
    Isbn: parts.isbn ?? null,
    Genre: parts.genre ?? DEFAULT_CATEGORY,
    Slug: parts.slug ?? null,
    CoverImageId: parts.coverImageId,
    IsSocialEnabled: true,
    WorkId: parts.id,
    ExternalIds: NONE,
    IsPreOrder: false,
    ContributorRoles: NONE,
    IsInternetArchive: false,
    EntitlementId: parts.id,
    Title: parts.title,
    Description: parts.description ?? null,
    Subtitle: parts.subtitle ?? undefined,
    Categories: DEFAULT_CATEGORIES,
    DownloadUrls: parts.downloadUrls ?? NONE,
    Contributors: parts.contributors ?? NONE,
    Series: parts.series ?? null,
    CurrentDisplayPrice: FREE,
    CurrentLoveDisplayPrice: FREE_WITH_LOVE,
    IsEligibleForKoboLove: false,
    PhoneticPronunciations: NO_PRONUNCIATIONS,
  };
}

/** The file the device downloads: its format and, for an unconverted file, its size. */
function downloadEntry(book: KoboBook, primary: KoboPrimaryFile, settings: KoboFormatSettings, urls: KoboUrls): Json {
  return {
    DrmType: 'None',
    Format: koboFormat(primary, settings),
    Url: downloadUrl(urls, book.id),
    Size: (primary.sizeKb ?? 0) * 1024,
    Platform: 'Generic',
  };
}

export function bookMetadata(book: KoboBook, settings: KoboFormatSettings, urls: KoboUrls): Json {
  return metadataShape({
    id: String(book.id),
    coverImageId: book.coverHash,
    title: book.title,
    publisher: book.publisher === null ? {} : { Name: book.publisher, Imprint: book.publisher },
    publicationDate: publicationDate(book.publishedDate),
    language: book.language?.trim() || 'en',
    isbn: book.isbn13 ?? book.isbn10,
    genre: book.genre ?? DEFAULT_CATEGORY,
    slug: book.title === null ? null : book.title.toLowerCase().replace(/[^a-z0-9]/g, '-'),
    description: book.description,
    subtitle: book.subtitle,
    downloadUrls: book.primary ? [downloadEntry(book, book.primary, settings, urls)] : [],
    contributors: book.authors,
    series: seriesOf(book),
  });
}

/**
 * A book new to the device, with its metadata (bookMetadata) and reading state, whose properties must be in Kobo's
 * order (orderedState; initialStates writes them so). `stamp` as for bookEntitlement.
 */
export function newEntitlement(book: KoboBook, metadata: Json, readingState: KoboReadingState, stamp: string): Json {
  return { NewEntitlement: { BookEntitlement: bookEntitlement(book, false, stamp), BookMetadata: metadata, ReadingState: readingState } };
}

/** A book the device has, in a new state (file, metadata or cover), with its metadata (bookMetadata). */
export function changedMetadata(book: KoboBook, metadata: Json, stamp: string): Json {
  return { ChangedProductMetadata: { BookEntitlement: bookEntitlement(book, false, stamp), BookMetadata: metadata } };
}

/** A book the device should drop: its entitlement marked removed, with just enough metadata to name it. */
export function removedEntitlement(bookId: number, addedOn: string | null, coverHash: string | null, stamp: string): Json {
  const id = String(bookId);
  return {
    ChangedEntitlement: {
      BookEntitlement: bookEntitlement({ id: bookId, created: koboTimeOf(addedOn) }, true, stamp),
      BookMetadata: metadataShape({ id, coverImageId: coverHash, title: id }),
    },
  };
}

export function changedReadingState(state: KoboReadingState): Json {
  return { ChangedReadingState: { ReadingState: state } };
}

export interface TagInput {
  id: string;
  name: string;
  created?: string | null;
  lastModified?: string | null;
  bookIds: readonly number[];
}

/** A shelf as a device collection; a shelf with none of the synced books is deleted from the device instead. */
export function tagEntry(tag: TagInput): Json {
  const withTimes = (base: Json): Json => {
    if (tag.created) base.Created = tag.created;
    if (tag.lastModified) base.LastModified = tag.lastModified;
    return base;
  };
  if (tag.bookIds.length === 0) {
    const deleted: Json = { Id: tag.id };
    if (tag.lastModified) deleted.LastModified = tag.lastModified;
    return { DeletedTag: { Tag: deleted } };
  }
  const body = withTimes({});
  return {
    ChangedTag: {
      Tag: {
        ...body,
        Id: tag.id,
        Name: tag.name,
        Type: 'UserTag',
        Items: tag.bookIds.map((id) => ({ RevisionId: String(id), Type: 'ProductRevisionTagItem' })),
      },
    },
  };
}

