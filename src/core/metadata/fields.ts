// The metadata fields a provider can fill, each with its book_metadata column, its kind, the MetadataRefreshOptions
// key that enables it and gives its provider priority, and the provider that owns it (ids, ratings).
import type { ProviderId } from './provider.ts';

export type FieldKind = 'text' | 'date' | 'number' | 'integer' | 'boolean' | 'list' | 'cover';

export interface FieldSpec {
  /** BookMetadata (wire) property. */
  field: string;
  /** book_metadata column (lock flag: `<column>_locked`); lists and the cover have none of their own. */
  column?: string;
  lock: string;
  kind: FieldKind;
  /** The enabledFields/fieldOptions key; none = always enabled, taken from the owner. */
  option?: string;
  /** Used when fieldOptions names no provider for the field. */
  owner?: ProviderId;
}

const text = (field: string, column: string, option: string | undefined, owner?: ProviderId): FieldSpec => ({ field, column, lock: `${column}_locked`, kind: 'text', ...(option ? { option } : {}), ...(owner ? { owner } : {}) });
const num = (field: string, column: string, kind: 'number' | 'integer', option: string | undefined, owner?: ProviderId): FieldSpec => ({ field, column, lock: `${column}_locked`, kind, ...(option ? { option } : {}), ...(owner ? { owner } : {}) });

export const FIELD_SPECS: readonly FieldSpec[] = [
  text('title', 'title', 'title'),
  text('subtitle', 'subtitle', 'subtitle'),
  text('description', 'description', 'description'),
  { field: 'authors', lock: 'authors_locked', kind: 'list', option: 'authors' },
  text('publisher', 'publisher', 'publisher'),
  { field: 'publishedDate', column: 'published_date', lock: 'published_date_locked', kind: 'date', option: 'publishedDate' },
  text('seriesName', 'series_name', 'seriesName'),
  num('seriesNumber', 'series_number', 'number', 'seriesNumber'),
  num('seriesTotal', 'series_total', 'integer', 'seriesTotal'),
  text('isbn13', 'isbn_13', 'isbn13'),
  text('isbn10', 'isbn_10', 'isbn10'),
  text('language', 'language', 'language'),
  { field: 'categories', lock: 'categories_locked', kind: 'list', option: 'categories' },
  { field: 'thumbnailUrl', lock: 'cover_locked', kind: 'cover', option: 'cover' },
  num('pageCount', 'page_count', 'integer', 'pageCount'),
  text('asin', 'asin', 'asin', 'Amazon'),
  text('goodreadsId', 'goodreads_id', 'goodreadsId', 'GoodReads'),
  text('comicvineId', 'comicvine_id', 'comicvineId', 'Comicvine'),
  text('hardcoverId', 'hardcover_id', 'hardcoverId', 'Hardcover'),
  text('hardcoverBookId', 'hardcover_book_id', 'hardcoverBookId', 'Hardcover'),
  text('googleId', 'google_id', 'googleId', 'Google'),
  text('lubimyczytacId', 'lubimyczytac_id', 'lubimyczytacId', 'Lubimyczytac'),
  num('amazonRating', 'amazon_rating', 'number', 'amazonRating', 'Amazon'),
  num('amazonReviewCount', 'amazon_review_count', 'integer', 'amazonReviewCount', 'Amazon'),
  num('goodreadsRating', 'goodreads_rating', 'number', 'goodreadsRating', 'GoodReads'),
  num('goodreadsReviewCount', 'goodreads_review_count', 'integer', 'goodreadsReviewCount', 'GoodReads'),
  num('hardcoverRating', 'hardcover_rating', 'number', 'hardcoverRating', 'Hardcover'),
  num('hardcoverReviewCount', 'hardcover_review_count', 'integer', 'hardcoverReviewCount', 'Hardcover'),
  num('lubimyczytacRating', 'lubimyczytac_rating', 'number', 'lubimyczytacRating', 'Lubimyczytac'),
  text('ranobedbId', 'ranobedb_id', 'ranobedbId', 'Ranobedb'),
  num('ranobedbRating', 'ranobedb_rating', 'number', 'ranobedbRating', 'Ranobedb'),
  text('audibleId', 'audible_id', 'audibleId', 'Audible'),
  num('audibleRating', 'audible_rating', 'number', 'audibleRating', 'Audible'),
  num('audibleReviewCount', 'audible_review_count', 'integer', 'audibleReviewCount', 'Audible'),
  { field: 'moods', lock: 'moods_locked', kind: 'list', option: 'moods', owner: 'Hardcover' },
  { field: 'tags', lock: 'tags_locked', kind: 'list', option: 'tags', owner: 'Hardcover' },
  // No enabledFields switch in Grimmory: always taken from their provider when it answered.
  text('doubanId', 'douban_id', undefined, 'Douban'),
  num('doubanRating', 'douban_rating', 'number', undefined, 'Douban'),
  num('doubanReviewCount', 'douban_review_count', 'integer', undefined, 'Douban'),
  text('narrator', 'narrator', undefined, 'Audible'),
  { field: 'abridged', column: 'abridged', lock: 'abridged_locked', kind: 'boolean', owner: 'Audible' },
];

export const LIST_FIELDS = ['authors', 'categories', 'moods', 'tags'] as const;
export type ListField = (typeof LIST_FIELDS)[number];

/** Whether a value counts as "has something" (an empty string or list does not). */
export function hasValue(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === 'string') return value.trim() !== '';
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'number') return Number.isFinite(value);
  return true;
}
