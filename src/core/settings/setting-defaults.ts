// The values a fresh install reports (and stores on first read) for the JSON settings.
import { REFRESH_FIELDS } from './setting-shapes.ts';

/** Core fields ask GoodReads, then Google; ids, ratings, moods and tags ask no provider. */
const PROVIDER_BACKED = new Set(['title', 'subtitle', 'description', 'authors', 'publisher', 'publishedDate', 'seriesName', 'seriesNumber', 'seriesTotal', 'isbn13', 'isbn10', 'language', 'categories', 'cover', 'pageCount']);
const DISABLED_BY_DEFAULT = new Set(['ranobedbId', 'ranobedbRating']);

export function defaultMetadataRefreshOptions(): Record<string, unknown> {
  return {
    libraryId: null,
    refreshCovers: false,
    mergeCategories: true,
    reviewBeforeApply: false,
    replaceMode: 'REPLACE_MISSING',
    fieldOptions: Object.fromEntries(
      REFRESH_FIELDS.map((f) => [f, PROVIDER_BACKED.has(f) ? { p1: 'GoodReads', p2: 'Google', p3: null, p4: null } : { p1: null, p2: null, p3: null, p4: null }]),
    ),
    enabledFields: Object.fromEntries(REFRESH_FIELDS.map((f) => [f, !DISABLED_BY_DEFAULT.has(f)])),
  };
}

export function defaultMetadataProviderSettings(): Record<string, unknown> {
  return {
    amazon: { enabled: true, cookie: null, domain: 'com' },
    google: { enabled: true, language: null, apiKey: null },
    goodReads: { enabled: true },
    hardcover: { enabled: false, apiKey: null },
    comicvine: { enabled: false, apiKey: null },
    ranobedb: { enabled: false },
    douban: { enabled: false },
    lubimyczytac: null,
    audible: null,
    openLibrary: { enabled: true },
  };
}

export function defaultMetadataPersistenceSettings(): Record<string, unknown> {
  const format = (): Record<string, unknown> => ({ enabled: false, maxFileSizeInMb: 250 });
  return {
    saveToOriginalFile: { epub: format(), pdf: format(), cbx: format(), audiobook: format() },
    convertCbrCb7ToCbz: false,
    moveFilesToLibraryPattern: false,
    sidecarSettings: null,
  };
}

export function defaultMetadataPublicReviewsSettings(): Record<string, unknown> {
  return {
    downloadEnabled: true,
    autoDownloadEnabled: false,
    providers: [
      { provider: 'Amazon', enabled: true, maxReviews: 5 },
      { provider: 'GoodReads', enabled: false, maxReviews: 5 },
      { provider: 'Douban', enabled: false, maxReviews: 5 },
    ],
  };
}

export function defaultCoverCroppingSettings(): Record<string, unknown> {
  return { verticalCroppingEnabled: false, horizontalCroppingEnabled: false, aspectRatioThreshold: 2.5, smartCroppingEnabled: false };
}

/** Every provider-specific field on, except `ranobedbId`, which Grimmory leaves unset. */
export function defaultMetadataProviderSpecificFields(): Record<string, unknown> {
  return {
    asin: true, amazonRating: true, amazonReviewCount: true, googleId: true, goodreadsId: true, goodreadsRating: true,
    goodreadsReviewCount: true, hardcoverId: true, hardcoverBookId: true, hardcoverRating: true, hardcoverReviewCount: true,
    comicvineId: true, lubimyczytacId: true, lubimyczytacRating: true, ranobedbRating: true, audibleId: true,
    audibleRating: true, audibleReviewCount: true,
  };
}

/** The mobile app's OIDC deep link. */
export const DEFAULT_MOBILE_REDIRECT_URI = 'grimmory://oauth2-callback';

export const DEFAULT_UPLOAD_PATTERN = '{authors}/<{series}/><{seriesIndex}. >/{title}/{title}< - {authors}>< ({year})>';
