// The Kobo entitlements as src/core/kobo/entitlements.ts built them up to 0155257 (a Date per call, each book's
// `added_on` spelled for each use, every constant part a new object, the reading state put in order): the reference
// the leaner code of a sync page must match byte for byte once serialized.
import { koboFormat } from '../../src/core/kobo/compatibility.ts';
import { DEFAULT_CATEGORY, type Json, type KoboUrls } from '../../src/core/kobo/entitlements.ts';
import { javaStringHash } from '../../src/core/kobo/java-hash.ts';
import type { KoboBook, KoboPrimaryFile } from '../../src/core/kobo/kobo-books.ts';

/** A book as loadKoboBooks read it up to 0155257: its catalog `added_on`. */
export type ReferenceBook = Omit<KoboBook, 'created'> & { addedOn: string };
import { koboTimeOf, koboTimestamp } from '../../src/core/kobo/kobo-time.ts';
import { orderedState, type KoboReadingState } from '../../src/core/kobo/reading-state.ts';
import type { KoboServerSettings } from '../../src/core/kobo/server-settings.ts';

type Settings = Pick<KoboServerSettings, 'convertToKepub' | 'conversionLimitInMb'>;

function bookEntitlement(book: Pick<ReferenceBook, 'id' | 'addedOn'>, removed: boolean, now: Date): Json {
  const id = String(book.id);
  const stamp = koboTimestamp(now);
  return {
    ActivePeriod: { From: stamp },
    IsRemoved: removed,
    Status: 'Active',
    Accessibility: 'Full',
    CrossRevisionId: id,
    RevisionId: id,
    IsHiddenFromArchive: false,
    Id: id,
    Created: koboTimeOf(book.addedOn) ?? koboTimestamp(now),
    LastModified: stamp,
    IsLocked: false,
    OriginCategory: 'Imported',
  };
}

function publicationDate(value: string | null): string | null {
  const day = value === null ? undefined : /^(\d{4}-\d{2}-\d{2})/.exec(value.trim())?.[1];
  return day ? `${day}T00:00Z` : null;
}

function seriesOf(book: ReferenceBook): Json {
  const name = book.seriesName?.trim() ? book.seriesName : undefined;
  if (!name) return { Id: '', Name: '', Number: '', NumberFloat: 0 };
  const number = book.seriesNumber ?? 1;
  return { Id: `series_${javaStringHash(name)}`, Name: name, Number: String(number), NumberFloat: number };
}

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
  downloadUrls?: Json[];
  contributors?: string[];
  series?: Json | null;
}): Json {
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
    ExternalIds: [],
    IsPreOrder: false,
    ContributorRoles: [],
    IsInternetArchive: false,
    EntitlementId: parts.id,
    Title: parts.title,
    Description: parts.description ?? null,
    Subtitle: parts.subtitle ?? undefined,
    Categories: [DEFAULT_CATEGORY],
    DownloadUrls: parts.downloadUrls ?? [],
    Contributors: parts.contributors ?? [],
    Series: parts.series ?? null,
    CurrentDisplayPrice: { TotalAmount: 0, CurrencyCode: 'USD' },
    CurrentLoveDisplayPrice: { TotalAmount: 0 },
    IsEligibleForKoboLove: false,
    PhoneticPronunciations: {},
  };
}

function downloadEntry(book: ReferenceBook, primary: KoboPrimaryFile, settings: Settings, urls: KoboUrls, size: number): Json {
  return { DrmType: 'None', Format: koboFormat(primary, settings), Url: `${urls.koboBase}/v1/books/${book.id}/download`, Size: size, Platform: 'Generic' };
}

/** `size` stands for what settleDownloadSizes set (the catalog's `sizeKb * 1024` until then). */
export function bookMetadataObject(book: ReferenceBook, settings: Settings, urls: KoboUrls, size: number): Json {
  const publisher: Json = {};
  if (book.publisher !== null) Object.assign(publisher, { Name: book.publisher, Imprint: book.publisher });
  return metadataShape({
    id: String(book.id),
    coverImageId: book.coverHash,
    title: book.title,
    publisher,
    publicationDate: publicationDate(book.publishedDate),
    language: book.language?.trim() || 'en',
    isbn: book.isbn13 ?? book.isbn10,
    genre: book.genre ?? DEFAULT_CATEGORY,
    slug: book.title === null ? null : book.title.toLowerCase().replace(/[^a-z0-9]/g, '-'),
    description: book.description,
    subtitle: book.subtitle,
    downloadUrls: book.primary ? [downloadEntry(book, book.primary, settings, urls, size)] : [],
    contributors: book.authors,
    series: seriesOf(book),
  });
}

export function newEntitlementObject(book: ReferenceBook, metadata: Json, readingState: KoboReadingState, now: Date): Json {
  return { NewEntitlement: { BookEntitlement: bookEntitlement(book, false, now), BookMetadata: metadata, ReadingState: orderedState(readingState) } };
}

export function changedMetadataObject(book: ReferenceBook, metadata: Json, now: Date): Json {
  return { ChangedProductMetadata: { BookEntitlement: bookEntitlement(book, false, now), BookMetadata: metadata } };
}

export function removedEntitlementObject(bookId: number, addedOn: string | null, coverHash: string | null, now: Date): Json {
  const id = String(bookId);
  return {
    ChangedEntitlement: {
      BookEntitlement: bookEntitlement({ id: bookId, addedOn: addedOn ?? '' }, true, now),
      BookMetadata: metadataShape({ id, coverImageId: coverHash, title: id }),
    },
  };
}
