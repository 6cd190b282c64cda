// The plain fields of Grimmory's BookMetadata DTO that travel between the metadata providers and the bookdrop: what
// a provider found and what the bookdrop keeps for a dropped file, under the same names.

/**
 * Absent = not known; null and empty values are left out, as Grimmory's JSON does. Dates are `yyyy-MM-dd`; ratings as
 * their source gives them (0–5 for most, 0–10 for Douban); `language` as given (ISO 639-1 preferred).
 */
export interface BookMetadataValues {
  title?: string;
  subtitle?: string;
  publisher?: string;
  publishedDate?: string;
  description?: string;
  seriesName?: string;
  seriesNumber?: number;
  seriesTotal?: number;
  isbn13?: string;
  isbn10?: string;
  pageCount?: number;
  language?: string;
  narrator?: string;
  abridged?: boolean;
  authors?: string[];
  categories?: string[];
  moods?: string[];
  tags?: string[];
  asin?: string;
  amazonRating?: number;
  amazonReviewCount?: number;
  goodreadsId?: string;
  goodreadsRating?: number;
  goodreadsReviewCount?: number;
  googleId?: string;
  hardcoverId?: string;
  hardcoverBookId?: string;
  hardcoverRating?: number;
  hardcoverReviewCount?: number;
  comicvineId?: string;
  doubanId?: string;
  doubanRating?: number;
  doubanReviewCount?: number;
  lubimyczytacId?: string;
  lubimyczytacRating?: number;
  ranobedbId?: string;
  ranobedbRating?: number;
  audibleId?: string;
  audibleRating?: number;
  audibleReviewCount?: number;
  externalUrl?: string;
  /** Absolute URL of the cover image (BookMetadata.thumbnailUrl). */
  thumbnailUrl?: string;
  rating?: number;
  ageRating?: number;
  contentRating?: string;
}
