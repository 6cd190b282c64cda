// The mobile book list's filters (Grimmory's BookListRequest) as SQL conditions over `book` and its metadata `m`.
// Each list filter combines its values by the request's filter mode: `or` (any value), `and` (every value; for a
// single-valued field the same as `or`) or `not` (none). Values naming nothing valid are refused with 400.
import type { RawBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import { BOOK_FILE_TYPES } from '../formats/types.ts';
import { READ_STATUSES } from '../reading/read-status.ts';
import { appBadRequest } from './app-error.ts';
import type { SqlDialect } from '../store/dialect.ts';
import { searchKey } from '../text/search-key.ts';
import { inForm } from '../store/dialect-forms.ts';

export type Cond = RawBuilder<SqlBool>;
export type FilterMode = 'or' | 'and' | 'not';

export const TRUE: Cond = sql<SqlBool>`1 = 1`;
export const FALSE: Cond = sql<SqlBool>`1 = 0`;

/** The list-valued filters of BookListRequest, by query parameter name. */
export const LIST_FILTERS = [
  'status', 'fileType', 'authors', 'language', 'series', 'category', 'publisher', 'tag', 'mood', 'narrator', 'ageRating',
  'contentRating', 'matchScore', 'publishedDate', 'fileSize', 'personalRating', 'amazonRating', 'goodreadsRating',
  'hardcoverRating', 'lubimyczytacRating', 'ranobedbRating', 'audibleRating', 'pageCount', 'shelfStatus', 'comicCharacter',
  'comicTeam', 'comicLocation', 'comicCreator', 'shelves', 'libraries',
] as const;
export type ListFilter = (typeof LIST_FILTERS)[number];

export type BookFilters = Partial<Record<ListFilter, string[]>> & {
  search?: string;
  minRating?: number;
  maxRating?: number;
  unshelved?: boolean;
  filterMode?: string;
};

export function filterModeOf(mode: string | undefined): FilterMode {
  const lower = mode?.trim().toLowerCase();
  return lower === 'and' || lower === 'not' ? lower : 'or';
}

/**
 * Non-blank values, trimmed. As Spring binds a list parameter: a single value is split at commas (`a,b`), repeated
 * parameters (`x=a&x=b`) are taken whole.
 */
export function cleanValues(values: readonly string[] | undefined): string[] {
  const list = values ?? [];
  const split = list.length === 1 ? (list[0] as string).split(',') : list;
  return split.map((v) => v.trim()).filter((v) => v !== '');
}

/** Java's `List.toString()`, which Grimmory's messages embed. */
const javaList = (values: readonly unknown[]): string => `[${values.join(', ')}]`;

function integers(values: string[], name: string): number[] {
  const invalid = values.filter((v) => !/^[+-]?\d{1,10}$/.test(v) || Math.abs(Number(v)) > 2_147_483_647);
  if (invalid.length > 0) throw appBadRequest(`Invalid ${name} values: ${javaList(invalid)}`);
  return values.map(Number);
}

function longs(values: string[], name: string): number[] {
  const invalid = values.filter((v) => !/^[+-]?\d{1,15}$/.test(v));
  if (invalid.length > 0) throw appBadRequest(`Invalid ${name} values: ${javaList(invalid)}`);
  return values.map(Number);
}

const anyOf = (parts: Cond[]): Cond => (parts.length === 0 ? FALSE : sql<SqlBool>`(${sql.join(parts, sql` or `)})`);
const allOf = (parts: Cond[]): Cond => (parts.length === 0 ? TRUE : sql<SqlBool>`(${sql.join(parts, sql` and `)})`);
const not = (cond: Cond): Cond => sql<SqlBool>`not ${cond}`;
/**
 * Values lower-cased by SQLite, as the column they are compared with is: its lower() (ASCII only) must see the same
 * text on both sides.
 */
const lowered = (values: string[]) => sql.join(values.map((v) => sql`lower(${v})`));

const NAME_LISTS = {
  authors: ['book_metadata_author_mapping', 'author', 'author_id'],
  category: ['book_metadata_category_mapping', 'category', 'category_id'],
  tag: ['book_metadata_tag_mapping', 'tag', 'tag_id'],
  mood: ['book_metadata_mood_mapping', 'mood', 'mood_id'],
  comicCharacter: ['comic_metadata_character_mapping', 'comic_character', 'character_id'],
  comicTeam: ['comic_metadata_team_mapping', 'comic_team', 'team_id'],
  comicLocation: ['comic_metadata_location_mapping', 'comic_location', 'location_id'],
} as const;

/**
 * Conditions on related rows are written as sets (`book.id in (select …)`): SQLite builds the set once per statement
 * and probes it per book, instead of running a correlated query for every book an ordered walk passes.
 */
function hasName(list: keyof typeof NAME_LISTS, names: string[]): Cond {
  const [mapping, table, column] = NAME_LISTS[list];
  return sql<SqlBool>`book.id in (select x.book_id from ${sql.table(mapping)} x join ${sql.table(table)} n on n.id = ${sql.ref(`x.${column}`)} where lower(n.name) in (${lowered(names)}))`;
}

/** Authors, categories, tags, moods: `and` wants every name on the book, `or` one of them, `not` none. */
function namesFilter(list: 'authors' | 'category' | 'tag' | 'mood', values: string[], mode: FilterMode): Cond {
  if (mode === 'and') return allOf(values.map((n) => hasName(list, [n])));
  return mode === 'not' ? not(hasName(list, values)) : hasName(list, values);
}

/** Comic characters, teams and locations: any of the names (`and` included), or none of them. */
function comicNamesFilter(list: 'comicCharacter' | 'comicTeam' | 'comicLocation', values: string[], mode: FilterMode): Cond {
  const cond = hasName(list, values);
  return mode === 'not' ? not(cond) : cond;
}

const SCALAR_COLUMNS = { language: 'm.language', series: 'm.series_name', publisher: 'm.publisher', narrator: 'm.narrator', contentRating: 'm.content_rating' } as const;

/** A single-valued metadata field, compared without regard to case. */
function scalarFilter(field: keyof typeof SCALAR_COLUMNS, values: string[], mode: FilterMode): Cond {
  const cond = sql<SqlBool>`lower(${sql.raw(SCALAR_COLUMNS[field])}) in (${lowered(values)})`;
  return mode === 'not' ? not(cond) : cond;
}

const hasFileType = (types: string[]): Cond => sql<SqlBool>`book.id in (select f.book_id from book_file f where f.book_type in (${sql.join(types)}))`;

function fileTypeFilter(values: string[], mode: FilterMode): Cond {
  const types = values.map((v) => v.toUpperCase());
  const unknown = values.filter((_v, i) => !(BOOK_FILE_TYPES as readonly string[]).includes(types[i] as string));
  if (unknown.length > 0) throw appBadRequest(`Invalid fileType values: ${javaList(unknown)}. Valid values: ${javaList(BOOK_FILE_TYPES)}`);
  if (mode === 'and') return allOf(types.map((t) => hasFileType([t])));
  return mode === 'not' ? not(hasFileType(types)) : hasFileType(types);
}

/** The user's progress row for the book matches `where`. */
const progressWhere = (userId: number, where: Cond): Cond => sql<SqlBool>`book.id in (select p.book_id from user_book_progress p where p.user_id = ${userId} and ${where})`;

/** Read statuses; UNSET stands for "no progress row" as well as a row marked UNSET. */
function statusFilter(values: string[], mode: FilterMode, userId: number): Cond {
  const statuses = values.map((v) => v.toUpperCase());
  const unknown = values.filter((_v, i) => !(READ_STATUSES as readonly string[]).includes(statuses[i] as string));
  if (unknown.length > 0) throw appBadRequest(`Invalid status values: ${javaList(unknown)}. Valid values: ${javaList(READ_STATUSES)}`);
  const real = statuses.filter((s) => s !== 'UNSET');
  const parts: Cond[] = [];
  if (real.length > 0) parts.push(progressWhere(userId, sql<SqlBool>`p.read_status in (${sql.join(real)})`));
  if (statuses.includes('UNSET')) {
    parts.push(sql<SqlBool>`book.id not in (select p.book_id from user_book_progress p where p.user_id = ${userId})`);
    parts.push(progressWhere(userId, sql<SqlBool>`p.read_status = 'UNSET'`));
  }
  const cond = anyOf(parts);
  return mode === 'not' ? not(cond) : cond;
}

type Bucket = [low: number | null, high: number | null];

/** A bucket id → [low inclusive, high exclusive] (null: unbounded), as Grimmory's filter UI defines them. */
const AGE_BUCKETS: Record<number, Bucket> = { 0: [0, 6], 6: [6, 10], 10: [10, 13], 13: [13, 16], 16: [16, 18], 18: [18, 21], 21: [21, null] };
const MATCH_SCORE_BUCKETS: Record<number, Bucket> = { 0: [0.95, null], 1: [0.9, 0.95], 2: [0.8, 0.9], 3: [0.7, 0.8], 4: [0.5, 0.7], 5: [0.3, 0.5], 6: [0, 0.3] };
const FILE_SIZE_BUCKETS: Record<number, Bucket> = {
  0: [0, 1024], 1: [1024, 10240], 2: [10240, 51200], 3: [51200, 102400], 4: [102400, 512000], 5: [512000, 1048576], 6: [1048576, 2097152], 7: [2097152, null],
};
const RATING_BUCKETS: Record<number, Bucket> = { 5: [4.5, null], 4: [4, 4.5], 3: [3, 4], 2: [2, 3], 1: [1, 2], 0: [null, 1] };
const PAGE_COUNT_BUCKETS: Record<number, Bucket> = { 0: [null, 50], 1: [50, 100], 2: [100, 200], 3: [200, 400], 4: [400, 600], 5: [600, 1000], 6: [1000, null] };

function inBuckets(expression: string, ids: number[], buckets: Record<number, Bucket>, name: string): Cond {
  return anyOf(
    ids.map((id) => {
      const bucket = buckets[id];
      if (!bucket) throw appBadRequest(`Invalid ${name} bucket ID: ${id}`);
      const [low, high] = bucket;
      const parts: Cond[] = [];
      if (low !== null) parts.push(sql<SqlBool>`${sql.raw(expression)} >= ${low}`);
      if (high !== null) parts.push(sql<SqlBool>`${sql.raw(expression)} < ${high}`);
      return allOf(parts);
    }),
  );
}

function bucketFilter(expression: string, values: string[], mode: FilterMode, buckets: Record<number, Bucket>, name: string): Cond {
  const cond = inBuckets(expression, integers(values, name), buckets, name);
  return mode === 'not' ? not(cond) : cond;
}

const RATING_COLUMNS = {
  amazonRating: 'm.amazon_rating',
  goodreadsRating: 'm.goodreads_rating',
  hardcoverRating: 'm.hardcover_rating',
  lubimyczytacRating: 'm.lubimyczytac_rating',
  ranobedbRating: 'm.ranobedb_rating',
  audibleRating: 'm.audible_rating',
} as const;

/** The size of the book's first book-format file: the one Grimmory's file-size filter looks at. */
const FIRST_FILE_SIZE = '(select f.file_size_kb from book_file f where f.book_id = book.id and f.is_book = 1 order by f.id limit 1)';

function fileSizeFilter(values: string[], mode: FilterMode): Cond {
  const cond = sql<SqlBool>`coalesce(${inBuckets(FIRST_FILE_SIZE, integers(values, 'fileSize'), FILE_SIZE_BUCKETS, 'fileSize')}, false)`;
  return mode === 'not' ? not(cond) : cond;
}

/** The year is the date's first four characters, compared as a number would be: `965` and `0965` are the same year. */
function publishedYearFilter(values: string[], mode: FilterMode): Cond {
  const years = integers(values, 'publishedDate').flatMap((y) => [...new Set([String(y), String(y).padStart(4, '0')])]);
  const cond = sql<SqlBool>`substr(m.published_date, 1, 4) in (${sql.join(years)})`;
  return mode === 'not' ? not(cond) : cond;
}

function personalRatingFilter(values: string[], mode: FilterMode, userId: number): Cond {
  const cond = progressWhere(userId, sql<SqlBool>`p.personal_rating in (${sql.join(integers(values, 'personalRating'))})`);
  return mode === 'not' ? not(cond) : cond;
}

/** On a shelf the user can see: their own or a public one. */
export function onVisibleShelf(userId: number, shelfIds?: number[]): Cond {
  const which = shelfIds ? sql`and s.id in (${sql.join(shelfIds)})` : sql``;
  return sql<SqlBool>`book.id in (select sm.book_id from book_shelf_mapping sm join shelf s on s.id = sm.shelf_id where (s.user_id = ${userId} or s.is_public = 1) ${which})`;
}

function shelfStatusFilter(values: string[], mode: FilterMode, userId: number): Cond {
  const wanted = values.map((v) => v.toLowerCase());
  const invalid = wanted.filter((v) => v !== 'shelved' && v !== 'unshelved');
  if (invalid.length > 0) throw appBadRequest(`Invalid shelfStatus values: ${javaList(invalid)}. Valid values: [shelved, unshelved]`);
  const shelved = wanted.includes('shelved');
  if (shelved && wanted.includes('unshelved')) return TRUE;
  const cond = shelved ? onVisibleShelf(userId) : not(onVisibleShelf(userId));
  return mode === 'not' ? not(cond) : cond;
}

function shelvesFilter(values: string[], mode: FilterMode, userId: number): Cond {
  const ids = longs(values, 'shelf');
  if (mode === 'and') return allOf(ids.map((id) => onVisibleShelf(userId, [id])));
  return mode === 'not' ? not(onVisibleShelf(userId, ids)) : onVisibleShelf(userId, ids);
}

function librariesFilter(values: string[], mode: FilterMode): Cond {
  const ids = longs(values, 'library');
  // A book lives in one library: it cannot be in all of several.
  if (mode === 'and') return ids.length > 1 ? FALSE : sql<SqlBool>`book.library_id = ${ids[0]}`;
  const cond = sql<SqlBool>`book.library_id in (${sql.join(ids)})`;
  return mode === 'not' ? not(cond) : cond;
}

const CREATOR_ROLES: Record<string, string> = { penciller: 'PENCILLER', inker: 'INKER', colorist: 'COLORIST', letterer: 'LETTERER', coverartist: 'COVER_ARTIST', editor: 'EDITOR' };

/** `name` or `name:role` (role as the filter options spell it: penciller, coverArtist…). */
function comicCreatorFilter(values: string[], mode: FilterMode): Cond {
  const parts = values.map((value) => {
    const [name = '', role] = value.split(':');
    const roleCond = role === undefined ? sql`` : sql`and x.role = ${creatorRole(role.trim())}`;
    return sql<SqlBool>`book.id in (select x.book_id from comic_metadata_creator_mapping x join comic_creator c on c.id = x.creator_id where lower(c.name) = lower(${name.trim()}) ${roleCond})`;
  });
  const cond = mode === 'and' ? allOf(parts) : anyOf(parts);
  return mode === 'not' ? not(cond) : cond;
}

function creatorRole(label: string): string {
  const role = CREATOR_ROLES[label.toLowerCase()];
  if (!role) throw appBadRequest(`Invalid comic creator role: ${label}`);
  return role;
}

/**
 * Grimmory's free-text book search: title, series or an author's name contains the text, compared as search keys
 * (no case, no accents). The book's stored search text also holds its subtitle and ISBNs, which match too.
 */
export function searchCondition(text: string, dialect: SqlDialect): Cond {
  return sql<SqlBool>`book.id in (select t.book_id from book_metadata t where ${inForm((key) => dialect.position('t.search_text', key), searchKey(text))} > 0)`;
}

/** One condition per filter the request sets; throws AppError (400) for values that name nothing. */
export function filterConditions(filters: BookFilters, userId: number, dialect: SqlDialect): Cond[] {
  const mode = filterModeOf(filters.filterMode);
  const out: Cond[] = [];
  const values = (name: ListFilter): string[] => cleanValues(filters[name]);
  const add = (name: ListFilter, build: (v: string[]) => Cond): void => {
    const v = values(name);
    if (v.length > 0) out.push(build(v));
  };
  add('status', (v) => statusFilter(v, mode, userId));
  if (filters.search !== undefined && filters.search.trim() !== '') out.push(searchCondition(filters.search, dialect));
  add('fileType', (v) => fileTypeFilter(v, mode));
  if (filters.minRating !== undefined) out.push(progressWhere(userId, sql<SqlBool>`p.personal_rating >= ${filters.minRating}`));
  if (filters.maxRating !== undefined) {
    // 0 asks for the unrated books.
    out.push(
      filters.maxRating === 0
        ? sql<SqlBool>`book.id not in (select p.book_id from user_book_progress p where p.user_id = ${userId} and p.personal_rating is not null)`
        : progressWhere(userId, sql<SqlBool>`p.personal_rating <= ${filters.maxRating}`),
    );
  }
  add('authors', (v) => namesFilter('authors', v, mode));
  add('language', (v) => scalarFilter('language', v, mode));
  add('series', (v) => scalarFilter('series', v, mode));
  add('category', (v) => namesFilter('category', v, mode));
  add('publisher', (v) => scalarFilter('publisher', v, mode));
  add('tag', (v) => namesFilter('tag', v, mode));
  add('mood', (v) => namesFilter('mood', v, mode));
  add('narrator', (v) => scalarFilter('narrator', v, mode));
  add('ageRating', (v) => bucketFilter('m.age_rating', v, mode, AGE_BUCKETS, 'ageRating'));
  add('contentRating', (v) => scalarFilter('contentRating', v, mode));
  add('matchScore', (v) => bucketFilter('book.metadata_match_score', v, mode, MATCH_SCORE_BUCKETS, 'matchScore'));
  add('publishedDate', (v) => publishedYearFilter(v, mode));
  add('fileSize', (v) => fileSizeFilter(v, mode));
  add('personalRating', (v) => personalRatingFilter(v, mode, userId));
  for (const [name, column] of Object.entries(RATING_COLUMNS) as [keyof typeof RATING_COLUMNS, string][]) {
    add(name, (v) => bucketFilter(column, v, mode, RATING_BUCKETS, name));
  }
  add('pageCount', (v) => bucketFilter('m.page_count', v, mode, PAGE_COUNT_BUCKETS, 'pageCount'));
  add('shelfStatus', (v) => shelfStatusFilter(v, mode, userId));
  add('comicCharacter', (v) => comicNamesFilter('comicCharacter', v, mode));
  add('comicTeam', (v) => comicNamesFilter('comicTeam', v, mode));
  add('comicLocation', (v) => comicNamesFilter('comicLocation', v, mode));
  add('comicCreator', (v) => comicCreatorFilter(v, mode));
  add('shelves', (v) => shelvesFilter(v, mode, userId));
  add('libraries', (v) => librariesFilter(v, mode));
  if (filters.unshelved === true) out.push(not(onVisibleShelf(userId)));
  return out;
}
