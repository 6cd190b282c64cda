// The editable fields of a book's metadata: their JSON names (BookMetadata, MetadataClearFlags), catalog columns,
// value kinds and lock columns.
import { camel } from '../books/book-json.ts';
import { CodedError } from '../coded-error.ts';
import { BOOK_METADATA_LOCKS, COMIC_METADATA_LOCKS } from '../store/migrations/001-initial.ts';

export type FieldKind = 'text' | 'date' | 'float' | 'int' | 'boolean';

export interface ScalarField {
  /** JSON name in BookMetadata and MetadataClearFlags. */
  key: string;
  column: string;
  kind: FieldKind;
  lockColumn: string;
}

/** The scalar fields `PUT …/metadata` writes, in Grimmory's order (external URL and Douban fields it never writes). */
const BOOK_SCALARS: [string, FieldKind][] = [
  ['title', 'text'], ['subtitle', 'text'], ['publisher', 'text'], ['published_date', 'date'], ['description', 'text'],
  ['series_name', 'text'], ['series_number', 'float'], ['series_total', 'int'], ['isbn_13', 'text'], ['isbn_10', 'text'],
  ['asin', 'text'], ['goodreads_id', 'text'], ['comicvine_id', 'text'], ['hardcover_id', 'text'], ['hardcover_book_id', 'text'],
  ['google_id', 'text'], ['page_count', 'int'], ['language', 'text'], ['amazon_rating', 'float'], ['amazon_review_count', 'int'],
  ['goodreads_rating', 'float'], ['goodreads_review_count', 'int'], ['hardcover_rating', 'float'], ['hardcover_review_count', 'int'],
  ['lubimyczytac_id', 'text'], ['lubimyczytac_rating', 'float'], ['ranobedb_id', 'text'], ['ranobedb_rating', 'float'],
  ['audible_id', 'text'], ['audible_rating', 'float'], ['audible_review_count', 'int'], ['age_rating', 'int'],
  ['content_rating', 'text'], ['narrator', 'text'], ['abridged', 'boolean'],
];

export const SCALAR_FIELDS: readonly ScalarField[] = BOOK_SCALARS.map(([column, kind]) => ({ key: camel(column), column, kind, lockColumn: `${column}_locked` }));

export type NameKind = 'authors' | 'categories' | 'moods' | 'tags';

export interface NameField {
  key: NameKind;
  table: 'author' | 'category' | 'mood' | 'tag';
  mapping: 'book_metadata_author_mapping' | 'book_metadata_category_mapping' | 'book_metadata_mood_mapping' | 'book_metadata_tag_mapping';
  idColumn: 'author_id' | 'category_id' | 'mood_id' | 'tag_id';
  lockColumn: string;
  /** Authors keep the order they were given; the others are sets. */
  ordered: boolean;
}

export const NAME_FIELDS: Record<NameKind, NameField> = {
  authors: { key: 'authors', table: 'author', mapping: 'book_metadata_author_mapping', idColumn: 'author_id', lockColumn: 'authors_locked', ordered: true },
  categories: { key: 'categories', table: 'category', mapping: 'book_metadata_category_mapping', idColumn: 'category_id', lockColumn: 'categories_locked', ordered: false },
  moods: { key: 'moods', table: 'mood', mapping: 'book_metadata_mood_mapping', idColumn: 'mood_id', lockColumn: 'moods_locked', ordered: false },
  tags: { key: 'tags', table: 'tag', mapping: 'book_metadata_tag_mapping', idColumn: 'tag_id', lockColumn: 'tags_locked', ordered: false },
};

/** Lock flags BookMetadata carries (JSON name → column); the catalog's thumbnail/rating/review-count locks are not among them. */
export const BOOK_LOCKS: ReadonlyMap<string, string> = new Map(
  BOOK_METADATA_LOCKS.filter((f) => f !== 'thumbnail' && f !== 'rating' && f !== 'review_count').map((f) => [camel(`${f}_locked`), `${f}_locked`]),
);

/** Every lock column of book_metadata, for locking or unlocking a book as a whole. */
export const ALL_BOOK_LOCK_COLUMNS: readonly string[] = BOOK_METADATA_LOCKS.map((f) => `${f}_locked`);

export const COMIC_LOCKS: ReadonlyMap<string, string> = new Map(COMIC_METADATA_LOCKS.map((f) => [camel(`${f}_locked`), `${f}_locked`]));

export const COMIC_SCALARS: readonly ScalarField[] = (
  [
    ['issue_number', 'text'], ['volume_name', 'text'], ['volume_number', 'int'], ['story_arc', 'text'], ['story_arc_number', 'int'],
    ['alternate_series', 'text'], ['alternate_issue', 'text'], ['imprint', 'text'], ['format', 'text'], ['black_and_white', 'boolean'],
    ['manga', 'boolean'], ['reading_direction', 'text'], ['web_link', 'text'], ['notes', 'text'],
  ] as [string, FieldKind][]
).map(([column, kind]) => ({ key: camel(column), column, kind, lockColumn: `${column}_locked` }));

export const COMIC_NAME_LISTS = [
  { key: 'characters', table: 'comic_character', mapping: 'comic_metadata_character_mapping', idColumn: 'character_id', lockColumn: 'characters_locked' },
  { key: 'teams', table: 'comic_team', mapping: 'comic_metadata_team_mapping', idColumn: 'team_id', lockColumn: 'teams_locked' },
  { key: 'locations', table: 'comic_location', mapping: 'comic_metadata_location_mapping', idColumn: 'location_id', lockColumn: 'locations_locked' },
] as const;

export const COMIC_ROLES = [
  { key: 'pencillers', role: 'PENCILLER', lockColumn: 'pencillers_locked' },
  { key: 'inkers', role: 'INKER', lockColumn: 'inkers_locked' },
  { key: 'colorists', role: 'COLORIST', lockColumn: 'colorists_locked' },
  { key: 'letterers', role: 'LETTERER', lockColumn: 'letterers_locked' },
  { key: 'coverArtists', role: 'COVER_ARTIST', lockColumn: 'cover_artists_locked' },
  { key: 'editors', role: 'EDITOR', lockColumn: 'editors_locked' },
] as const;

export type MetadataErrorCode = 'INVALID' | 'NOT_FOUND' | 'LOCKED';

export class MetadataEditError extends CodedError<MetadataErrorCode> {}

export type Scalar = string | number | null;

/**
 * A request value turned into what the column stores, the way Jackson reads BookMetadata: numbers may come as
 * numeric strings, an empty string is no value, a date is `yyyy-MM-dd` (a date-time keeps its date). `undefined`
 * means the property was absent.
 */
export function columnValue(field: { key: string; kind: FieldKind }, raw: unknown, path = 'metadata'): Scalar | undefined {
  if (raw === undefined) return undefined;
  if (raw === null) return null;
  const invalid = (what: string): MetadataEditError => new MetadataEditError('INVALID', `${path}.${field.key}: ${what}`);
  switch (field.kind) {
    case 'text': {
      if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean') throw invalid('expected a string');
      const text = String(raw).trim();
      return text === '' ? null : text;
    }
    case 'date': {
      if (Array.isArray(raw) && raw.length === 3 && raw.every((n) => Number.isInteger(n))) {
        const [y, m, d] = raw as number[];
        raw = `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
      }
      if (typeof raw !== 'string') throw invalid('expected a date (yyyy-MM-dd)');
      if (raw.trim() === '') return null;
      const m = /^(\d{4})-(\d{2})-(\d{2})(?:$|T)/.exec(raw.trim());
      if (!m || Number.isNaN(Date.parse(`${m[1]}-${m[2]}-${m[3]}T00:00:00Z`))) throw invalid('expected a date (yyyy-MM-dd)');
      return `${m[1]}-${m[2]}-${m[3]}`;
    }
    case 'float':
    case 'int': {
      if (typeof raw === 'string' && raw.trim() === '') return null;
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(raw) ? Number(raw) : Number.NaN;
      if (!Number.isFinite(n)) throw invalid('expected a number');
      return field.kind === 'int' ? Math.trunc(n) : n;
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return raw ? 1 : 0;
      if (raw === 'true' || raw === 'false') return raw === 'true' ? 1 : 0;
      throw invalid('expected true or false');
    }
  }
}

/** A list of names from a request: strings only, trimmed, blanks dropped, duplicates (exact) dropped. */
export function nameList(raw: unknown, path: string): string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw new MetadataEditError('INVALID', `${path}: expected an array of strings`);
  const out: string[] = [];
  for (const item of raw) {
    if (item === null || item === undefined) continue;
    if (typeof item !== 'string') throw new MetadataEditError('INVALID', `${path}: expected an array of strings`);
    const name = item.trim();
    if (name !== '' && !out.includes(name)) out.push(name.slice(0, 255));
  }
  return out;
}
