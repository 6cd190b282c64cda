// The list filters Komga clients send (Komga's OpenAPI parameter names: `library_id`, `search`, `read_status`, `tag`,
// `genre`, `author`, …), read from a query string and turned into SQL over `book` and its metadata `m`. Values come
// repeated (`tag=a&tag=b`) or comma-separated (`library_id=1,2`); any value of a list matches (Komga's OR).
import type { RawBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { SqlDialect } from '../store/dialect.ts';
import { NOTHING } from './sql.ts';
import { READ_STATES, readStateText, type KomgaReadState } from './read-progress.ts';
import { searchTextCondition } from './text-match.ts';

export type Query = Record<string, unknown>;
type Cond = RawBuilder<SqlBool>;

function values(query: Query, name: string): string[] | undefined {
  const raw = query[name];
  if (raw === undefined) return undefined;
  return (Array.isArray(raw) ? raw : [raw]).filter((v): v is string | number => typeof v === 'string' || typeof v === 'number').map(String);
}

/** A list parameter (repeated or comma-separated), blank entries dropped; undefined when the parameter is absent. */
export function listParam(query: Query, name: string, split = true): string[] | undefined {
  const raw = values(query, name);
  if (raw === undefined) return undefined;
  return raw.flatMap((v) => (split ? v.split(',') : [v])).map((v) => v.trim()).filter((v) => v !== '');
}

/** A single text parameter, trimmed; blank is absent. */
export function textParam(query: Query, name: string): string | undefined {
  const value = values(query, name)?.[0]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** `true` / `false` (Spring's binding, any case); anything else is absent. */
export function boolParam(query: Query, name: string): boolean | undefined {
  const value = textParam(query, name)?.toLowerCase();
  return value === 'true' ? true : value === 'false' ? false : undefined;
}

/** Library ids of `library_id`; ids that are not numbers name no library. Undefined when not given. */
export function libraryIds(query: Query): number[] | undefined {
  const list = listParam(query, 'library_id');
  return list === undefined || list.length === 0 ? undefined : list.filter((v) => /^\d{1,15}$/.test(v)).map(Number);
}

/** `read_status` values Komga knows; undefined when absent or none is known. */
export function readStatuses(query: Query): KomgaReadState[] | undefined {
  const list = listParam(query, 'read_status')?.map((v) => v.toUpperCase());
  if (list === undefined || list.length === 0) return undefined;
  return READ_STATES.filter((s) => list.includes(s));
}

const lowered = (list: string[]): string[] => list.map((v) => v.toLowerCase());

/** Conditions that read the metadata (`m`): a count without them can leave the metadata join out. */
const onMetadata = new WeakSet<Cond>();

export function metadataCondition(condition: Cond): Cond {
  onMetadata.add(condition);
  return condition;
}

export const readsMetadata = (conditions: readonly Cond[]): boolean => conditions.some((c) => onMetadata.has(c));

/** Books with one of the names in a name table (categories, tags, authors), matched regardless of case. */
function hasNamed(mapping: string, table: string, column: string, names: string[]): Cond {
  return sql<SqlBool>`book.id IN (SELECT x.book_id FROM ${sql.table(mapping)} x JOIN ${sql.table(table)} t ON t.id = ${sql.ref(`x.${column}`)} WHERE lower(t.name) IN (${sql.join(lowered(names))}))`;
}

export const hasTag = (names: string[]): Cond => hasNamed('book_metadata_tag_mapping', 'tag', 'tag_id', names);
export const hasGenre = (names: string[]): Cond => hasNamed('book_metadata_category_mapping', 'category', 'category_id', names);

/** `author=name,role`: Bindery's authors are all writers, so another role matches nothing. */
export function authorNames(query: Query): string[] | undefined {
  const list = listParam(query, 'author', false);
  if (list === undefined || list.length === 0) return undefined;
  return list.flatMap((value) => {
    const comma = value.lastIndexOf(',');
    const name = (comma >= 0 ? value.slice(0, comma) : value).trim();
    const role = comma >= 0 ? value.slice(comma + 1).trim().toLowerCase() : 'writer';
    return name !== '' && (role === '' || role === 'writer') ? [name] : [];
  });
}

export const hasAuthor = (names: string[]): Cond => hasNamed('book_metadata_author_mapping', 'author', 'author_id', names);

/** Books of the reader in one of the states (a book without a progress row is UNREAD). */
export function inReadStates(d: SqlDialect, userId: number, states: readonly KomgaReadState[]): Cond {
  if (states.length === 0) return NOTHING;
  if (states.length === READ_STATES.length) return sql<SqlBool>`1 = 1`;
  const started = sql`SELECT p.book_id FROM user_book_progress p WHERE p.user_id = ${userId} AND ${sql.raw(readStateText(d, 'p'))}`;
  if (states.includes('UNREAD')) {
    const others = READ_STATES.filter((s) => !states.includes(s));
    return sql<SqlBool>`book.id NOT IN (${started} IN (${sql.join(others)}))`;
  }
  return sql<SqlBool>`book.id IN (${started} IN (${sql.join(states)}))`;
}

/**
 * A search in the title, authors and series (Bindery's search text, stored as a search key: no case, no accents),
 * tested on each book's metadata row as the page is walked: a first page of common words is found without reading
 * every book.
 */
export function matchesSearch(d: SqlDialect, text: string): Cond {
  return metadataCondition(searchTextCondition(d, text));
}

/** Release year of the book (`yyyy…` dates). */
export function releasedIn(years: string[]): Cond {
  const valid = years.filter((y) => /^\d{4}$/.test(y));
  return valid.length === 0 ? NOTHING : sql<SqlBool>`substr(m.published_date, 1, 4) IN (${sql.join(valid)})`;
}

/**
 * Filters that a book itself must pass, as `/books` and a series' `/books` take them: `library_id`, `search`,
 * `media_status` (every Bindery book is READY), `read_status`, `tag`, `author`, `released_after`, `deleted` (no
 * deleted book is listed).
 */
export function bookConditions(d: SqlDialect, query: Query, userId: number): Cond[] {
  const out: Cond[] = [];
  const libraries = libraryIds(query);
  if (libraries !== undefined) out.push(libraries.length === 0 ? NOTHING : sql<SqlBool>`+book.library_id IN (${sql.join(libraries)})`);
  const search = textParam(query, 'search');
  if (search !== undefined) out.push(matchesSearch(d, search));
  const media = listParam(query, 'media_status')?.map((v) => v.toUpperCase());
  if (media !== undefined && media.length > 0 && !media.includes('READY')) out.push(NOTHING);
  const states = readStatuses(query);
  if (states !== undefined) out.push(inReadStates(d, userId, states));
  const tags = listParam(query, 'tag', false);
  if (tags !== undefined && tags.length > 0) out.push(hasTag(tags));
  const authors = authorNames(query);
  if (authors !== undefined) out.push(authors.length === 0 ? NOTHING : hasAuthor(authors));
  const after = textParam(query, 'released_after');
  if (after !== undefined) out.push(/^\d{4}-\d{2}-\d{2}$/.test(after) ? metadataCondition(sql<SqlBool>`substr(m.published_date, 1, 10) > ${after}`) : NOTHING);
  if (boolParam(query, 'deleted') === true) out.push(NOTHING);
  return out;
}

/**
 * Filters on a series as a whole, each met when some visible book of the series meets it (Bindery's series are the
 * books that share a name; their genres, tags, publishers and languages are their books'): `genre`, `tag`,
 * `publisher`, `language`, `author`, `age_rating`, `release_year`.
 */
export function seriesBookConditions(query: Query): Cond[] {
  const out: Cond[] = [];
  const genres = listParam(query, 'genre', false);
  if (genres !== undefined && genres.length > 0) out.push(hasGenre(genres));
  const tags = listParam(query, 'tag', false);
  if (tags !== undefined && tags.length > 0) out.push(hasTag(tags));
  const publishers = listParam(query, 'publisher', false);
  if (publishers !== undefined && publishers.length > 0) out.push(sql<SqlBool>`lower(m.publisher) IN (${sql.join(lowered(publishers))})`);
  const languages = listParam(query, 'language');
  if (languages !== undefined && languages.length > 0) out.push(sql<SqlBool>`lower(coalesce(m.language, 'en')) IN (${sql.join(lowered(languages))})`);
  const authors = authorNames(query);
  if (authors !== undefined) out.push(authors.length === 0 ? NOTHING : hasAuthor(authors));
  const ratings = listParam(query, 'age_rating')?.map((v) => v.toLowerCase());
  if (ratings !== undefined && ratings.length > 0) {
    const numbers = ratings.filter((v) => /^\d{1,3}$/.test(v)).map(Number);
    const unrated = ratings.includes('none');
    out.push(
      numbers.length > 0 && unrated
        ? sql<SqlBool>`(m.age_rating IN (${sql.join(numbers)}) OR m.age_rating IS NULL)`
        : numbers.length > 0
          ? sql<SqlBool>`m.age_rating IN (${sql.join(numbers)})`
          : unrated
            ? sql<SqlBool>`m.age_rating IS NULL`
            : NOTHING,
    );
  }
  const years = listParam(query, 'release_year');
  if (years !== undefined && years.length > 0) out.push(releasedIn(years));
  return out;
}

/**
 * Series filters Bindery's series cannot meet or always meet: every series is ONGOING, complete (its book count is
 * its total) and has no sharing labels; no deleted series is listed. False when the query excludes everything.
 */
export function seriesCanMatch(query: Query): boolean {
  const status = listParam(query, 'status')?.map((v) => v.toUpperCase());
  if (status !== undefined && status.length > 0 && !status.includes('ONGOING')) return false;
  if (boolParam(query, 'complete') === false) return false;
  if (boolParam(query, 'deleted') === true) return false;
  const labels = listParam(query, 'sharing_label');
  return labels === undefined || labels.length === 0;
}
