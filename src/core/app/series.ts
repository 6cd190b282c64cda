// The app's series: the series names of the books the caller may see (letter case ignored), each with its book count,
// how many the caller has read, its newest book and its covers; and the books of one series.
import type { SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.ts';
import { cachedStatement } from '../store/snapshot.ts';
import type { Store } from '../store/store.ts';
import { appPage, type AppPage } from './app-page.ts';
import type { Cond } from './book-filters.ts';
import { everyBookHasMetadata, type PageOfIds } from './book-query.ts';
import { libraryCondition, listedBooks, listedBooksByMetadata } from './book-scope.ts';
import { FILES_SQL, groupBy, IN_IDS, primaryFileOf, put, type FileRow, type Json } from './book-summary.ts';
import { columnOf, remembered, rememberedCount, rowsOf } from './sql.ts';
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
  /** The name as SQLite lower-cases it: what the series' books are matched by. */
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

/** Orders: name, bookCount, readProgress (books read), else the newest book (or, in progress only, the last read). */
function seriesOrder(query: SeriesQuery): string {
  const dir = query.dir?.toLowerCase() === 'asc' ? 'ASC' : 'DESC';
  const nulls = dir === 'ASC' ? 'NULLS LAST' : 'NULLS FIRST';
  const recent = query.inProgressOnly ? 'last_read_time' : 'latest_added_on';
  switch ((query.sort ?? '').toLowerCase()) {
    case 'name':
      return `series_name COLLATE NOCASE ${dir}`;
    case 'bookcount':
      return `book_count ${dir}, series_name COLLATE NOCASE ASC`;
    case 'readprogress':
      return `books_read ${dir}, series_name COLLATE NOCASE ASC`;
    default:
      return `${recent} ${dir} ${nulls}, series_name COLLATE NOCASE ASC`;
  }
}

/** Every matching series, aggregated and ordered, remembered while the catalog is unchanged. */
function matchingSeries(store: Store, principal: Principal, query: SeriesQuery): SeriesRow[] {
  // From the metadata rows when every book has one: the series index then yields the books already grouped.
  const books = (everyBookHasMetadata(store) ? listedBooksByMetadata(store, principal) : listedBooks(store, principal)) as ReturnType<typeof listedBooks>;
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
      sql<number>`coalesce(sum(p.read_status = 'READ'), 0)`.as('books_read'),
      sql<number>`coalesce(sum(p.read_status in ('READING', 'RE_READING')), 0)`.as('books_reading'),
      sql<string | null>`max(p.last_read_time)`.as('last_read_time'),
    ])
    .groupBy(sql`m.series_name COLLATE NOCASE`);
  if (query.inProgressOnly) grouped = grouped.having(sql<SqlBool>`coalesce(sum(p.read_status in ('READING', 'RE_READING')), 0) > 0`);
  const compiled = grouped.orderBy(sql.raw(seriesOrder(query))).compile();
  return remembered(store, compiled, () => rowsOf<SeriesRow>(store, compiled));
}

const SERIES_AUTHORS_SQL = `SELECT x.book_id, a.name FROM book_metadata_author_mapping x JOIN author a ON a.id = x.author_id WHERE x.book_id ${IN_IDS} ORDER BY x.book_id, x.sort_order`;

interface SeriesBookRow {
  id: number;
  library_id: number;
  series_key: string;
  series_number: number | null;
  cover_updated_on: string | null;
}

export function appSeriesPage(store: Store, principal: Principal, query: SeriesQuery, page: number, size: number): AppPage<Json> {
  const all = matchingSeries(store, principal, query);
  const rows = all.slice(page * size, page * size + size);
  if (rows.length === 0) return appPage([], page, size, all.length);
  // The books of the page's series, for their authors and covers.
  // Nothing SQLite could look books up by library with (no join, no library index): it would then read every book of
  // the library instead of following the series index.
  let q = listedBooks(store, principal, { libraryIndex: false }).where(sql<SqlBool>`m.series_name COLLATE NOCASE in (${sql.join(rows.map((r) => r.series_name))})`);
  for (const cond of libraryScope(principal, query.libraryId)) q = q.where(cond);
  const books = rowsOf<SeriesBookRow>(
    store,
    q
      .select(['book.id', 'book.library_id', sql<string>`lower(m.series_name)`.as('series_key'), 'm.series_number', 'm.cover_updated_on'])
      .orderBy(sql`m.series_number IS NULL, m.series_number, book.id`)
      .compile(),
  );
  const idsJson = JSON.stringify(books.map((b) => b.id));
  const priorities = new Map((cachedStatement(store.sqlite, 'SELECT id, format_priority FROM library').all() as { id: number; format_priority: string | null }[]).map((l) => [l.id, l.format_priority]));
  const files = groupBy(cachedStatement(store.sqlite, FILES_SQL).all(idsJson) as FileRow[]);
  const authors = cachedStatement(store.sqlite, SERIES_AUTHORS_SQL).all(idsJson) as { book_id: number; name: string }[];
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

const BOOK_ORDERS: Record<string, string> = { title: 'm.title COLLATE NOCASE', seriesnumber: 'm.series_number', recentlyadded: 'book.added_on' };

/** A page of one series' books (name compared without regard to case), by number unless asked otherwise. */
export function seriesBooks(store: Store, principal: Principal, seriesName: string, query: { sort?: string; dir?: string; libraryId?: number }, page: { offset: number; limit: number }): PageOfIds {
  // NOCASE compares as lower() does (ASCII letters only), and lets SQLite use the series index.
  const conditions = [sql<SqlBool>`m.series_name = ${seriesName} COLLATE NOCASE`, ...libraryScope(principal, query.libraryId)];
  const matching = () => conditions.reduce((q, cond) => q.where(cond), listedBooks(store, principal, { libraryIndex: false }));
  const total = rememberedCount(store, matching().select(sql<number>`count(*)`.as('n')).compile());
  if (page.offset >= total) return { ids: [], total };
  const direction = sql.raw(query.dir?.toLowerCase() === 'asc' ? 'ASC' : 'DESC');
  const order = BOOK_ORDERS[(query.sort ?? '').toLowerCase()] ?? (BOOK_ORDERS.seriesnumber as string);
  const compiled = matching().select('book.id').orderBy(sql`${sql.raw(order)} ${direction}`).orderBy(sql`book.id ${direction}`).limit(page.limit).offset(page.offset).compile();
  return { ids: columnOf<number>(store, compiled), total };
}
