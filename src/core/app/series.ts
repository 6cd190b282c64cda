// The app's series: the series names of the books the caller may see (letter case ignored), each with its book count,
// how many the caller has read, its newest book and its covers; and the books of one series.
import type { SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import type { SqlDialect } from '../store/dialect.ts';
import type { Store } from '../store/store.ts';
import { appPage, type AppPage } from './app-page.ts';
import type { Cond } from './book-filters.ts';
import { everyBookHasMetadata, type PageOfIds } from './book-query.ts';
import { libraryCondition, listedBooks, listedBooksByMetadata } from './book-scope.ts';
import { FILES_SQL, groupBy, inIds, perDialect, primaryFileOf, put, type FileRow, type Json } from './book-summary.ts';
import { columnOf, direction, remembered, rememberedCount, rowsOf } from './sql.ts';
import { nocaseValue } from '../store/dialect-forms.ts';
import { containsKeyPattern } from '../text/search-key.ts';

const IN_SERIES = sql<SqlBool>`(m.series_name is not null and trim(m.series_name) <> '')`;

export interface SeriesQuery {
  sort?: string;
  dir?: string;
  libraryId?: number;
  search?: string;
  /** Only series with a book the caller is reading (`status=in-progress`). */
  inProgressOnly?: boolean;
}

interface SeriesRow {
  series_name: string;
  /** The name lower-cased (ASCII letters, as both engines' lower() do): what the series' books are matched by. */
  series_key: string;
  book_count: number;
  series_total: number | null;
  latest_added_on: string | null;
  books_read: number;
  books_reading: number;
  last_read_time: string | null;
}

function libraryScope(principal: Principal, libraryId: number | undefined): Cond[] {
  return libraryId === undefined ? [] : [libraryCondition(principal, libraryId)];
}

/**
 * Orders: name, bookCount, readProgress (books read), else the newest book (or, in progress only, the last read).
 * Names are ordered by their lower-cased key (as NOCASE orders them; the groups are case-blind, so no two keys tie).
 */
function seriesOrder(query: SeriesQuery): string {
  const dir = query.dir?.toLowerCase() === 'asc' ? 'ASC' : 'DESC';
  const nulls = dir === 'ASC' ? 'NULLS LAST' : 'NULLS FIRST';
  const recent = query.inProgressOnly ? 'last_read_time' : 'latest_added_on';
  switch ((query.sort ?? '').toLowerCase()) {
    case 'name':
      return `series_key ${dir}`;
    case 'bookcount':
      return `book_count ${dir}, series_key ASC`;
    case 'readprogress':
      return `books_read ${dir}, series_key ASC`;
    default:
      return `${recent} ${dir} ${nulls}, series_key ASC`;
  }
}

const countWhere = (condition: string) => sql<number>`coalesce(sum(case when ${sql.raw(condition)} then 1 else 0 end), 0)`;

/** Every matching series, aggregated and ordered, remembered while the catalog is unchanged. */
async function matchingSeries(store: Store, principal: Principal, query: SeriesQuery): Promise<SeriesRow[]> {
  // From the metadata rows when every book has one: the series index then yields the books already grouped.
  const books = ((await everyBookHasMetadata(store)) ? listedBooksByMetadata(store, principal) : listedBooks(store, principal)) as ReturnType<typeof listedBooks>;
  let q = books
    .leftJoin('user_book_progress as p', (join) => join.onRef('p.book_id', '=', 'book.id').on('p.user_id', '=', principal.userId))
    .where(IN_SERIES);
  for (const cond of libraryScope(principal, query.libraryId)) q = q.where(cond);
  if (query.search !== undefined && query.search.trim() !== '') q = q.where(sql<SqlBool>`m.series_key like ${containsKeyPattern(query.search)} escape '\\'`);
  let grouped = q
    .select([
      sql<string>`min(m.series_name)`.as('series_name'),
      sql<string>`lower(min(m.series_name))`.as('series_key'),
      sql<number>`count(*)`.as('book_count'),
      sql<number | null>`max(m.series_total)`.as('series_total'),
      sql<string | null>`max(book.added_on)`.as('latest_added_on'),
      countWhere(`p.read_status = 'READ'`).as('books_read'),
      countWhere(`p.read_status in ('READING', 'RE_READING')`).as('books_reading'),
      sql<string | null>`max(p.last_read_time)`.as('last_read_time'),
    ])
    .groupBy(sql.raw(store.dialect.nocase('m.series_name')));
  if (query.inProgressOnly) grouped = grouped.having(sql<SqlBool>`${countWhere(`p.read_status in ('READING', 'RE_READING')`)} > 0`);
  const compiled = grouped.orderBy(sql.raw(seriesOrder(query))).compile();
  return remembered(store, compiled, () => rowsOf<SeriesRow>(store.exec, compiled));
}

const SERIES_AUTHORS_SQL = perDialect((d) => `SELECT x.book_id, a.name FROM book_metadata_author_mapping x JOIN author a ON a.id = x.author_id WHERE x.book_id ${inIds(d)} ORDER BY x.book_id, x.sort_order, a.id`);

interface SeriesBookRow {
  id: number;
  library_id: number;
  series_key: string;
  series_number: number | null;
  cover_updated_on: string | null;
}

export async function appSeriesPage(store: Store, principal: Principal, query: SeriesQuery, page: number, size: number): Promise<AppPage<Json>> {
  const all = await matchingSeries(store, principal, query);
  const d: SqlDialect = store.dialect;
  const rows = all.slice(page * size, page * size + size);
  if (rows.length === 0) return appPage([], page, size, all.length);
  // The books of the page's series, for their authors and covers.
  // Nothing SQLite could look books up by library with (no join, no library index): it would then read every book of
  // the library instead of following the series index.
  const names = sql.join(rows.map((r) => nocaseValue(d, r.series_name)));
  let q = listedBooks(store, principal, { libraryIndex: false }).where(sql<SqlBool>`${sql.raw(d.nocase('m.series_name'))} in (${names})`);
  for (const cond of libraryScope(principal, query.libraryId)) q = q.where(cond);
  const books = await rowsOf<SeriesBookRow>(
    store.exec,
    q
      .select(['book.id', 'book.library_id', sql<string>`lower(m.series_name)`.as('series_key'), 'm.series_number', 'm.cover_updated_on'])
      .orderBy(sql`m.series_number IS NULL, m.series_number, book.id`)
      .compile(),
  );
  const idsJson = JSON.stringify(books.map((b) => b.id));
  const priorities = new Map(((await store.exec.all('SELECT id, format_priority FROM library')) as { id: number; format_priority: string | null }[]).map((l) => [l.id, l.format_priority]));
  const files = groupBy((await store.exec.all(FILES_SQL(d), [idsJson])) as unknown as FileRow[]);
  const authors = (await store.exec.all(SERIES_AUTHORS_SQL(d), [idsJson])) as { book_id: number; name: string }[];
  const authorsByBook = new Map<number, string[]>();
  for (const a of authors) authorsByBook.set(a.book_id, [...(authorsByBook.get(a.book_id) ?? []), a.name]);
  const bySeries = new Map<string, SeriesBookRow[]>();
  for (const b of books) bySeries.set(b.series_key, [...(bySeries.get(b.series_key) ?? []), b]);
  const content = rows.map((r) => {
    const seriesBooks = bySeries.get(r.series_key) ?? [];
    return put(
      {},
      {
        seriesName: r.series_name,
        bookCount: r.book_count,
        seriesTotal: r.series_total,
        authors: [...new Set(seriesBooks.flatMap((b) => authorsByBook.get(b.id) ?? []))],
        booksRead: r.books_read,
        latestAddedOn: r.latest_added_on,
        coverBooks: seriesBooks.map((b) =>
          put({}, { bookId: b.id, coverUpdatedOn: b.cover_updated_on, seriesNumber: b.series_number, primaryFileType: primaryFileOf(files.get(b.id) ?? [], priorities.get(b.library_id) ?? null)?.book_type }),
        ),
      },
    );
  });
  return appPage(content, page, size, all.length);
}

const BOOK_ORDERS: Record<string, (d: SqlDialect) => string> = { title: (d) => d.nocase('m.title'), seriesnumber: () => 'm.series_number', recentlyadded: () => 'book.added_on' };

/** A page of one series' books (name compared without regard to case), by number unless asked otherwise. */
export async function seriesBooks(store: Store, principal: Principal, seriesName: string, query: { sort?: string; dir?: string; libraryId?: number }, page: { offset: number; limit: number }): Promise<PageOfIds> {
  const d = store.dialect;
  // Compared as lower() does (ASCII letters only); on SQLite as NOCASE, which lets it use the series index.
  const conditions = [sql<SqlBool>`${sql.raw(d.nocase('m.series_name'))} = ${nocaseValue(d, seriesName)}`, ...libraryScope(principal, query.libraryId)];
  const matching = () => conditions.reduce((q, cond) => q.where(cond), listedBooks(store, principal, { libraryIndex: false }));
  const total = await rememberedCount(store, matching().select(sql<number>`count(*)`.as('n')).compile());
  if (page.offset >= total) return { ids: [], total };
  const dir = direction(query.dir?.toLowerCase() !== 'asc');
  const order = (BOOK_ORDERS[(query.sort ?? '').toLowerCase()] ?? (BOOK_ORDERS.seriesnumber as (d: SqlDialect) => string))(d);
  const compiled = matching().select('book.id').orderBy(sql`${sql.raw(order)} ${dir}`).orderBy(sql`book.id ${dir}`).limit(page.limit).offset(page.offset).compile();
  return { ids: await columnOf<number>(store.exec, compiled), total };
}
