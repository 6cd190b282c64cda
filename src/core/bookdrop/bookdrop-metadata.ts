// Grimmory's BookMetadata as the bookdrop keeps it (original_metadata / fetched_metadata JSON), and how it meets the
// catalog: what a file says becomes one, and one given at import replaces what the file says wherever it has a value.
import type { ExtractedMetadata } from '../formats/types.ts';
import type { BookMetadataValues } from '../metadata/book-metadata-values.ts';
import type { BookFacts } from '../naming/render.ts';

/** The BookMetadata properties the bookdrop keeps (what the file says, or what a provider found), by that name. */
export interface DropMetadata extends BookMetadataValues {
  provider?: string;
}

type Kind = 'string' | 'number' | 'integer' | 'boolean' | 'date' | 'list';

const FIELDS: Record<keyof DropMetadata, Kind> = {
  title: 'string', subtitle: 'string', publisher: 'string', publishedDate: 'date', description: 'string', seriesName: 'string',
  seriesNumber: 'number', seriesTotal: 'integer', isbn13: 'string', isbn10: 'string', pageCount: 'integer', language: 'string',
  narrator: 'string', abridged: 'boolean', asin: 'string', goodreadsId: 'string', comicvineId: 'string', hardcoverId: 'string',
  hardcoverBookId: 'string', googleId: 'string', doubanId: 'string', lubimyczytacId: 'string', ranobedbId: 'string', audibleId: 'string',
  externalUrl: 'string', amazonRating: 'number', amazonReviewCount: 'integer', goodreadsRating: 'number', goodreadsReviewCount: 'integer',
  hardcoverRating: 'number', hardcoverReviewCount: 'integer', doubanRating: 'number', doubanReviewCount: 'integer',
  lubimyczytacRating: 'number', ranobedbRating: 'number', audibleRating: 'number', audibleReviewCount: 'integer', rating: 'number',
  ageRating: 'integer', contentRating: 'string', thumbnailUrl: 'string', provider: 'string', authors: 'list', categories: 'list',
  moods: 'list', tags: 'list',
};

export const METADATA_FIELDS = Object.keys(FIELDS) as (keyof DropMetadata)[];

function fieldValue(kind: Kind, value: unknown): unknown {
  switch (kind) {
    case 'string':
      return typeof value === 'string' && value !== '' ? value : undefined;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
    case 'boolean':
      return typeof value === 'boolean' ? value : undefined;
    case 'date': {
      if (typeof value !== 'string') return undefined;
      const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
      return m ? `${m[1]}-${m[2]}-${m[3]}` : undefined;
    }
    case 'list': {
      if (!Array.isArray(value)) return undefined;
      const items = [...new Set(value.filter((v): v is string => typeof v === 'string').map((v) => v.trim()).filter((v) => v !== ''))];
      return items.length > 0 ? items : undefined;
    }
  }
}

/** The known, well-typed properties of anything shaped like BookMetadata (a request body, a stored column). */
export function dropMetadata(value: unknown): DropMetadata {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const name of METADATA_FIELDS) {
    const v = fieldValue(FIELDS[name], source[name]);
    if (v !== undefined) out[name] = v;
  }
  return out as DropMetadata;
}

/** A stored JSON column: null when empty or unreadable. */
export function parseStoredMetadata(text: string | null): DropMetadata | null {
  if (text === null || text.trim() === '') return null;
  try {
    return dropMetadata(JSON.parse(text) as unknown);
  } catch {
    return null;
  }
}

/** `Dune.epub` → `Dune` (Apache FilenameUtils.getBaseName: everything before the last dot). */
export function baseName(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return dot === -1 ? fileName : fileName.slice(0, dot);
}

/** What the file says, as BookMetadata; the title falls back to the file name, as Grimmory's bookdrop does. */
export function metadataFromExtraction(meta: ExtractedMetadata, fileName: string): DropMetadata {
  const out = dropMetadata({
    title: meta.title,
    subtitle: meta.subtitle,
    publisher: meta.publisher,
    publishedDate: meta.publishedDate,
    description: meta.description,
    seriesName: meta.seriesName,
    seriesNumber: meta.seriesNumber,
    seriesTotal: meta.seriesTotal,
    isbn13: meta.isbn13,
    isbn10: meta.isbn10,
    pageCount: meta.pageCount,
    language: meta.language,
    narrator: meta.narrator,
    abridged: meta.abridged,
    asin: meta.asin,
    goodreadsId: meta.goodreadsId,
    comicvineId: meta.comicvineId,
    hardcoverId: meta.hardcoverId,
    googleId: meta.googleId,
    rating: meta.rating,
    ageRating: meta.ageRating,
    authors: meta.authors,
    categories: meta.categories,
    tags: meta.tags,
  });
  if (!out.title || out.title.trim() === '') out.title = baseName(fileName);
  return out;
}

/** ExtractedMetadata field ← DropMetadata field, for everything the catalog's metadata writer stores. */
const SCALARS = [
  'title', 'subtitle', 'publisher', 'publishedDate', 'description', 'seriesName', 'seriesNumber', 'seriesTotal', 'isbn13', 'isbn10',
  'pageCount', 'language', 'narrator', 'abridged', 'asin', 'goodreadsId', 'comicvineId', 'hardcoverId', 'googleId', 'rating', 'ageRating',
] as const satisfies readonly (keyof DropMetadata & keyof ExtractedMetadata)[];

/**
 * The file's own metadata with `given` laid over it, Grimmory's REPLACE_WHEN_PROVIDED: every field `given` has
 * replaces the file's; authors and categories are replaced when given, tags are added to.
 */
export function overlayMetadata(fromFile: ExtractedMetadata, given: DropMetadata | null | undefined): ExtractedMetadata {
  if (!given) return fromFile;
  const out: ExtractedMetadata = { ...fromFile, identifiers: { ...fromFile.identifiers } };
  const target = out as unknown as Record<string, unknown>;
  for (const name of SCALARS) {
    const value = given[name];
    if (value !== undefined) target[name] = value;
  }
  if (given.authors) out.authors = [...given.authors];
  if (given.categories) out.categories = [...given.categories];
  if (given.tags) out.tags = [...new Set([...fromFile.tags, ...given.tags])];
  return out;
}

/** book_metadata columns the metadata writer does not know, with the field that fills each. */
export const EXTRA_COLUMNS: readonly [column: string, field: keyof DropMetadata][] = [
  ['hardcover_book_id', 'hardcoverBookId'], ['douban_id', 'doubanId'], ['lubimyczytac_id', 'lubimyczytacId'], ['ranobedb_id', 'ranobedbId'],
  ['audible_id', 'audibleId'], ['external_url', 'externalUrl'], ['amazon_rating', 'amazonRating'], ['amazon_review_count', 'amazonReviewCount'],
  ['goodreads_rating', 'goodreadsRating'], ['goodreads_review_count', 'goodreadsReviewCount'], ['hardcover_rating', 'hardcoverRating'],
  ['hardcover_review_count', 'hardcoverReviewCount'], ['douban_rating', 'doubanRating'], ['douban_review_count', 'doubanReviewCount'],
  ['lubimyczytac_rating', 'lubimyczytacRating'], ['ranobedb_rating', 'ranobedbRating'], ['audible_rating', 'audibleRating'],
  ['audible_review_count', 'audibleReviewCount'], ['content_rating', 'contentRating'],
];

/** What the naming pattern needs from a book's metadata. */
export function namingFacts(meta: ExtractedMetadata, fileName: string): BookFacts {
  return {
    title: meta.title ?? null,
    subtitle: meta.subtitle ?? null,
    authors: meta.authors,
    publishedDate: meta.publishedDate ?? null,
    seriesName: meta.seriesName ?? null,
    seriesNumber: meta.seriesNumber ?? null,
    language: meta.language ?? null,
    publisher: meta.publisher ?? null,
    isbn13: meta.isbn13 ?? null,
    isbn10: meta.isbn10 ?? null,
    fileName,
  };
}
