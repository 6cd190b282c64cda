// The mobile book list: the listed books of a scope that pass the filters, in one of Grimmory's app orders, a page at a
// time (ORDER BY … LIMIT/OFFSET in SQL) or as the full list of ids.
import type { SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { SqlDialect } from '../store/dialect.ts';
import type { Store } from '../store/store.ts';
import { filterConditions, type BookFilters, type Cond } from './book-filters.ts';
import { listedBooks, listedBooksByMetadata, scopeConditions, type BookScope } from './book-scope.ts';
import { columnOf, direction, rememberedCount } from './sql.ts';

export interface AppBookQuery extends BookFilters, BookScope {
  sort?: string;
  dir?: string;
}

export interface PageOfIds {
  ids: number[];
  total: number;
}

interface SortColumn {
  expression: (dialect: SqlDialect) => string;
  /** Reads the caller's progress row (`p`). */
  progress?: boolean;
  /** Has an index on book_metadata that an ordered walk can follow. */
  indexed?: boolean;
}

/** The app's sort names (any letter case) and what they order by; an unknown name orders by date added. */
const SORTS: Record<string, SortColumn> = {
  addedon: { expression: () => 'book.added_on' },
  title: { expression: (d) => d.nocase('m.title'), indexed: true },
  seriesname: { expression: (d) => d.nocase('m.series_name'), indexed: true },
  series: { expression: (d) => d.nocase('m.series_name'), indexed: true },
  seriesnumber: { expression: () => 'm.series_number' },
  pagecount: { expression: () => 'm.page_count' },
  language: { expression: (d) => d.nocase('m.language') },
  publisher: { expression: (d) => d.nocase('m.publisher') },
  publisheddate: { expression: () => 'm.published_date' },
  amazonrating: { expression: () => 'm.amazon_rating' },
  amazonreviewcount: { expression: () => 'm.amazon_review_count' },
  goodreadsrating: { expression: () => 'm.goodreads_rating' },
  goodreadsreviewcount: { expression: () => 'm.goodreads_review_count' },
  hardcoverrating: { expression: () => 'm.hardcover_rating' },
  hardcoverreviewcount: { expression: () => 'm.hardcover_review_count' },
  ranobedbrating: { expression: () => 'm.ranobedb_rating' },
  narrator: { expression: (d) => d.nocase('m.narrator') },
  lastreadtime: { expression: () => 'p.last_read_time', progress: true },
  readstatus: { expression: () => 'p.read_status', progress: true },
  datefinished: { expression: () => 'p.date_finished', progress: true },
  personalrating: { expression: () => 'p.personal_rating', progress: true },
};

const ADDED_ON = SORTS.addedon as SortColumn;

export interface AppOrder {
  column: SortColumn;
  descending: boolean;
}

/** `dir=asc` (any case) is ascending; anything else, or nothing, descending. */
export function appOrder(sort: string | undefined, dir: string | undefined): AppOrder {
  return { column: SORTS[(sort ?? 'addedOn').toLowerCase()] ?? ADDED_ON, descending: dir?.toLowerCase() !== 'asc' };
}

/** Scope and filter conditions of a request; throws AppError for a scope the caller may not open or a bad value. */
export async function queryConditions(store: Store, principal: Principal, query: AppBookQuery): Promise<Cond[]> {
  return [...(await scopeConditions(store, principal, query)), ...filterConditions(query, principal.userId, store.dialect)];
}

const allConditions = (conditions: Cond[]): Cond => (conditions.length === 0 ? sql<SqlBool>`1 = 1` : sql<SqlBool>`(${sql.join(conditions, sql` and `)})`);

/** Whether every book has its metadata row (the catalog always writes one); counted once per catalog change. */
export async function everyBookHasMetadata(store: Store): Promise<boolean> {
  return (await rememberedCount(store, { sql: 'SELECT CASE WHEN (SELECT count(*) FROM book) = (SELECT count(*) FROM book_metadata) THEN 1 ELSE 0 END', parameters: [] })) === 1;
}

/**
 * A page of matching books in the order, and how many match. The newest-first order walks the date index, with the
 * library condition kept off the library index (which SQLite would otherwise prefer and then sort all of it); title
 * and series orders walk their metadata index.
 */
export async function pageOfAppBooks(store: Store, principal: Principal, conditions: Cond[], order: AppOrder, page: { offset: number; limit: number }): Promise<PageOfIds> {
  const where = allConditions(conditions);
  const total = await rememberedCount(store, listedBooks(store, principal).where(where).select(sql<number>`count(*)`.as('n')).compile());
  if (page.offset >= total) return { ids: [], total };
  const dir = direction(order.descending);
  const byMetadata = order.column.indexed === true && (await everyBookHasMetadata(store));
  let query = (byMetadata ? listedBooksByMetadata(store, principal) : listedBooks(store, principal, { libraryIndex: order.column !== ADDED_ON })).where(where) as ReturnType<typeof listedBooks>;
  if (order.column.progress) {
    query = query.leftJoin('user_book_progress as p', (join) => join.onRef('p.book_id', '=', 'book.id').on('p.user_id', '=', principal.userId)) as unknown as typeof query;
  }
  // Ties go by id; by the metadata row's id when walking its index, which SQLite then sees the index already orders.
  const compiled = query
    .select('book.id')
    .orderBy(sql`${sql.raw(order.column.expression(store.dialect))} ${dir}`)
    .orderBy(sql`${sql.raw(byMetadata ? 'm.book_id' : 'book.id')} ${dir}`)
    .limit(page.limit)
    .offset(page.offset)
    .compile();
  return { ids: await columnOf<number>(store.exec, compiled), total };
}

/** Every matching book id, ascending (the app's "select all"). */
export function allAppBookIds(store: Store, principal: Principal, conditions: Cond[]): Promise<number[]> {
  return columnOf<number>(store.exec, listedBooks(store, principal).where(allConditions(conditions)).select('book.id').orderBy('book.id').compile());
}
