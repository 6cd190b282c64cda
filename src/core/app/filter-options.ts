// AppFilterOptions: for the books of a scope (the caller's visible, listed books, optionally one library, shelf or
// magic shelf), the values each list filter can take and how many books have each. One statement: the scope is
// materialised once, with the metadata the counts need, and every count is a GROUP BY over it.
import type { RawBuilder } from 'kysely';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { Store } from '../store/store.ts';
import { listedBooks, scopeConditions, type BookScope } from './book-scope.ts';
import { remembered, rowsOf } from './sql.ts';

export interface CountedOption {
  name: string;
  count: number;
}

export interface LanguageOption {
  code: string;
  label: string;
  count: number;
}

export const COUNTED_KEYS = [
  'authors', 'readStatuses', 'fileTypes', 'categories', 'publishers', 'series', 'tags', 'moods', 'narrators', 'ageRatings',
  'contentRatings', 'matchScores', 'publishedYears', 'fileSizes', 'personalRatings', 'amazonRatings', 'goodreadsRatings',
  'hardcoverRatings', 'lubimyczytacRatings', 'ranobedbRatings', 'audibleRatings', 'pageCounts', 'shelfStatuses',
  'comicCharacters', 'comicTeams', 'comicLocations', 'comicCreators', 'shelves', 'libraries',
] as const;
type CountedKey = (typeof COUNTED_KEYS)[number];

export type AppFilterOptions = Record<CountedKey, CountedOption[]> & { languages: LanguageOption[] };

/** Lists of names are cut to the most frequent thousand, as Grimmory cuts them. */
const NAME_LIMIT = 1000;

type Branch = RawBuilder<unknown>;

/** Values of a column of the scope, counted. */
const column = (key: CountedKey | 'languages', expression: string): Branch =>
  sql`select ${key} as k, ${sql.raw(expression)} as name, count(*) as n from s where ${sql.raw(expression)} is not null and ${sql.raw(expression)} <> '' group by ${sql.raw(expression)}`;

/** Names linked to the books through a mapping table, counted by books. */
const linked = (key: CountedKey, mapping: string, table: string, idColumn: string): Branch =>
  sql`select ${key} as k, n.name as name, count(distinct s.id) as n from s join ${sql.table(mapping)} x on x.book_id = s.id join ${sql.table(table)} n on n.id = ${sql.ref(`x.${idColumn}`)} group by n.name`;

/** `case when e >= b1 then 'k1' …` over [key, lower bound] pairs (first match wins), `otherwise` below all of them. */
const buckets = (expression: string, bounds: [string, number][], otherwise: string | null): string =>
  `case ${bounds.map(([key, low]) => `when ${expression} >= ${low} then '${key}'`).join(' ')} ${otherwise === null ? '' : `else '${otherwise}'`} end`;

const bucketed = (key: CountedKey, expression: string, from = 's'): Branch =>
  sql`select ${key} as k, b as name, count(distinct id) as n from (select s.id as id, ${sql.raw(expression)} as b from ${sql.raw(from)}) where b is not null group by b`;

const RATING: [string, number][] = [['5', 4.5], ['4', 4], ['3', 3], ['2', 2], ['1', 1]];

function rating(key: CountedKey, column: string): Branch {
  return sql`select ${key} as k, ${sql.raw(buckets(`s.${column}`, RATING, '0'))} as name, count(*) as n from s where s.${sql.raw(column)} is not null group by 2`;
}

const AGE = `case when s.age_rating >= 0 and s.age_rating < 6 then '0' when s.age_rating >= 6 and s.age_rating < 10 then '6' when s.age_rating >= 10 and s.age_rating < 13 then '10'
  when s.age_rating >= 13 and s.age_rating < 16 then '13' when s.age_rating >= 16 and s.age_rating < 18 then '16' when s.age_rating >= 18 and s.age_rating < 21 then '18' when s.age_rating >= 21 then '21' end`;
const MATCH = buckets('s.score', [['0', 0.95], ['1', 0.9], ['2', 0.8], ['3', 0.7], ['4', 0.5], ['5', 0.3], ['6', 0]], null);
const FILE_SIZE = `case when f.file_size_kb < 1024 then '0' when f.file_size_kb < 10240 then '1' when f.file_size_kb < 51200 then '2' when f.file_size_kb < 102400 then '3'
  when f.file_size_kb < 512000 then '4' when f.file_size_kb < 1048576 then '5' when f.file_size_kb < 2097152 then '6' when f.file_size_kb >= 2097152 then '7' end`;
const PAGES = `case when s.page_count < 50 then '0' when s.page_count < 100 then '1' when s.page_count < 200 then '2' when s.page_count < 400 then '3'
  when s.page_count < 600 then '4' when s.page_count < 1000 then '5' when s.page_count >= 1000 then '6' end`;
const CREATOR_LABELS: Record<string, string> = { PENCILLER: 'penciller', INKER: 'inker', COLORIST: 'colorist', LETTERER: 'letterer', COVER_ARTIST: 'coverArtist', EDITOR: 'editor' };

function branches(userId: number): Branch[] {
  const visibleShelf = sql`(sh.user_id = ${userId} or sh.is_public = 1)`;
  return [
    linked('authors', 'book_metadata_author_mapping', 'author', 'author_id'),
    column('languages', 's.language'),
    sql`select 'readStatuses' as k, p.read_status as name, count(*) as n from s join user_book_progress p on p.book_id = s.id and p.user_id = ${userId} where p.read_status is not null and p.read_status <> 'UNSET' group by p.read_status`,
    sql`select 'unset' as k, null as name, count(*) as n from s where s.id not in (select book_id from user_book_progress where user_id = ${userId})`,
    sql`select 'fileTypes' as k, f.book_type as name, count(distinct s.id) as n from s join book_file f on f.book_id = s.id where f.is_book = 1 and f.book_type is not null group by f.book_type`,
    linked('categories', 'book_metadata_category_mapping', 'category', 'category_id'),
    column('publishers', 's.publisher'),
    column('series', 's.series_name'),
    linked('tags', 'book_metadata_tag_mapping', 'tag', 'tag_id'),
    linked('moods', 'book_metadata_mood_mapping', 'mood', 'mood_id'),
    column('narrators', 's.narrator'),
    bucketed('ageRatings', AGE),
    column('contentRatings', 's.content_rating'),
    bucketed('matchScores', MATCH),
    column('publishedYears', "cast(cast(substr(s.published_date, 1, 4) as integer) as text)"),
    bucketed('fileSizes', FILE_SIZE, 's join book_file f on f.book_id = s.id and f.is_book = 1'),
    sql`select 'personalRatings' as k, cast(p.personal_rating as text) as name, count(*) as n from s join user_book_progress p on p.book_id = s.id and p.user_id = ${userId} where p.personal_rating is not null group by p.personal_rating`,
    rating('amazonRatings', 'amazon_rating'),
    rating('goodreadsRatings', 'goodreads_rating'),
    rating('hardcoverRatings', 'hardcover_rating'),
    rating('lubimyczytacRatings', 'lubimyczytac_rating'),
    rating('ranobedbRatings', 'ranobedb_rating'),
    rating('audibleRatings', 'audible_rating'),
    bucketed('pageCounts', PAGES),
    sql`select 'shelfStatuses' as k, case when exists (select 1 from book_shelf_mapping sm join shelf sh on sh.id = sm.shelf_id where sm.book_id = s.id and ${visibleShelf}) then 'shelved' else 'unshelved' end as name, count(*) as n from s group by 2`,
    linked('comicCharacters', 'comic_metadata_character_mapping', 'comic_character', 'character_id'),
    linked('comicTeams', 'comic_metadata_team_mapping', 'comic_team', 'team_id'),
    linked('comicLocations', 'comic_metadata_location_mapping', 'comic_location', 'location_id'),
    sql`select 'comicCreators' as k, c.name || char(0) || x.role as name, count(distinct s.id) as n from s join comic_metadata_creator_mapping x on x.book_id = s.id join comic_creator c on c.id = x.creator_id group by c.name, x.role`,
    sql`select 'shelves' as k, sh.id || ':' || sh.name as name, count(distinct s.id) as n from s join book_shelf_mapping sm on sm.book_id = s.id join shelf sh on sh.id = sm.shelf_id where ${visibleShelf} group by sh.id`,
    sql`select 'libraries' as k, l.id || ':' || l.name as name, count(*) as n from s join library l on l.id = s.library_id group by l.id`,
  ];
}

const byCount = (a: CountedOption, b: CountedOption): number => b.count - a.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const byBucket = (a: CountedOption, b: CountedOption): number => Number(a.name) - Number(b.name);

const displayNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'code' });

/** The English name of a language code (`en-GB` → English), as Java's Locale gives it; the code itself when unknown. */
export function languageLabel(code: string): string {
  const primary = code.split(/[-_]/)[0] ?? code;
  try {
    return displayNames.of(primary.toLowerCase()) ?? code;
  } catch {
    return code;
  }
}

const BUCKET_KEYS = new Set<string>(['ageRatings', 'matchScores', 'fileSizes', 'amazonRatings', 'goodreadsRatings', 'hardcoverRatings', 'lubimyczytacRatings', 'ranobedbRatings', 'audibleRatings', 'pageCounts']);

function assemble(rows: { k: string; name: string | null; n: number }[]): AppFilterOptions {
  const lists = new Map<string, CountedOption[]>();
  let unset = 0;
  for (const r of rows) {
    if (r.k === 'unset') {
      unset = r.n;
      continue;
    }
    if (r.name === null) continue;
    const name = r.k === 'comicCreators' ? creatorName(r.name) : r.name;
    lists.set(r.k, [...(lists.get(r.k) ?? []), { name, count: r.n }]);
  }
  const out: Record<string, unknown> = {};
  for (const key of COUNTED_KEYS) {
    const list = lists.get(key) ?? [];
    if (BUCKET_KEYS.has(key)) list.sort(byBucket);
    else if (key === 'personalRatings') list.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
    else list.sort(byCount);
    out[key] = BUCKET_KEYS.has(key) || key === 'shelfStatuses' ? list : list.slice(0, NAME_LIMIT);
  }
  // Books without any progress row first, as UNSET.
  if (unset > 0) out.readStatuses = [{ name: 'UNSET', count: unset }, ...(out.readStatuses as CountedOption[])];
  out.languages = (lists.get('languages') ?? []).sort(byCount).slice(0, NAME_LIMIT).map((l) => ({ code: l.name, label: languageLabel(l.name), count: l.count }));
  return out as AppFilterOptions;
}

function creatorName(joined: string): string {
  const [name, role = ''] = joined.split('\u0000');
  return `${name}:${CREATOR_LABELS[role] ?? role.toLowerCase()}`;
}

/** The filter options of the scope; AppError 403/404 for a library, shelf or magic shelf the caller may not open. */
export function appFilterOptions(store: Store, principal: Principal, scope: BookScope): AppFilterOptions {
  let scoped = listedBooks(store, principal);
  for (const cond of scopeConditions(store, principal, scope)) scoped = scoped.where(cond);
  const source = scoped.select([
    'book.id',
    'book.library_id',
    sql<number | null>`book.metadata_match_score`.as('score'),
    'm.language',
    'm.publisher',
    'm.series_name',
    'm.narrator',
    'm.content_rating',
    'm.age_rating',
    'm.published_date',
    'm.page_count',
    'm.amazon_rating',
    'm.goodreads_rating',
    'm.hardcover_rating',
    'm.lubimyczytac_rating',
    'm.ranobedb_rating',
    'm.audible_rating',
  ]);
  const compiled = sql`with s as materialized (${source}) ${sql.join(branches(principal.userId), sql` union all `)}`.compile(store.db);
  return remembered(store, compiled, () => assemble(rowsOf<{ k: string; name: string | null; n: number }>(store, compiled)));
}
