// Magic shelf rules (Grimmory's GroupRule JSON, behaviors.md §3) compiled to one SQL condition over `book` (joined
// with its metadata as `m`), evaluated for one user: progress-based fields read that user's progress. Visibility is
// applied separately by the caller. A rule that cannot be understood is skipped, as Grimmory skips it.
import type { Expression, RawBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { SqlDialect } from '../store/dialect.ts';
import { spelled } from '../komga/sql.ts';

type Cond = RawBuilder<SqlBool>;
type Value = RawBuilder<unknown>;

interface Rule {
  field?: unknown;
  operator?: unknown;
  value?: unknown;
  valueStart?: unknown;
  valueEnd?: unknown;
}

interface Ctx {
  d: SqlDialect;
  userId: number;
  now: Date;
}

const TRUE: Cond = sql<SqlBool>`1 = 1`;
const FALSE: Cond = sql<SqlBool>`1 = 0`;

const STRING_COLUMNS: Record<string, string> = {
  title: 'm.title',
  subtitle: 'm.subtitle',
  publisher: 'm.publisher',
  language: 'm.language',
  isbn13: 'm.isbn_13',
  isbn10: 'm.isbn_10',
  seriesName: 'm.series_name',
  description: 'm.description',
  narrator: 'm.narrator',
  contentRating: 'm.content_rating',
};

const NUMBER_COLUMNS: Record<string, string> = {
  seriesNumber: 'm.series_number',
  seriesTotal: 'm.series_total',
  pageCount: 'm.page_count',
  amazonRating: 'm.amazon_rating',
  amazonReviewCount: 'm.amazon_review_count',
  goodreadsRating: 'm.goodreads_rating',
  goodreadsReviewCount: 'm.goodreads_review_count',
  hardcoverRating: 'm.hardcover_rating',
  hardcoverReviewCount: 'm.hardcover_review_count',
  ranobedbRating: 'm.ranobedb_rating',
  lubimyczytacRating: 'm.lubimyczytac_rating',
  audibleRating: 'm.audible_rating',
  audibleReviewCount: 'm.audible_review_count',
  ageRating: 'm.age_rating',
  metadataScore: 'book.metadata_match_score',
  library: 'book.library_id',
};

/** Fields of the book's files: a book matches when one of its book files does. */
const FILE_COLUMNS: Record<string, { column: (d: SqlDialect) => string; kind: 'number' | 'string' }> = {
  fileSize: { column: () => 'f.file_size_kb', kind: 'number' },
  audiobookDuration: { column: () => 'f.duration_seconds', kind: 'number' },
  audiobookBitrate: { column: () => 'f.bitrate', kind: 'number' },
  audiobookChapterCount: { column: () => 'f.chapter_count', kind: 'number' },
  audiobookCodec: { column: () => 'f.codec', kind: 'string' },
  // The text after the last dot of the file name.
  fileType: { column: (d) => `CASE WHEN ${d.position('f.file_name', "'.'")} > 0 THEN substr(f.file_name, length(rtrim(f.file_name, replace(f.file_name, '.', ''))) + 1) END`, kind: 'string' },
};


const COLLECTIONS: Record<string, { mapping: string; table: string; column: string }> = {
  authors: { mapping: 'book_metadata_author_mapping', table: 'author', column: 'author_id' },
  categories: { mapping: 'book_metadata_category_mapping', table: 'category', column: 'category_id' },
  genre: { mapping: 'book_metadata_category_mapping', table: 'category', column: 'category_id' },
  moods: { mapping: 'book_metadata_mood_mapping', table: 'mood', column: 'mood_id' },
  tags: { mapping: 'book_metadata_tag_mapping', table: 'tag', column: 'tag_id' },
};

const NEGATIVE = new Set(['not_equals', 'does_not_contain', 'excludes_all']);

function list(value: unknown): unknown[] {
  if (Array.isArray(value)) return value.filter((v) => v !== null && v !== undefined);
  return value === null || value === undefined ? [] : [value];
}

const strings = (value: unknown): string[] => list(value).map((v) => String(v).toLowerCase());

function toNumber(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
  return Number.isFinite(n) ? n : undefined;
}

const numbers = (value: unknown): number[] => list(value).map(toNumber).filter((n): n is number => n !== undefined);

function toBool(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return /^(true|1|yes)$/i.test(value.trim()) ? true : /^(false|0|no)$/i.test(value.trim()) ? false : undefined;
  return undefined;
}

/** An ISO date-time or `yyyy-MM-dd` (start of that day in the server's zone). */
function toInstant(value: unknown): Date | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const text = String(value).trim();
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const date = day ? new Date(Number(day[1]), Number(day[2]) - 1, Number(day[3])) : new Date(text);
  return Number.isFinite(date.getTime()) ? date : undefined;
}

function like(expression: Value, pattern: string): Cond {
  return sql<SqlBool>`lower(${expression}) like ${pattern} escape '\\'`;
}

const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

function any(conds: Cond[]): Cond {
  return conds.length === 0 ? FALSE : conds.length === 1 ? (conds[0] as Cond) : sql<SqlBool>`(${sql.join(conds, sql` or `)})`;
}

function all(conds: Cond[]): Cond {
  return conds.length === 0 ? TRUE : conds.length === 1 ? (conds[0] as Cond) : sql<SqlBool>`(${sql.join(conds, sql` and `)})`;
}

const not = (cond: Cond): Cond => sql<SqlBool>`not (${cond})`;

/** Text comparisons, case-insensitive. */
function compareString(e: Value, rule: Rule, op: string, d: SqlDialect): Cond | undefined {
  const values = strings(rule.value);
  switch (op) {
    case 'equals':
    case 'includes_any':
      return values.length > 0 ? sql<SqlBool>`lower(${e}) in (${sql.join(values)})` : undefined;
    case 'includes_all':
      return values.length > 0 ? all(values.map((v) => sql<SqlBool>`lower(${e}) = ${v}`)) : undefined;
    case 'not_equals':
      return values.length > 0 ? sql<SqlBool>`lower(${e}) not in (${sql.join(values)})` : undefined;
    case 'excludes_all':
      return values.length > 0 ? sql<SqlBool>`(${e} is null or lower(${e}) not in (${sql.join(values)}))` : undefined;
    case 'contains':
      return values.length > 0 ? any(values.map((v) => like(e, `%${escapeLike(v)}%`))) : undefined;
    case 'does_not_contain':
      return values.length > 0 ? sql<SqlBool>`(${e} is null or not ${any(values.map((v) => like(e, `%${escapeLike(v)}%`)))})` : undefined;
    case 'starts_with':
      return values.length > 0 ? any(values.map((v) => like(e, `${escapeLike(v)}%`))) : undefined;
    case 'ends_with':
      return values.length > 0 ? any(values.map((v) => like(e, `%${escapeLike(v)}`))) : undefined;
    case 'is_empty':
      return sql<SqlBool>`(${e} is null or trim(${e}) = '')`;
    case 'is_not_empty':
      return sql<SqlBool>`(${e} is not null and trim(${e}) != '')`;
    default:
      return compareNumber(spelled(d.numberFromText, [e]), rule, op);
  }
}

function compareNumber(e: Value, rule: Rule, op: string): Cond | undefined {
  const values = numbers(rule.value);
  const first = values[0];
  switch (op) {
    case 'equals':
    case 'includes_any':
      return values.length > 0 ? sql<SqlBool>`${e} in (${sql.join(values)})` : undefined;
    case 'not_equals':
    case 'excludes_all':
      return values.length > 0 ? sql<SqlBool>`${e} not in (${sql.join(values)})` : undefined;
    case 'greater_than':
      return first !== undefined ? sql<SqlBool>`${e} > ${first}` : undefined;
    case 'greater_than_equal_to':
      return first !== undefined ? sql<SqlBool>`${e} >= ${first}` : undefined;
    case 'less_than':
      return first !== undefined ? sql<SqlBool>`${e} < ${first}` : undefined;
    case 'less_than_equal_to':
      return first !== undefined ? sql<SqlBool>`${e} <= ${first}` : undefined;
    case 'in_between': {
      const start = toNumber(rule.valueStart);
      const end = toNumber(rule.valueEnd);
      if (start === undefined && end === undefined) return undefined;
      return all([...(start !== undefined ? [sql<SqlBool>`${e} >= ${start}`] : []), ...(end !== undefined ? [sql<SqlBool>`${e} <= ${end}`] : [])]);
    }
    case 'is_empty':
      return sql<SqlBool>`${e} is null`;
    case 'is_not_empty':
      return sql<SqlBool>`${e} is not null`;
    default:
      return undefined;
  }
}

/** The start of the period (`week` from Monday, `month`, `year`), in the server's zone. */
function periodStart(now: Date, period: unknown): Date {
  const p = typeof period === 'string' ? period.toLowerCase() : 'year';
  if (p === 'week') {
    const d = new Date(now.getFullYear(), now.getMonth(), now.getDate());
    d.setDate(d.getDate() - ((d.getDay() + 6) % 7));
    return d;
  }
  if (p === 'month') return new Date(now.getFullYear(), now.getMonth(), 1);
  return new Date(now.getFullYear(), 0, 1);
}

function ago(now: Date, amount: number, unit: unknown): Date {
  const u = typeof unit === 'string' ? unit.toLowerCase() : 'days';
  const d = new Date(now);
  if (u === 'weeks') d.setDate(d.getDate() - amount * 7);
  else if (u === 'months') d.setMonth(d.getMonth() - amount);
  else if (u === 'years') d.setFullYear(d.getFullYear() - amount);
  else d.setDate(d.getDate() - amount);
  return d;
}

/**
 * Dates stored as ISO text: instants (`…T…Z`) compare whole; a calendar date (`published_date`) compares on its
 * `yyyy-MM-dd` part, which orders the same way as text.
 */
function compareDate(column: Value, rule: Rule, op: string, ctx: Ctx, calendar: boolean): Cond | undefined {
  const e = calendar ? sql`substr(${column}, 1, 10)` : column;
  const iso = (d: Date): string => (calendar ? `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}` : d.toISOString());
  const day = (d: Date): string => iso(d).slice(0, 10);
  const value = toInstant(Array.isArray(rule.value) ? rule.value[0] : rule.value);
  switch (op) {
    case 'equals':
      return value ? sql<SqlBool>`substr(${column}, 1, 10) = ${day(value)}` : undefined;
    case 'not_equals':
      return value ? sql<SqlBool>`substr(${column}, 1, 10) != ${day(value)}` : undefined;
    case 'greater_than':
      return value ? sql<SqlBool>`${e} > ${iso(value)}` : undefined;
    case 'greater_than_equal_to':
      return value ? sql<SqlBool>`${e} >= ${iso(value)}` : undefined;
    case 'less_than':
      return value ? sql<SqlBool>`${e} < ${iso(value)}` : undefined;
    case 'less_than_equal_to':
      return value ? sql<SqlBool>`${e} <= ${iso(value)}` : undefined;
    case 'in_between': {
      const start = toInstant(rule.valueStart);
      const end = toInstant(rule.valueEnd);
      if (!start && !end) return undefined;
      return all([...(start ? [sql<SqlBool>`${e} >= ${iso(start)}`] : []), ...(end ? [sql<SqlBool>`${e} <= ${iso(end)}`] : [])]);
    }
    case 'within_last':
    case 'older_than': {
      const amount = toNumber(Array.isArray(rule.value) ? rule.value[0] : rule.value);
      if (amount === undefined) return undefined;
      const threshold = iso(ago(ctx.now, amount, rule.valueEnd));
      return op === 'within_last' ? sql<SqlBool>`${e} >= ${threshold}` : sql<SqlBool>`${e} < ${threshold}`;
    }
    case 'this_period':
      return sql<SqlBool>`${e} >= ${iso(periodStart(ctx.now, Array.isArray(rule.value) ? rule.value[0] : rule.value))}`;
    case 'is_empty':
      return sql<SqlBool>`(${column} is null or ${column} = '')`;
    case 'is_not_empty':
      return sql<SqlBool>`(${column} is not null and ${column} != '')`;
    default:
      return undefined;
  }
}

function compareBoolean(e: Value, rule: Rule, op: string): Cond | undefined {
  const value = toBool(Array.isArray(rule.value) ? rule.value[0] : rule.value);
  if (op === 'is_empty') return sql<SqlBool>`${e} is null`;
  if (op === 'is_not_empty') return sql<SqlBool>`${e} is not null`;
  if (value === undefined) return undefined;
  if (op === 'equals') return sql<SqlBool>`coalesce(${e}, 0) = ${value ? 1 : 0}`;
  if (op === 'not_equals') return sql<SqlBool>`coalesce(${e}, 0) != ${value ? 1 : 0}`;
  return undefined;
}

/** Named collections: some entry present, all present, none present, or entries matching a text test. */
function compareCollection(field: string, rule: Rule, op: string): Cond | undefined {
  const c = COLLECTIONS[field] as { mapping: string; table: string; column: string };
  const where = (condition: Cond): Cond =>
    sql<SqlBool>`exists (select 1 from ${sql.table(c.mapping)} cm join ${sql.table(c.table)} cn on cn.id = ${sql.ref(`cm.${c.column}`)} where cm.book_id = book.id and ${condition})`;
  const name = sql.ref('cn.name');
  const values = strings(rule.value);
  switch (op) {
    case 'equals':
    case 'includes_any':
      return values.length > 0 ? where(sql<SqlBool>`lower(${name}) in (${sql.join(values)})`) : undefined;
    case 'includes_all':
      return values.length > 0 ? all(values.map((v) => where(sql<SqlBool>`lower(${name}) = ${v}`))) : undefined;
    case 'not_equals':
    case 'excludes_all':
      return values.length > 0 ? not(where(sql<SqlBool>`lower(${name}) in (${sql.join(values)})`)) : undefined;
    case 'contains':
      return values.length > 0 ? where(any(values.map((v) => like(name, `%${escapeLike(v)}%`)))) : undefined;
    case 'does_not_contain':
      return values.length > 0 ? not(where(any(values.map((v) => like(name, `%${escapeLike(v)}%`))))) : undefined;
    case 'starts_with':
      return values.length > 0 ? where(any(values.map((v) => like(name, `${escapeLike(v)}%`)))) : undefined;
    case 'ends_with':
      return values.length > 0 ? where(any(values.map((v) => like(name, `%${escapeLike(v)}`)))) : undefined;
    case 'is_empty':
      return not(where(TRUE));
    case 'is_not_empty':
      return where(TRUE);
    default:
      return undefined;
  }
}

function compareShelf(rule: Rule, op: string): Cond | undefined {
  const ids = numbers(rule.value);
  const onShelves = (shelves: number[]): Cond => sql<SqlBool>`exists (select 1 from book_shelf_mapping sm where sm.book_id = book.id and sm.shelf_id in (${sql.join(shelves)}))`;
  switch (op) {
    case 'equals':
    case 'includes_any':
      return ids.length > 0 ? onShelves(ids) : undefined;
    case 'includes_all':
      return ids.length > 0 ? all(ids.map((id) => onShelves([id]))) : undefined;
    case 'not_equals':
    case 'excludes_all':
    case 'does_not_contain':
      return ids.length > 0 ? not(onShelves(ids)) : undefined;
    case 'is_empty':
      return sql<SqlBool>`not exists (select 1 from book_shelf_mapping sm where sm.book_id = book.id)`;
    case 'is_not_empty':
      return sql<SqlBool>`exists (select 1 from book_shelf_mapping sm where sm.book_id = book.id)`;
    default:
      return undefined;
  }
}

const progress = (ctx: Ctx, column: string): Value => sql`(select ${sql.ref(`p.${column}`)} from user_book_progress p where p.user_id = ${ctx.userId} and p.book_id = book.id)`;

function compareReadStatus(rule: Rule, op: string, ctx: Ctx): Cond | undefined {
  const status = progress(ctx, 'read_status');
  const values = list(rule.value).map((v) => String(v).toUpperCase());
  const named = values.filter((v) => v !== 'UNSET');
  const matches = any([
    ...(named.length > 0 ? [sql<SqlBool>`${status} in (${sql.join(named)})`] : []),
    ...(values.includes('UNSET') ? [sql<SqlBool>`coalesce(${status}, 'UNSET') = 'UNSET'`] : []),
  ]);
  if (op === 'is_empty') return sql<SqlBool>`${status} is null`;
  if (op === 'is_not_empty') return sql<SqlBool>`${status} is not null`;
  if (values.length === 0) return undefined;
  if (op === 'equals' || op === 'includes_any' || op === 'contains') return matches;
  // Negations also match books the user has no status for.
  if (NEGATIVE.has(op)) return sql<SqlBool>`not coalesce(${matches}, FALSE)`;
  return undefined;
}

/** Any of the book's files passes the test; for negations, none of them passes the positive test. */
function compareFiles(field: string, rule: Rule, op: string, d: SqlDialect): Cond | undefined {
  const { column, kind } = FILE_COLUMNS[field] as { column: (d: SqlDialect) => string; kind: 'number' | 'string' };
  const e = sql.raw(column(d));
  const exists = (condition: Cond): Cond => sql<SqlBool>`exists (select 1 from book_file f where f.book_id = book.id and f.is_book = 1 and ${condition})`;
  if (op === 'is_empty') return not(exists(sql<SqlBool>`${e} is not null`));
  if (op === 'is_not_empty') return exists(sql<SqlBool>`${e} is not null`);
  const positive = NEGATIVE.has(op) ? (op === 'does_not_contain' ? 'contains' : 'includes_any') : op;
  const test = kind === 'number' ? compareNumber(e, rule, positive) : compareString(e, rule, positive, d);
  if (!test) return undefined;
  return NEGATIVE.has(op) ? not(exists(test)) : exists(test);
}

// KOReader's progress is stored as the fraction the device sends (0..1); the others are percents.
const READING_PROGRESS = (ctx: Ctx): Value =>
  sql`(select ${sql.raw(
    ['coalesce(p.koreader_progress_percent, 0) * 100', 'coalesce(p.kobo_progress_percent, 0)', 'coalesce(p.pdf_progress_percent, 0)', 'coalesce(p.epub_progress_percent, 0)', 'coalesce(p.cbx_progress_percent, 0)'].reduce((a, b) =>
      ctx.d.greatest(a, b),
    ),
  )} from user_book_progress p where p.user_id = ${ctx.userId} and p.book_id = book.id)`;

/** book_metadata columns a `metadataPresence` rule may name, by their JSON names. */
const PRESENCE_COLUMNS: Record<string, string> = {
  thumbnailUrl: 'm.cover_updated_on',
  title: 'm.title', subtitle: 'm.subtitle', description: 'm.description', publisher: 'm.publisher', language: 'm.language',
  seriesName: 'm.series_name', isbn13: 'm.isbn_13', isbn10: 'm.isbn_10', asin: 'm.asin', contentRating: 'm.content_rating',
  narrator: 'm.narrator', pageCount: 'm.page_count', seriesNumber: 'm.series_number', seriesTotal: 'm.series_total',
  ageRating: 'm.age_rating', publishedDate: 'm.published_date', abridged: 'm.abridged',
  goodreadsId: 'm.goodreads_id', hardcoverId: 'm.hardcover_id', hardcoverBookId: 'm.hardcover_book_id', googleId: 'm.google_id',
  comicvineId: 'm.comicvine_id', lubimyczytacId: 'm.lubimyczytac_id', ranobedbId: 'm.ranobedb_id', audibleId: 'm.audible_id',
  doubanId: 'm.douban_id', amazonRating: 'm.amazon_rating', amazonReviewCount: 'm.amazon_review_count',
  goodreadsRating: 'm.goodreads_rating', goodreadsReviewCount: 'm.goodreads_review_count', hardcoverRating: 'm.hardcover_rating',
  hardcoverReviewCount: 'm.hardcover_review_count', ranobedbRating: 'm.ranobedb_rating', lubimyczytacRating: 'm.lubimyczytac_rating',
  audibleRating: 'm.audible_rating', audibleReviewCount: 'm.audible_review_count', doubanRating: 'm.douban_rating',
  doubanReviewCount: 'm.douban_review_count',
};

const COMIC_PRESENCE: Record<string, Cond> = {
  comicCharacters: sql<SqlBool>`exists (select 1 from comic_metadata_character_mapping x where x.book_id = book.id)`,
  comicTeams: sql<SqlBool>`exists (select 1 from comic_metadata_team_mapping x where x.book_id = book.id)`,
  comicLocations: sql<SqlBool>`exists (select 1 from comic_metadata_location_mapping x where x.book_id = book.id)`,
  ...Object.fromEntries(
    [['comicPencillers', 'PENCILLER'], ['comicInkers', 'INKER'], ['comicColorists', 'COLORIST'], ['comicLetterers', 'LETTERER'], ['comicCoverArtists', 'COVER_ARTIST'], ['comicEditors', 'EDITOR']].map(
      ([name, role]) => [name, sql<SqlBool>`exists (select 1 from comic_metadata_creator_mapping x where x.book_id = book.id and x.role = ${role})`],
    ),
  ),
};

function presence(rule: Rule, op: string, ctx: Ctx): Cond | undefined {
  const name = String(Array.isArray(rule.value) ? rule.value[0] : rule.value ?? '');
  let present: Cond | undefined;
  const column = PRESENCE_COLUMNS[name];
  // Numbers too are tested as text (a blank is absent): the cast makes that valid on both engines.
  if (column) present = sql<SqlBool>`(${sql.raw(column)} is not null and trim(CAST(${sql.raw(column)} AS TEXT)) != '')`;
  else if (name in COLLECTIONS) present = compareCollection(name, {}, 'is_not_empty');
  else if (name in COMIC_PRESENCE) present = COMIC_PRESENCE[name];
  else if (name === 'personalRating') present = sql<SqlBool>`${progress(ctx, 'personal_rating')} is not null`;
  else if (name === 'audiobookDuration') present = compareFiles('audiobookDuration', {}, 'is_not_empty', ctx.d);
  if (!present) return undefined;
  return op === 'equals' ? present : not(present);
}

/** Books of the same (non-blank) series as `book`, as `s2`/`m2`, with the user's status as `p2`. */
function seriesBooks(ctx: Ctx, select: string, where: string): Value {
  return sql`(select ${sql.raw(select)} from book s2 join book_metadata m2 on m2.book_id = s2.id left join user_book_progress p2 on p2.book_id = s2.id and p2.user_id = ${ctx.userId} where s2.deleted = 0 and ${sql.raw(sameSeries(ctx.d, 'm2', 'm'))} and ${sql.raw(where)})`;
}

const STARTED = `('READING', 'RE_READING', 'READ', 'PARTIALLY_READ')`;

/** Two metadata rows (by alias) of the same series name, letter case aside. */
const sameSeries = (d: SqlDialect, a: string, b: string): string => `${d.nocase(`${a}.series_name`)} = ${d.nocase(`${b}.series_name`)}`;

function seriesRule(field: string, rule: Rule, op: string, ctx: Ctx): Cond | undefined {
  const value = String(Array.isArray(rule.value) ? rule.value[0] : rule.value ?? '').toLowerCase();
  const count = (where: string): Value => seriesBooks(ctx, 'count(*)', where);
  const whole = (e: string): string => ctx.d.integerPart(e);
  const isLast = `${whole('m2.series_number')} = (select max(m3.series_total) from book_metadata m3 where ${sameSeries(ctx.d, 'm3', 'm')})`;
  const tests: Record<string, Record<string, Cond>> = {
    seriesStatus: {
      reading: sql<SqlBool>`${count(`p2.read_status in ('READING', 'RE_READING')`)} > 0`,
      not_started: sql<SqlBool>`${count(`p2.read_status in ${STARTED}`)} = 0`,
      fully_read: sql<SqlBool>`${count(`coalesce(p2.read_status, '') != 'READ'`)} = 0`,
      completed: sql<SqlBool>`${count(isLast)} > 0`,
      ongoing: sql<SqlBool>`(${seriesBooks(ctx, 'max(m2.series_total)', '1 = 1')} is not null and ${count(isLast)} = 0)`,
    },
    seriesGaps: {
      any_gap: sql<SqlBool>`${seriesBooks(ctx, `count(distinct ${whole('m2.series_number')})`, 'm2.series_number >= 1')} < ${seriesBooks(ctx, `max(${whole('m2.series_number')})`, 'm2.series_number >= 1')}`,
      missing_first: sql<SqlBool>`(${count('m2.series_number is not null')} > 0 and ${count(`${whole('m2.series_number')} = 1`)} = 0)`,
      missing_latest: sql<SqlBool>`${seriesBooks(ctx, 'max(m2.series_total)', '1 = 1')} > coalesce(${seriesBooks(ctx, `max(${whole('m2.series_number')})`, 'm2.series_number is not null')}, 0)`,
      duplicate_number: sql<SqlBool>`${seriesBooks(ctx, 'count(m2.series_number) - count(distinct m2.series_number)', '1 = 1')} > 0`,
    },
    seriesPosition: {
      next_unread: sql<SqlBool>`(coalesce((select p.read_status from user_book_progress p where p.user_id = ${ctx.userId} and p.book_id = book.id), '') != 'READ' and m.series_number = ${seriesBooks(ctx, 'min(m2.series_number)', `coalesce(p2.read_status, '') != 'READ'`)})`,
      first_in_series: sql<SqlBool>`m.series_number = ${seriesBooks(ctx, 'min(m2.series_number)', '1 = 1')}`,
      last_in_series: sql<SqlBool>`m.series_number = ${seriesBooks(ctx, 'max(m2.series_number)', '1 = 1')}`,
    },
  };
  const test = tests[field]?.[value];
  if (!test) return undefined;
  const inSeries = sql<SqlBool>`(m.series_name is not null and trim(m.series_name) != '')`;
  if (op === 'equals') return sql<SqlBool>`(${inSeries} and coalesce(${test}, FALSE))`;
  if (op === 'not_equals') return sql<SqlBool>`(${inSeries} and not coalesce(${test}, FALSE))`;
  return undefined;
}

function compileRule(rule: Rule, ctx: Ctx): Cond | undefined {
  const field = typeof rule.field === 'string' ? rule.field : undefined;
  const op = typeof rule.operator === 'string' ? rule.operator : undefined;
  if (!field || !op) return undefined;
  if (field in STRING_COLUMNS) return compareString(sql.raw(STRING_COLUMNS[field] as string), rule, op, ctx.d);
  if (field in NUMBER_COLUMNS) return compareNumber(sql.raw(NUMBER_COLUMNS[field] as string), rule, op);
  if (field in FILE_COLUMNS) return compareFiles(field, rule, op, ctx.d);
  if (field in COLLECTIONS) return compareCollection(field, rule, op);
  switch (field) {
    case 'shelf':
      return compareShelf(rule, op);
    case 'readStatus':
      return compareReadStatus(rule, op, ctx);
    case 'personalRating':
      return compareNumber(progress(ctx, 'personal_rating'), rule, op);
    case 'readingProgress':
      return compareNumber(READING_PROGRESS(ctx), rule, op);
    case 'publishedDate':
      return compareDate(sql.raw('m.published_date'), rule, op, ctx, true);
    case 'addedOn':
      return compareDate(sql.raw('book.added_on'), rule, op, ctx, false);
    case 'dateFinished':
      return compareDate(progress(ctx, 'date_finished'), rule, op, ctx, false);
    case 'lastReadTime':
      return compareDate(progress(ctx, 'last_read_time'), rule, op, ctx, false);
    case 'abridged':
      return compareBoolean(sql.raw('m.abridged'), rule, op);
    case 'isPhysical':
      return compareBoolean(sql.raw('book.is_physical'), rule, op);
    case 'metadataPresence':
      return presence(rule, op, ctx);
    case 'seriesStatus':
    case 'seriesGaps':
    case 'seriesPosition':
      return seriesRule(field, rule, op, ctx);
    default:
      return undefined;
  }
}

function compileGroup(node: Record<string, unknown>, ctx: Ctx, depth: number): Cond {
  if (depth > 32) return TRUE;
  const parts: Cond[] = [];
  for (const child of Array.isArray(node.rules) ? node.rules : []) {
    if (typeof child !== 'object' || child === null || Array.isArray(child)) continue;
    const c = child as Record<string, unknown>;
    const cond = c.type === 'group' ? compileGroup(c, ctx, depth + 1) : compileRule(c as Rule, ctx);
    if (cond) parts.push(cond);
  }
  // An empty group matches everything, whatever its join.
  if (parts.length === 0) return TRUE;
  return node.join === 'and' ? all(parts) : any(parts);
}

/** The shelf's rules as one condition, or undefined when its JSON is not a rule group at all. */
export function compileMagicShelf(d: SqlDialect, filterJson: string, userId: number, now: Date = new Date()): Expression<SqlBool> | undefined {
  let root: unknown;
  try {
    root = JSON.parse(filterJson);
  } catch {
    return undefined;
  }
  if (typeof root !== 'object' || root === null || Array.isArray(root)) return undefined;
  return compileGroup(root as Record<string, unknown>, { d, userId, now }, 0);
}
