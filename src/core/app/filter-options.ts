// AppFilterOptions: for the books of a scope (the caller's visible, listed books, optionally one library, shelf or
// magic shelf), the values each list filter can take and how many books have each. One statement: the scope is
// materialised once, with the metadata the counts need, and every count is a GROUP BY over it.
import type { RawBuilder } from 'kysely';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import { readingAware } from '../store/reading-state.ts';
import { sameGeneration, SharedLoads, type Generation } from '../store/snapshot.ts';
import type { SqlExec } from '../store/sql-exec.ts';
import type { Store } from '../store/store.ts';
import { listedBooks, scopeConditions, type BookScope } from './book-scope.ts';
import { rowsOf } from './sql.ts';

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
  sql`select ${sql.lit(key)} as k, ${sql.raw(expression)} as name, count(*) as n from s where ${sql.raw(expression)} is not null and ${sql.raw(expression)} <> '' group by ${sql.raw(expression)}`;

/**
 * Names linked to the books through a mapping table, counted by books (a book is linked to a name once): grouped by
 * the name's id, the thousand most frequent looked up by name afterwards.
 */
const linked = (key: CountedKey, mapping: string, table: string, idColumn: string): Branch =>
  sql`select ${sql.lit(key)} as k, n.name as name, g.n as n from (select ${sql.ref(`x.${idColumn}`)} as id, count(*) as n from s join ${sql.table(mapping)} x on x.book_id = s.id group by 1 order by 2 desc limit ${NAME_LIMIT}) g join ${sql.table(table)} n on n.id = g.id`;


/** `case when e >= b1 then 'k1' …` over [key, lower bound] pairs (first match wins); null when e is null. */
const steps = (expression: string, bounds: [string, number][], below: string | null): string =>
  `case when ${expression} is null then null ${bounds.map(([key, low]) => `when ${expression} >= ${low} then '${key}'`).join(' ')} ${below === null ? '' : `else '${below}'`} end`;

const RATING: [string, number][] = [['5', 4.5], ['4', 4], ['3', 3], ['2', 2], ['1', 1]];
const rating = (column: string): string => steps(`s.${column}`, RATING, '0');

const AGE = `case when s.age_rating >= 0 and s.age_rating < 6 then '0' when s.age_rating >= 6 and s.age_rating < 10 then '6' when s.age_rating >= 10 and s.age_rating < 13 then '10'
  when s.age_rating >= 13 and s.age_rating < 16 then '13' when s.age_rating >= 16 and s.age_rating < 18 then '16' when s.age_rating >= 18 and s.age_rating < 21 then '18' when s.age_rating >= 21 then '21' end`;
const MATCH = steps('s.score', [['0', 0.95], ['1', 0.9], ['2', 0.8], ['3', 0.7], ['4', 0.5], ['5', 0.3], ['6', 0]], null);
const FILE_SIZE = steps('f.file_size_kb', [['7', 2097152], ['6', 1048576], ['5', 512000], ['4', 102400], ['3', 51200], ['2', 10240], ['1', 1024], ['0', 0]], null);
const PAGES = steps('s.page_count', [['6', 1000], ['5', 600], ['4', 400], ['3', 200], ['2', 100], ['1', 50]], '0');
const CREATOR_LABELS: Record<string, string> = { PENCILLER: 'penciller', INKER: 'inker', COLORIST: 'colorist', LETTERER: 'letterer', COVER_ARTIST: 'coverArtist', EDITOR: 'editor' };

/** Separates the parts of a composite name computed in SQL. */
const SEP = '\u0001';

/** The bucketed fields, each a bucket key per book (null: no value); counted together, see BUCKETS_BRANCH. */
const BUCKETS: [CountedKey, string][] = [
  ['ageRatings', AGE],
  ['matchScores', MATCH],
  ['pageCounts', PAGES],
  ['amazonRatings', rating('amazon_rating')],
  ['goodreadsRatings', rating('goodreads_rating')],
  ['hardcoverRatings', rating('hardcover_rating')],
  ['lubimyczytacRatings', rating('lubimyczytac_rating')],
  ['ranobedbRatings', rating('ranobedb_rating')],
  ['audibleRatings', rating('audible_rating')],
];

/**
 * Every bucketed field in one pass: the books grouped by the combination of their bucket keys (a few hundred
 * combinations at most), which assemble() adds up per field. One grouping instead of nine scans of the books.
 */
const BUCKETS_BRANCH: Branch = sql`select 'buckets' as k, ${sql.raw(BUCKETS.map(([, e]) => `coalesce(${e}, '')`).join(` || '${SEP}' || `))} as name, count(*) as n from s group by 2`;

/** The comic name tables, whose branches are left out while they are empty (each would still probe every book). */
const COMIC_TABLES = ['comic_metadata_character_mapping', 'comic_metadata_team_mapping', 'comic_metadata_location_mapping', 'comic_metadata_creator_mapping'] as const;

function branches(userId: number, withComics: boolean): Branch[] {
  const visibleShelf = sql`(sh.user_id = ${userId} or sh.is_public = 1)`;
  const comics = withComics
    ? [
        linked('comicCharacters', 'comic_metadata_character_mapping', 'comic_character', 'character_id'),
        linked('comicTeams', 'comic_metadata_team_mapping', 'comic_team', 'team_id'),
        linked('comicLocations', 'comic_metadata_location_mapping', 'comic_location', 'location_id'),
        sql`select 'comicCreators' as k, c.name || ${SEP} || x.role as name, count(*) as n from s join comic_metadata_creator_mapping x on x.book_id = s.id join comic_creator c on c.id = x.creator_id group by c.id, x.role`,
      ]
    : [];
  return [
    sql`select 'total' as k, null as name, count(*) as n from s`,
    linked('authors', 'book_metadata_author_mapping', 'author', 'author_id'),
    column('languages', 's.language'),
    // The caller's status and rating per book, in one pass: `<has a row>␁<status>␁<rating>`.
    sql`select 'progress' as k, (case when p.book_id is not null then '1' else '0' end) || ${SEP} || coalesce(p.read_status, '') || ${SEP} || coalesce(cast(p.personal_rating as text), '') as name, count(*) as n
        from s left join user_book_progress p on p.user_id = ${userId} and p.book_id = s.id group by 2`,
    sql`select 'fileTypes' as k, f.book_type as name, count(distinct f.book_id) as n from s join book_file f on f.book_id = s.id where f.is_book = 1 and f.book_type is not null group by f.book_type`,
    linked('categories', 'book_metadata_category_mapping', 'category', 'category_id'),
    column('publishers', 's.publisher'),
    column('series', 's.series_name'),
    linked('tags', 'book_metadata_tag_mapping', 'tag', 'tag_id'),
    linked('moods', 'book_metadata_mood_mapping', 'mood', 'mood_id'),
    column('narrators', 's.narrator'),
    column('contentRatings', 's.content_rating'),
    column('publishedYears', 'substr(s.published_date, 1, 4)'),
    sql`select 'fileSizes' as k, ${sql.raw(FILE_SIZE)} as name, count(distinct f.book_id) as n from s join book_file f on f.book_id = s.id where f.is_book = 1 group by 2`,
    BUCKETS_BRANCH,
    sql`select 'shelved' as k, null as name, count(distinct sm.book_id) as n from book_shelf_mapping sm join shelf sh on sh.id = sm.shelf_id where ${visibleShelf} and sm.book_id in (select id from s)`,
    ...comics,
    sql`select 'shelves' as k, sh.id || ':' || sh.name as name, g.n as n from (select sm.shelf_id as id, count(*) as n from s join book_shelf_mapping sm on sm.book_id = s.id group by 1) g join shelf sh on sh.id = g.id where ${visibleShelf}`,
    sql`select 'libraries' as k, l.id || ':' || l.name as name, g.n as n from (select s.library_id as id, count(*) as n from s group by 1) g join library l on l.id = g.id`,
  ];
}

const byCount = (a: CountedOption, b: CountedOption): number => b.count - a.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const byBucket = (a: CountedOption, b: CountedOption): number => Number(a.name) - Number(b.name);

// Made on first use: any Intl object loads ICU's locale data (~7 MB resident), which an idle daemon does without.
let displayNames: Intl.DisplayNames | undefined;

/** The English name of a language code (`en-GB` → English), as Java's Locale gives it; the code itself when unknown. */
export function languageLabel(code: string): string {
  const primary = code.split(/[-_]/)[0] ?? code;
  try {
    displayNames ??= new Intl.DisplayNames(['en'], { type: 'language', fallback: 'code' });
    return displayNames.of(primary.toLowerCase()) ?? code;
  } catch {
    return code;
  }
}

const BUCKET_KEYS = new Set<string>(['ageRatings', 'matchScores', 'fileSizes', 'amazonRatings', 'goodreadsRatings', 'hardcoverRatings', 'lubimyczytacRatings', 'ranobedbRatings', 'audibleRatings', 'pageCounts']);

function assemble(rows: { k: string; name: string | null; n: number }[]): Counted {
  const lists = new Map<string, CountedOption[]>();
  const add = (key: string, name: string, count: number): void => {
    lists.set(key, [...(lists.get(key) ?? []), { name, count }]);
  };
  let total = 0;
  let shelved = 0;
  let unset = 0;
  const statuses = new Map<string, number>();
  const ratings = new Map<string, number>();
  const buckets = new Map<string, number>();
  for (const r of rows) {
    if (r.k === 'total') total = r.n;
    else if (r.k === 'shelved') shelved = r.n;
    else if (r.k === 'buckets') {
      const keys = (r.name ?? '').split(SEP);
      BUCKETS.forEach(([field], i) => {
        const key = keys[i];
        if (key) buckets.set(`${field}${SEP}${key}`, (buckets.get(`${field}${SEP}${key}`) ?? 0) + r.n);
      });
    }
    else if (r.k === 'progress') {
      const [hasRow, status = '', rating = ''] = (r.name ?? '').split(SEP);
      // Books without a progress row count as UNSET; a row without a status (or marked UNSET) is not counted.
      if (hasRow !== '1') unset += r.n;
      else if (status !== '' && status !== 'UNSET') statuses.set(status, (statuses.get(status) ?? 0) + r.n);
      if (rating !== '') ratings.set(rating, (ratings.get(rating) ?? 0) + r.n);
    } else if (r.name !== null) add(r.k, r.k === 'comicCreators' ? creatorName(r.name) : r.name, r.n);
  }
  for (const [name, count] of statuses) add('readStatuses', name, count);
  for (const [name, count] of ratings) add('personalRatings', name, count);
  for (const [fieldAndKey, count] of buckets) {
    const [field = '', key = ''] = fieldAndKey.split(SEP);
    add(field, key, count);
  }
  if (shelved > 0) add('shelfStatuses', 'shelved', shelved);
  if (total - shelved > 0) add('shelfStatuses', 'unshelved', total - shelved);
  const out: Record<string, unknown> = {};
  for (const key of COUNTED_KEYS) {
    const list = lists.get(key) ?? [];
    if (BUCKET_KEYS.has(key)) list.sort(byBucket);
    else if (key === 'personalRatings') list.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
    else list.sort(byCount);
    out[key] = list.slice(0, NAME_LIMIT);
  }
  // Books without any progress row first, as UNSET.
  if (unset > 0) out.readStatuses = [{ name: 'UNSET', count: unset }, ...(out.readStatuses as CountedOption[])];
  out.languages = (lists.get('languages') ?? []).sort(byCount).slice(0, NAME_LIMIT).map((l) => ({ code: l.name, label: languageLabel(l.name), count: l.count }));
  return { options: out as AppFilterOptions, books: total };
}

function creatorName(joined: string): string {
  const [name, role = ''] = joined.split(SEP);
  return `${name}:${CREATOR_LABELS[role] ?? role.toLowerCase()}`;
}

/** The options of a scope and how many books it has (what counting them costs grows with). */
interface Counted {
  options: AppFilterOptions;
  books: number;
}

interface Cached extends Counted {
  generation: Generation;
  at: number;
}

const cache = new WeakMap<Store, Map<string, Cached>>();
const loadsByStore = new WeakMap<Store, SharedLoads<string, Counted>>();
const CACHE_ENTRIES = 64;
/**
 * Scopes of this many books are counted again at most every STALE_MS (counting 100,000 books takes about 1 s of CPU,
 * 10,000 about 100 ms; a few hundred, a few ms). Decided by the books, not by how long counting took: the same
 * catalog behaves the same on a quiet machine and a busy one.
 */
export const KEPT_AFTER_CHANGE_BOOKS = 10_000;
/** Grimmory keeps filter options for 30 seconds whatever changes. */
export const STALE_MS = 30_000;

/**
 * Kept until the catalog changes; for a scope of tens of thousands of books, for up to 30 seconds even then, as
 * Grimmory keeps them: a reader's progress reports change the catalog every few seconds. Callers asking while the same
 * options are counted share that count; what is counted while this process has a write open is not kept (it may yet
 * roll back), as with the other kept catalog results.
 */
async function cached(store: Store, key: string, compute: () => Promise<Counted>): Promise<AppFilterOptions> {
  let entries = cache.get(store);
  if (!entries) cache.set(store, (entries = new Map()));
  // The options count books by the caller's read status and rating.
  const generation = readingAware(store).generation();
  const hit = entries.get(key);
  const now = Date.now();
  if (hit && (sameGeneration(hit.generation, generation) || (hit.books >= KEPT_AFTER_CHANGE_BOOKS && now - hit.at < STALE_MS))) return hit.options;
  let loads = loadsByStore.get(store);
  if (!loads) loadsByStore.set(store, (loads = new SharedLoads()));
  const counted = await loads.share(key, generation, compute);
  if (store.writeInFlight() || entries.get(key)?.options === counted.options) return counted.options;
  entries.delete(key);
  entries.set(key, { ...counted, generation, at: now });
  if (entries.size > CACHE_ENTRIES) entries.delete(entries.keys().next().value as string);
  return counted.options;
}

const hasRows = async (exec: SqlExec, table: string): Promise<boolean> => (await exec.get(`SELECT 1 FROM ${table} LIMIT 1`)) !== undefined;

/** The filter options of the scope; AppError 403/404 for a library, shelf or magic shelf the caller may not open. */
export async function appFilterOptions(store: Store, principal: Principal, scope: BookScope): Promise<AppFilterOptions> {
  let scoped = listedBooks(store, principal);
  for (const cond of await scopeConditions(store, principal, scope)) scoped = scoped.where(cond);
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
  const withComics = (await Promise.all(COMIC_TABLES.map((t) => hasRows(store.exec, t)))).some(Boolean);
  // Kysely puts the embedded query in parentheses itself.
  const compiled = sql`with s as materialized ${source} ${sql.join(branches(principal.userId, withComics), sql` union all `)}`.compile(store.db);
  const key = `${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`;
  return cached(store, key, async () => assemble(await rowsOf<{ k: string; name: string | null; n: number }>(store.exec, compiled)));
}
