// The mobile book list: the listed books of a scope that pass the filters, in one of Grimmory's app orders, a page at a
// time (resumed after the previous page where an index gives the order, else from the list sorted once) or as the
// full list of ids.
import type { SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import { countVisible } from '../auth/visibility.ts';
import type { SqlDialect } from '../store/dialect.ts';
import { firstColumn, type SqlValue } from '../store/sql-exec.ts';
import type { Store } from '../store/store.ts';
import { filterConditions, type BookFilters, type Cond } from './book-filters.ts';
import { listedBooks, listedBooksByMetadata, readsMetadata, scopeConditions, type BookScope, type ListedBooks } from './book-scope.ts';
import { readingAware, sourceForSql } from '../store/reading-state.ts';
import { memosPerOwner } from '../store/snapshot.ts';
import { columnOf, direction, rememberedCount, rowsOf, type Compiled } from './sql.ts';
import { compiledOnce } from '../store/compiled-once.ts';
import { resumedPage, type ListPart, type ResumableRow } from '../store/resumed-pages.ts';

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
  /** Walked along an index (with the id as its last part): a page can resume after the row a page ended on. */
  resumable?: boolean;
  /** Never NULL. */
  notNull?: boolean;
}

/** The app's sort names (any letter case) and what they order by; an unknown name orders by date added. */
const SORTS: Record<string, SortColumn> = {
  addedon: { expression: () => 'book.added_on', resumable: true, notNull: true },
  title: { expression: (d) => d.nocase('m.title'), indexed: true, resumable: true },
  seriesname: { expression: (d) => d.nocase('m.series_name'), indexed: true, resumable: true },
  series: { expression: (d) => d.nocase('m.series_name'), indexed: true, resumable: true },
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

/** Rows before a page from which it is a slice of the whole sorted list rather than a walk of the index (see below). */
const DEEP_OFFSET = 2_000;

/**
 * Per list and catalog state, every matching id in an order no index gives (page count, ratings, the caller's
 * progress…), or in any order for pages deep in the list: sorting the whole list costs what sorting it for one page
 * with LIMIT/OFFSET does, so it is sorted once and every later page of it is a slice. A few lists are kept (4 bytes a
 * book).
 */
const SORTED_LISTS = 8;
const sortedLists = memosPerOwner<string, Uint32Array>(SORTED_LISTS);

async function sortedList(store: Store, list: string, byProgress: boolean, load: () => Promise<number[]>): Promise<Uint32Array> {
  // A write of this process still open may roll back: what is read meanwhile is not kept.
  if (store.writeInFlight()) return Uint32Array.from(await load());
  const memo = sortedLists(store);
  // Ordered or filtered by the caller's progress: kept under the reading state's generation too.
  return memo.getAsync(byProgress ? readingAware(store) : sourceForSql(store, list), list, async () => Uint32Array.from(await load()));
}

/** Per catalog and caller (a caller's principal is a new object once the catalog changes): the count of the whole list. */
const wholeListCounts = new WeakMap<Store, WeakMap<Principal, Compiled>>();

/** The statement counting the list; the one without filters (the list as the app opens it) is built once per caller. */
function countingStatement(store: Store, principal: Principal, conditions: Cond[], where: Cond): Compiled {
  const metadata = readsMetadata(conditions);
  const build = (): Compiled => countVisible(store.db, principal, (who) => listedBooks(store, who, { metadata }).where(where));
  if (conditions.length > 0) return build();
  let byCaller = wholeListCounts.get(store);
  if (!byCaller) wholeListCounts.set(store, (byCaller = new WeakMap()));
  let counting = byCaller.get(principal);
  if (!counting) byCaller.set(principal, (counting = build()));
  return counting;
}

/**
 * A page of matching books in the order, and how many match. The newest-first order walks the date index, with the
 * library condition kept off the library index (which SQLite would otherwise prefer and then sort all of it); title
 * and series orders walk their metadata index. In these orders a page starts where an earlier page of the same list
 * ended (after that row's value and id), so the walk skips nothing: page 1,000 costs what page 1 does. Other orders
 * have no index to walk: the list is sorted once per catalog state and paged from memory.
 */
export async function pageOfAppBooks(store: Store, principal: Principal, conditions: Cond[], order: AppOrder, page: { offset: number; limit: number }): Promise<PageOfIds> {
  const where = allConditions(conditions);
  const counting = countingStatement(store, principal, conditions, where);
  // A page deep in the list with no kept point near it (a catalog change drops them all) would walk every row before
  // it (tens of ms at 100,000 books, one page after another): from this deep, every page is a slice of the whole list.
  const sliced = !order.column.resumable || page.offset >= DEEP_OFFSET;
  const dir = direction(order.descending);
  const byMetadata = order.column.indexed === true && (await everyBookHasMetadata(store));
  const listQuery = (): ListedBooks => {
    const query = (byMetadata ? listedBooksByMetadata(store, principal) : listedBooks(store, principal, { libraryIndex: order.column !== ADDED_ON })).where(where) as ListedBooks;
    if (!order.column.progress) return query;
    return query.leftJoin('user_book_progress as p', (join) => join.onRef('p.book_id', '=', 'book.id').on('p.user_id', '=', principal.userId)) as unknown as ListedBooks;
  };
  const expression = order.column.expression(store.dialect);
  // Ties go by id; by the metadata row's id when walking its index, which SQLite then sees the index already orders.
  const id = byMetadata ? 'm.book_id' : 'book.id';
  const ordered = (q: ListedBooks, column: 'id' | 'v' = 'id') =>
    q
      .select(sql.ref<number>('book.id').as(column))
      .orderBy(sql`${sql.raw(expression)} ${dir}`)
      .orderBy(sql`${sql.raw(id)} ${dir}`);
  // The list is its books (what the count counts) in this order, which is the caller's own when it reads progress.
  const list = `${expression} ${order.descending} ${byMetadata} ${order.column.progress ? principal.userId : ''}\u0000${counting.sql}\u0000${JSON.stringify(counting.parameters)}`;
  if (sliced) {
    const ids = await sortedList(store, list, order.column.progress === true, async () => {
      // The whole list sorted (tens of ms at 100,000 books), as one JSON array read aside: other requests are answered
      // meanwhile, and 100,000 ids come back as one text rather than 100,000 rows.
      const listed = ordered(listQuery(), 'v').compile();
      const [text] = firstColumn<string>(await store.readAside(store.dialect.orderedJsonArray(listed.sql), listed.parameters as SqlValue[]));
      return JSON.parse(text ?? '[]') as number[];
    });
    // A list sorted whole is its own count (the same books): counting them too would read every book once more.
    return { ids: [...ids.subarray(page.offset, page.offset + page.limit)], total: ids.length };
  }
  const total = await rememberedCount(store, counting);
  if (page.offset >= total) return { ids: [], total };

  const value = sql.raw(expression);
  // The list names everything the statement depends on but the part's values and the paging: compiled once per caller
  // (a new principal once the catalog changes), list and part, then only given those values.
  const rows = (part: ListPart | undefined, limit: number, offset: number): Compiled =>
    compiledOnce(principal, `app books\u0000${list}\u0000${part?.shape ?? 'from the start'}`, [...(part?.values ?? []), limit, offset], () => {
      const query = listQuery();
      return ordered(part ? query.where(part.condition) : query).select(sql<unknown>`${value}`.as('resume_value')).limit(limit).offset(offset).compile();
    });
  const ids = await resumedPage(store, list, { descending: order.descending, nullable: order.column.notNull !== true, value, id: sql.raw(id) }, page, {
    rows: (part, limit, offset) => rowsOf<ResumableRow>(store.exec, rows(part, limit, offset)),
    count: (part) => countOf(store, listQuery().where(part.condition)),
  });
  return { ids, total };
}

async function countOf(store: Store, query: ListedBooks): Promise<number> {
  return Number((await columnOf<number>(store.exec, query.select(sql<number>`count(*)`.as('n')).compile()))[0] ?? 0);
}

/** Every matching book id, ascending (the app's "select all"). */
export function allAppBookIds(store: Store, principal: Principal, conditions: Cond[]): Promise<number[]> {
  return columnOf<number>(store.exec, listedBooks(store, principal).where(allConditions(conditions)).select('book.id').orderBy('book.id').compile());
}
