// metadataMatchScore: how complete a book's metadata is, as a percentage of the METADATA_MATCH_WEIGHTS of the fields
// it has. A locked field counts as present (the user decided it is right as it is).
import { MATCH_WEIGHT_DEFAULTS } from '../settings/setting-shapes.ts';

export type MatchWeights = Record<keyof typeof MATCH_WEIGHT_DEFAULTS, number>;

/** The BookMetadata (wire names) properties the score reads; anything else is ignored. */
export interface ScoredMetadata {
  [field: string]: unknown;
  coverUpdatedOn?: string | null;
}

type Test = 'text' | 'list' | 'positive' | 'present';

/** weight name → the metadata property it looks at, how, and the lock that counts as present. */
const CHECKS: [weight: keyof MatchWeights, field: string, test: Test, lock: string][] = [
  ['title', 'title', 'text', 'titleLocked'],
  ['subtitle', 'subtitle', 'text', 'subtitleLocked'],
  ['description', 'description', 'text', 'descriptionLocked'],
  ['authors', 'authors', 'list', 'authorsLocked'],
  ['publisher', 'publisher', 'text', 'publisherLocked'],
  ['publishedDate', 'publishedDate', 'present', 'publishedDateLocked'],
  ['seriesName', 'seriesName', 'text', 'seriesNameLocked'],
  ['seriesNumber', 'seriesNumber', 'positive', 'seriesNumberLocked'],
  ['seriesTotal', 'seriesTotal', 'positive', 'seriesTotalLocked'],
  ['isbn13', 'isbn13', 'text', 'isbn13Locked'],
  ['isbn10', 'isbn10', 'text', 'isbn10Locked'],
  ['language', 'language', 'text', 'languageLocked'],
  ['pageCount', 'pageCount', 'positive', 'pageCountLocked'],
  ['categories', 'categories', 'list', 'categoriesLocked'],
  ['amazonRating', 'amazonRating', 'positive', 'amazonRatingLocked'],
  ['amazonReviewCount', 'amazonReviewCount', 'positive', 'amazonReviewCountLocked'],
  ['goodreadsRating', 'goodreadsRating', 'positive', 'goodreadsRatingLocked'],
  ['goodreadsReviewCount', 'goodreadsReviewCount', 'positive', 'goodreadsReviewCountLocked'],
  ['hardcoverRating', 'hardcoverRating', 'positive', 'hardcoverRatingLocked'],
  ['hardcoverReviewCount', 'hardcoverReviewCount', 'positive', 'hardcoverReviewCountLocked'],
  ['doubanRating', 'doubanRating', 'positive', 'doubanRatingLocked'],
  ['doubanReviewCount', 'doubanReviewCount', 'positive', 'doubanReviewCountLocked'],
  ['ranobedbRating', 'ranobedbRating', 'positive', 'ranobedbRatingLocked'],
  ['lubimyczytacRating', 'lubimyczytacRating', 'positive', 'lubimyczytacRatingLocked'],
  ['audibleRating', 'audibleRating', 'positive', 'audibleRatingLocked'],
  ['audibleReviewCount', 'audibleReviewCount', 'positive', 'audibleReviewCountLocked'],
  ['coverImage', 'coverUpdatedOn', 'present', 'coverLocked'],
];

function has(value: unknown, test: Test): boolean {
  switch (test) {
    case 'text':
      return typeof value === 'string' && value.trim() !== '';
    case 'list':
      return Array.isArray(value) && value.length > 0;
    case 'positive':
      return typeof value === 'number' && value > 0;
    case 'present':
      return value !== null && value !== undefined && value !== '';
  }
}

/** Weights as stored (missing or non-numeric entries take their defaults; negatives count as 0). */
export function matchWeights(raw: unknown): MatchWeights {
  const given = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const out = { ...MATCH_WEIGHT_DEFAULTS } as MatchWeights;
  for (const key of Object.keys(out) as (keyof MatchWeights)[]) {
    const v = given[key];
    if (typeof v === 'number' && Number.isFinite(v)) out[key] = Math.max(0, v);
  }
  return out;
}

/**
 * The score, 0–100 (a float, as Grimmory stores it): the summed weights of the fields the metadata has, over the sum
 * of all weights. 0 when every weight is 0. Unlike Grimmory, Douban's rating and review count are scored too (Grimmory
 * counts their weights in the total but never awards them, so a complete book could not reach 100).
 */
export function computeMatchScore(metadata: ScoredMetadata, weights: Partial<MatchWeights> | MatchWeights): number {
  const w = matchWeights(weights);
  let total = 0;
  let score = 0;
  for (const [weight, field, test, lock] of CHECKS) {
    total += w[weight];
    if (has(metadata[field], test) || metadata[lock] === true) score += w[weight];
  }
  return total === 0 ? 0 : (score / total) * 100;
}
