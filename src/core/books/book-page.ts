// One page of the visible books in a Spring Data order (`sort=metadata.title,asc`), as ids plus the total count.
// The page is an ORDER BY … LIMIT in SQL, walking an index where the order has one (id, addedOn, title), resumed after
// the previous page in an order by one property and with OFFSET otherwise; the count is kept until the catalog changes.
import { sql, type OrderByItemBuilder, type SelectQueryBuilder } from 'kysely';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { visibleBookFilter } from '../auth/visibility.ts';
import { dialectOf } from '../store/dialect.ts';
import type { DB } from '../store/db-types.ts';
import { compiledOnce } from '../store/compiled-once.ts';
import { resumedPage, type ResumableRow } from '../store/resumed-pages.ts';
import { readingAware, touchesReadingState } from '../store/reading-state.ts';
import { memosPerOwner, readerSource } from '../store/snapshot.ts';
import type { Store } from '../store/store.ts';
import type { CatalogReader } from './book-bundles.ts';
import { camel } from './book-json.ts';
import { metadataTableColumns, type MetadataColumn } from './metadata-columns.ts';
import { RememberedAnswers } from '../remembered-answers.ts';

export class SortError extends Error {
  override name = 'SortError';
}

export interface PageRequest {
  page: number;
  size: number;
  /** Spring `sort` values: `property` or `property,asc|desc`. */
  sort: string[];
}

export interface PageOfIds {
  ids: number[];
  totalElements: number;
}

const BOOK_PROPERTIES: Record<string, string> = {
  id: 'book.id',
  addedOn: 'book.added_on',
  scannedOn: 'book.scanned_on',
  metadataMatchScore: 'book.metadata_match_score',
  isPhysical: 'book.is_physical',
  libraryId: 'book.library_id',
};

type SortableColumns = Map<string, { column: string; text: boolean }>;

const sortable = new WeakMap<MetadataColumn[], SortableColumns>();

/** `metadata.<camelName>` → sortable book_metadata column (scalars, not lock flags). */
async function metadataColumns(reader: CatalogReader): Promise<SortableColumns> {
  const columns = await metadataTableColumns(reader.db);
  let out = sortable.get(columns);
  if (!out) {
    out = new Map(
      columns
        .filter((c) => !c.name.endsWith('_locked') && !['book_id', 'search_text', 'identifiers_json', 'description'].includes(c.name))
        .map((c) => [`metadata.${camel(c.name)}`, { column: c.name, text: c.text }]),
    );
    sortable.set(columns, out);
  }
  return out;
}

interface Order {
  expression: string;
  descending: boolean;
  /** On book_metadata (`m`), not on book. */
  metadata: boolean;
  /** May be NULL: NULLs come first ascending and last descending, as SQLite sorts them by default. */
  nullable: boolean;
}

const NOT_NULL_BOOK_PROPERTIES = new Set(['id', 'addedOn', 'isPhysical', 'libraryId']);

/** Parses Spring's sort parameters; an unknown property is an error (Spring would fail the request too). */
export async function parseSort(reader: CatalogReader, values: string[]): Promise<Order[]> {
  const properties = await metadataColumns(reader);
  const { nocase } = dialectOf(reader.db);
  const orders: Order[] = [];
  for (const value of values) {
    const parts = value.split(',').map((p) => p.trim()).filter(Boolean);
    if (parts.length === 0) continue;
    const last = parts.at(-1)?.toLowerCase();
    const direction = last === 'asc' || last === 'desc' ? last : undefined;
    const named = direction ? parts.slice(0, -1) : parts;
    for (const property of named) {
      const book = BOOK_PROPERTIES[property];
      const meta = book ? undefined : properties.get(property);
      const expression = book ?? (meta ? (meta.text ? nocase(`m.${meta.column}`) : `m.${meta.column}`) : undefined);
      if (!expression) throw new SortError(`No property '${property}' found for type 'Book'`);
      orders.push({ expression, descending: direction === 'desc', metadata: !book, nullable: !NOT_NULL_BOOK_PROPERTIES.has(property) });
    }
  }
  return orders;
}

type Compiled = { sql: string; parameters: readonly unknown[] };

// A literal, not a parameter: with `deleted = ?` SQLite estimates the ordered index walk as dearer than a full sort.
const NOT_DELETED = sql.lit(0);

const memos = memosPerOwner<string, number>(100);

/** A compiled query with the key its answer is kept under (its SQL and parameters). */
type KeyedQuery = Compiled & { key: string };

const keyed = (query: Compiled): KeyedQuery => ({ ...query, key: `${query.sql}\n${JSON.stringify(query.parameters)}` });

/** A single number a query returns, kept (by its SQL and parameters) until the catalog changes. */
function memoNumber(store: Store, reader: CatalogReader, query: KeyedQuery): Promise<number> {
  const memo = memos(store);
  const source = touchesReadingState(query.sql) ? readingAware(store, reader) : readerSource(store, reader);
  return memo.getAsync(source, query.key, async () =>
    Number(Object.values((await reader.exec.get(query.sql, query.parameters as number[])) as Record<string, unknown>)[0]),
  );
}

/**
 * What a principal's pages are read with, made once per principal object (a cached principal is shared by its
 * requests and replaced once the user or the catalog changes) and database: building and compiling these with Kysely
 * on every page cost ~0.1 ms of a built page's ~1.3 and most of its garbage besides the books.
 */
interface PrincipalQueries {
  db: Store['db'];
  count: KeyedQuery;
  /** By the order's shape (see orderedQuery); Spring sorts are few per client. */
  ordered: RememberedAnswers<string, OrderedQuery>;
}

const principalQueries = new WeakMap<Principal, PrincipalQueries>();
const everyBookCount = new WeakMap<Store['db'], KeyedQuery>();

function countQuery(store: Store, principal: Principal | undefined): Compiled {
  let query = store.db.selectFrom('book').select((eb) => eb.fn.countAll<number>().as('n')).where('book.deleted', '=', NOT_DELETED);
  if (principal) query = query.where(visibleBookFilter(principal));
  return query.compile();
}

function queriesOf(store: Store, principal: Principal): PrincipalQueries {
  let queries = principalQueries.get(principal);
  if (!queries || queries.db !== store.db) {
    queries = { db: store.db, count: keyed(countQuery(store, principal)), ordered: new RememberedAnswers(32) };
    principalQueries.set(principal, queries);
  }
  return queries;
}

/** Books that are not deleted and that the principal may see (`undefined`: every book). */
function countVisible(store: Store, reader: CatalogReader, principal: Principal | undefined): Promise<number> {
  if (principal) return memoNumber(store, reader, queriesOf(store, principal).count);
  let query = everyBookCount.get(store.db);
  if (!query) everyBookCount.set(store.db, (query = keyed(countQuery(store, undefined))));
  return memoNumber(store, reader, query);
}

/**
 * Whether every book has its book_metadata row (the catalog always writes one; foreign keys keep metadata rows to
 * existing books, so equal counts say it). Then a metadata order can start from book_metadata and walk its index;
 * otherwise it needs book LEFT JOIN book_metadata, which SQLite must sort.
 */
const EVERY_BOOK_HAS_METADATA = keyed({ sql: 'SELECT CASE WHEN (SELECT count(*) FROM book) = (SELECT count(*) FROM book_metadata) THEN 1 ELSE 0 END AS same', parameters: [] });

async function everyBookHasMetadata(store: Store, reader: CatalogReader): Promise<boolean> {
  return (await memoNumber(store, reader, EVERY_BOOK_HAS_METADATA)) === 1;
}

/**
 * A user who sees a small part of the catalog is best served by their libraries' books, sorted; one who sees most of
 * it by walking the order's index and skipping the few hidden books.
 */
async function walkOrderIndex(store: Store, reader: CatalogReader, principal: Principal, visible: number): Promise<boolean> {
  return isAdmin(principal) || visible * 4 >= (await countVisible(store, reader, undefined));
}

type PageQuery = SelectQueryBuilder<DB, 'book', { id: number }>;

/** The visible books in the order, before paging, and the name of that list for its resume points. */
interface OrderedQuery {
  query: PageQuery;
  id: string;
  list: string;
}

/** The visible books in the order (ties by id), before paging: built once per principal and shape of the query. */
async function orderedQuery(store: Store, reader: CatalogReader, principal: Principal, orders: Order[], visible: number): Promise<OrderedQuery> {
  const walk = await walkOrderIndex(store, reader, principal, visible);
  const byMetadata = orders.some((o) => o.metadata);
  const joined = byMetadata && (await everyBookHasMetadata(store, reader));
  const { ordered } = queriesOf(store, principal);
  const shape = `${walk} ${joined} ${JSON.stringify(orders)}`;
  return ordered.get(shape, () => {
    const { query, id } = buildOrderedQuery(store, principal, orders, walk, byMetadata, joined);
    const listed = query.compile();
    return { query, id, list: `${listed.sql}\u0000${JSON.stringify(listed.parameters)}` };
  });
}

function buildOrderedQuery(store: Store, principal: Principal, orders: Order[], walk: boolean, byMetadata: boolean, joined: boolean): { query: PageQuery; id: string } {
  const filter = visibleBookFilter(principal, { libraryIndex: !walk });
  // Ties go by id, in the direction of the last order, so that one index serves both directions (Grimmory leaves the
  // order of ties unspecified).
  const idDescending = orders.at(-1)?.descending ?? false;
  const ordered = (order: Order) => (ob: OrderByItemBuilder): OrderByItemBuilder => {
    const by = order.descending ? ob.desc() : ob.asc();
    if (!order.nullable) return by;
    return order.descending ? by.nullsLast() : by.nullsFirst();
  };
  const sorted = (query: PageQuery, id: string): { query: PageQuery; id: string } => {
    for (const order of orders) query = query.orderBy(sql.raw(order.expression), ordered(order));
    return { query: query.orderBy(sql.raw(id), idDescending ? 'desc' : 'asc'), id };
  };
  if (joined) {
    // The tie-break names m.book_id (= book.id): with book.id SQLite would not see that the index order covers it.
    const query = store.db.selectFrom('book_metadata as m').innerJoin('book', 'book.id', 'm.book_id').select('book.id').where(filter).where('book.deleted', '=', NOT_DELETED);
    return sorted(query as unknown as PageQuery, 'm.book_id');
  }
  if (byMetadata) {
    const query = store.db.selectFrom('book').leftJoin('book_metadata as m', 'm.book_id', 'book.id').select('book.id').where(filter).where('book.deleted', '=', NOT_DELETED);
    return sorted(query as unknown as PageQuery, 'book.id');
  }
  return sorted(store.db.selectFrom('book').select('book.id').where(filter).where('book.deleted', '=', NOT_DELETED), 'book.id');
}

/**
 * The ids of a page. In an order by one property (or none: by id) the page resumes after the row an earlier page of
 * the same list ended on (src/core/store/resumed-pages.ts); an order by several properties is read with OFFSET.
 */
async function pageIds(store: Store, reader: CatalogReader, principal: Principal, orders: Order[], visible: number, page: { offset: number; limit: number }): Promise<number[]> {
  const { query, id, list } = await orderedQuery(store, reader, principal, orders, visible);
  const ids = async (compiled: Compiled): Promise<number[]> => ((await reader.exec.all(compiled.sql, compiled.parameters as number[])) as { id: number }[]).map((r) => r.id);
  const [order, ...more] = orders;
  if (more.length > 0) return ids(query.limit(page.limit).offset(page.offset).compile());
  const value = sql.raw(order?.expression ?? id);
  const resumable = { descending: order?.descending ?? false, nullable: order?.nullable ?? false, value, id: sql.raw(id), valueIsId: !order || order.expression === 'book.id' };
  return resumedPage(store, list, resumable, page, {
    rows: async (part, limit, offset) => {
      // Compiled once per principal, list and part (see compiledOnce); each page gives only the part's values and paging.
      const compiled = compiledOnce(principal, `books page\u0000${list}\u0000${part?.shape ?? 'from the start'}`, [...(part?.values ?? []), limit, offset], () =>
        (part ? query.where(part.condition) : query).select(sql<unknown>`${value}`.as('resume_value')).limit(limit).offset(offset).compile(),
      );
      return (await reader.exec.all(compiled.sql, compiled.parameters as number[])) as unknown as ResumableRow[];
    },
    count: async (part) => {
      const compiled = query.clearSelect().clearOrderBy().where(part.condition).select((eb) => eb.fn.countAll<number>().as('n')).compile();
      return Number(Object.values((await reader.exec.get(compiled.sql, compiled.parameters as number[])) ?? {})[0] ?? 0);
    },
  }, reader);
}

/** Pass a snapshot's scope as `reader` to read inside it; otherwise the page is read in one snapshot of its own. */
export async function pageOfVisibleBooks(store: Store, principal: Principal, request: PageRequest, reader?: CatalogReader): Promise<PageOfIds> {
  const page = async (scope: CatalogReader): Promise<PageOfIds> => {
    // Everything through the scope: on SQLite the snapshot holds the one connection (store.db would wait for it).
    const orders = await parseSort(scope, request.sort);
    const totalElements = await countVisible(store, scope, principal);
    const offset = request.page * request.size;
    if (offset >= totalElements) return { ids: [], totalElements };
    return { ids: await pageIds(store, scope, principal, orders, totalElements, { offset, limit: request.size }), totalElements };
  };
  return reader ? page(reader) : store.read(page);
}
