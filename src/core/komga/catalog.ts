// What the Komga-compatible API serves of the catalog: pages of the books a principal may see (in SQL, with Komga's
// filters and sorts), the rows BookDto is built from, and libraries. Series are in series.ts. See docs/komga.md.
import { chunks } from '../batches.ts';
import { keptByVersion, keptOrBuilt } from '../books/book-versions.ts';
import type { RawBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import { isAdmin, type Principal } from '../auth/principal.ts';
import { canSeeLibrary } from '../auth/visibility.ts';
import type { SqlDialect } from '../store/dialect.ts';
import { sameGeneration, type Generation } from '../store/snapshot.ts';
import { sourceForSql } from '../store/reading-state.ts';
import type { Store } from '../store/store.ts';
import { readsMetadata } from './filters.ts';
import { compiledOnce, type Compiled } from '../store/compiled-once.ts';
import { andAll, column, countListed, firstAside, listedBooks, PER_ROW_ROWS, remembered } from './sql.ts';

export { UNKNOWN_SERIES } from './sql.ts';

export interface KomgaBookRow {
  id: number;
  libraryId: number;
  addedOn: string;
  title: string | null;
  seriesName: string | null;
  seriesNumber: number | null;
  description: string | null;
  publisher: string | null;
  publishedDate: string | null;
  isbn13: string | null;
  isbn10: string | null;
  pageCount: number | null;
  language: string | null;
  ageRating: number | null;
  fileName: string | null;
  fileSizeKb: number | null;
  sizeBytes: number | null;
  bookType: string | null;
  hash: string | null;
  filePageCount: number | null;
  authors: string[];
  categories: string[];
  tags: string[];
}

export interface KomgaSeries {
  id: string;
  libraryId: number;
  name: string;
  /** Sorted by series number, then title, then id. */
  books: KomgaBookRow[];
}

const CHUNK = 500;

interface BookSqlRow {
  id: number;
  library_id: number;
  added_on: string;
  title: string | null;
  series_name: string | null;
  series_number: number | null;
  description: string | null;
  publisher: string | null;
  published_date: string | null;
  isbn_13: string | null;
  isbn_10: string | null;
  page_count: number | null;
  language: string | null;
  age_rating: number | null;
}

interface FileSqlRow {
  book_id: number;
  file_name: string;
  file_size_kb: number | null;
  size_bytes: number | null;
  book_type: string | null;
  current_hash: string | null;
  page_count: number | null;
}

/** Whole rows kept per catalog under each book's version: a few pages of every list a few readers page through. */
const KEPT_ROWS = 4096;

/**
 * The rows of these books (ids the caller has already checked), in the order given; unknown ids are skipped. Without
 * `files` the file fields stay null and without `authors` the authors empty (a SeriesDto shows neither of its first book).
 * Whole rows of a page's books are kept under each book's version (book-versions.ts): a page built again after a write
 * elsewhere in the catalog reads the versions and only the rows of the books that changed. They are shared: read only.
 */
export async function loadBookRows(store: Store, ids: readonly number[], parts: { files?: boolean; authors?: boolean } = {}): Promise<KomgaBookRow[]> {
  if (parts.files === false || parts.authors === false || ids.length === 0 || ids.length > CHUNK) return readBookRows(store, ids, parts);
  const kept = keptByVersion<KomgaBookRow>(store, 'komga-book-row', KEPT_ROWS);
  const byId = await keptOrBuilt(store, kept, ids, async (missing) => (await readBookRows(store, missing, parts)).map((row) => ({ id: row.id, value: row, keep: true })));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

async function readBookRows(store: Store, ids: readonly number[], parts: { files?: boolean; authors?: boolean }): Promise<KomgaBookRow[]> {
  const { files: withFiles = true, authors: withAuthors = true } = parts;
  const byId = new Map<number, KomgaBookRow>();
  for (const part of chunks(ids, CHUNK)) {
    const marks = part.map(() => '?').join(',');
    const books = (await store.exec.all(
      `SELECT b.id, b.library_id, b.added_on, m.title, m.series_name, m.series_number, m.description, m.publisher, m.published_date,
                m.isbn_13, m.isbn_10, m.page_count, m.language, m.age_rating
           FROM book b LEFT JOIN book_metadata m ON m.book_id = b.id WHERE b.id IN (${marks})`,
      part,
    )) as unknown as BookSqlRow[];
    for (const b of books) {
      byId.set(b.id, {
        id: b.id,
        libraryId: b.library_id,
        addedOn: b.added_on,
        title: b.title,
        seriesName: b.series_name,
        seriesNumber: b.series_number,
        description: b.description,
        publisher: b.publisher,
        publishedDate: b.published_date,
        isbn13: b.isbn_13,
        isbn10: b.isbn_10,
        pageCount: b.page_count,
        language: b.language,
        ageRating: b.age_rating,
        fileName: null,
        fileSizeKb: null,
        sizeBytes: null,
        bookType: null,
        hash: null,
        filePageCount: null,
        authors: [],
        categories: [],
        tags: [],
      });
    }
    // The first book-format file stands for the book (the oldest one, as the scanner adds the main file first).
    const files = !withFiles ? [] : (await store.exec.all(
      `SELECT book_id, file_name, file_size_kb, size_bytes, book_type, current_hash, page_count FROM book_file
        WHERE is_book = 1 AND book_id IN (${marks}) ORDER BY id DESC`,
      part,
    )) as unknown as FileSqlRow[];
    for (const f of files) {
      const row = byId.get(f.book_id);
      if (!row) continue;
      row.fileName = f.file_name;
      row.fileSizeKb = f.file_size_kb;
      row.sizeBytes = f.size_bytes;
      row.bookType = f.book_type;
      row.hash = f.current_hash;
      row.filePageCount = f.page_count;
    }
    const names = async (table: string, join: string): Promise<{ book_id: number; name: string }[]> =>
      (await store.exec.all(
        `SELECT m.book_id, t.name FROM ${table} m JOIN ${join} t ON t.id = m.${join}_id WHERE m.book_id IN (${marks}) ORDER BY m.book_id, ${table === 'book_metadata_author_mapping' ? 'm.sort_order, ' : ''}t.name`,
        part,
      )) as { book_id: number; name: string }[];
    if (withAuthors) for (const r of await names('book_metadata_author_mapping', 'author')) byId.get(r.book_id)?.authors.push(r.name);
    for (const r of await names('book_metadata_category_mapping', 'category')) byId.get(r.book_id)?.categories.push(r.name);
    for (const r of await names('book_metadata_tag_mapping', 'tag')) byId.get(r.book_id)?.tags.push(r.name);
  }
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** The book's display name: title, else file name without extension, else its id. */
export function bookName(row: KomgaBookRow): string {
  if (row.title && row.title.trim() !== '') return row.title;
  if (row.fileName) return row.fileName.replace(/\.[^.]+$/, '');
  return `Book ${row.id}`;
}

export type BookSort = 'id' | 'created' | 'title' | 'number' | 'release' | 'pages' | 'series' | 'size' | 'readDate';

const BOOK_SORTS: Record<string, BookSort> = {
  id: 'id',
  createdDate: 'created',
  created: 'created',
  lastModifiedDate: 'created',
  lastModified: 'created',
  fileLastModified: 'created',
  name: 'title',
  'metadata.title': 'title',
  'metadata.numberSort': 'number',
  'metadata.number': 'number',
  number: 'number',
  'metadata.releaseDate': 'release',
  'media.pagesCount': 'pages',
  'metadata.pagesCount': 'pages',
  seriesId: 'series',
  series: 'series',
  'series.metadata.titleSort': 'series',
  fileSize: 'size',
  sizeBytes: 'size',
  'readProgress.readDate': 'readDate',
};

const orderSql = (d: SqlDialect): Record<Exclude<BookSort, 'readDate'>, string> => ({
  id: 'book.id',
  created: 'book.added_on',
  title: d.nocase('m.title'),
  number: 'm.series_number',
  release: 'm.published_date',
  pages: 'm.page_count',
  series: d.nocase('m.series_name'),
  size: '(SELECT f.size_bytes FROM book_file f WHERE f.book_id = book.id AND f.is_book = 1 ORDER BY f.id LIMIT 1)',
});

/** When the reader last read the book (books never read sort as the oldest). */
const readDateOrder = (userId: number): string => `(SELECT p.last_read_time FROM user_book_progress p WHERE p.user_id = ${Math.trunc(userId)} AND p.book_id = book.id)`;

/** A direction with books lacking the value where SQLite puts them (first going up, last going down), on both engines. */
export const direction = (desc: boolean): string => (desc ? 'DESC NULLS LAST' : 'ASC NULLS FIRST');

/**
 * Spring's `sort=field,asc|desc` (repeatable) for books; unknown fields are ignored, and the id breaks ties. Without a
 * known field, books come by id (as Grimmory lists them). `readProgress.readDate` is the reader's (`userId`).
 */
export function bookOrder(d: SqlDialect, sortParam: unknown, userId = 0): BookListOrder & { sorted: boolean } {
  const raw = (Array.isArray(sortParam) ? sortParam : sortParam === undefined ? [] : [sortParam]).map(String);
  const parts: string[] = [];
  const columns = orderSql(d);
  for (const entry of raw) {
    const [field = '', dir = 'asc'] = entry.split(',').map((p) => p.trim());
    const sort = BOOK_SORTS[field];
    if (sort && sort !== 'id') parts.push(`${sort === 'readDate' ? readDateOrder(userId) : columns[sort]} ${direction(dir.toLowerCase() === 'desc')}`);
  }
  const desc = raw.some((e) => /^id,\s*desc$/i.test(e.trim()));
  return { sql: sql.raw([...parts, `book.id ${desc ? 'DESC' : 'ASC'}`].join(', ')), byId: parts.length === 0 && !desc, sorted: parts.length > 0 || raw.some((e) => e.startsWith('id')) };
}

/** The order of a list of books; `byId` when it is by id alone, ascending (Komga's default). */
export interface BookListOrder {
  sql: RawBuilder<unknown>;
  byId?: boolean;
}

interface PageEnds {
  generation: Generation;
  /** The last id of each page served, by page number. */
  ends: Map<number, number>;
}

/** Per store, per list (its statement without the page) and page size: where each page served ended. */
const pageEndsByStore = new WeakMap<Store, Map<string, PageEnds>>();
const MAX_LISTS = 64;
/** Ends kept per list: a client paging forwards needs the last one only. */
const MAX_ENDS = 64;
/** Below this offset, skipping the books before a page costs less than a second statement to compile. */
const SEEK_FROM = 400;

/**
 * Where the pages of a list ordered by id end, while the catalog is unchanged: a client pages through a list one page
 * after the other, and with the end of the page before, the next starts right after it (an index seek) instead of
 * skipping every book before it (OFFSET reads and tests each of them, visibility included).
 */
function pageEndsOf(store: Store, list: string): PageEnds {
  let lists = pageEndsByStore.get(store);
  if (!lists) pageEndsByStore.set(store, (lists = new Map()));
  const generation = sourceForSql(store, list).generation();
  let known = lists.get(list);
  if (!known || !sameGeneration(known.generation, generation)) {
    lists.delete(list);
    if (lists.size >= MAX_LISTS) lists.delete(lists.keys().next().value as string);
    lists.set(list, (known = { generation, ends: new Map() }));
  }
  return known;
}

/**
 * A page of the visible books meeting the conditions, in the given order, and how many there are. The total is
 * remembered until the catalog changes; so are the ends of the pages of a list by id.
 */
export async function pageOfBooks(
  store: Store,
  principal: Principal,
  conditions: RawBuilder<SqlBool>[],
  order: BookListOrder,
  slice: { offset: number; limit: number } | 'all',
): Promise<{ ids: number[]; total: number }> {
  const listed = (perRow: boolean) => listedBooks(store, principal, { perRow }).where(andAll(conditions)).select('book.id').orderBy(order.sql);
  // The plain listing (no filter, by id: what readers page through) is compiled once per principal.
  const plain = conditions.length === 0 && order.byId === true;
  const statement = (shape: string, tail: readonly unknown[], build: () => Compiled): Compiled => (plain ? compiledOnce(principal, `komga-books:${shape}`, tail, build) : build());
  let ids: number[];
  if (slice === 'all') ids = await column<number>(store, listed(false).compile());
  else {
    const { offset, limit } = slice;
    // Kysely binds LIMIT and OFFSET last: the list is the page's statement without them.
    const paged = statement('paged', [limit, offset], () => listed(false).limit(limit).offset(offset).compile());
    const known = order.byId && offset % limit === 0 && paged.parameters.at(-2) === limit && paged.parameters.at(-1) === offset ? pageEndsOf(store, `${paged.sql}\u0000${JSON.stringify(paged.parameters.slice(0, -2))}`) : undefined;
    const page = offset / limit;
    const after = known && offset >= SEEK_FROM ? known.ends.get(page - 1) : undefined;
    // Walking the id index with nothing but visibility to test, the statement reads about the books it skips and
    // returns: up to PER_ROW_ROWS of them, content restrictions are cheaper tested per book than collected as a set.
    const walked = after === undefined ? offset + limit : limit;
    const perRow = plain && walked <= PER_ROW_ROWS && principal.restrictions.length > 0 && !isAdmin(principal);
    const rows = perRow ? 'per-row' : 'set';
    ids = await column<number>(
      store,
      after !== undefined
        ? statement(`seek:${rows}`, [after, limit], () => listed(perRow).where('book.id', '>', after).limit(limit).compile())
        : perRow
          ? statement('paged:per-row', [limit, offset], () => listed(true).limit(limit).offset(offset).compile())
          : paged,
    );
    const last = ids.at(-1);
    // Kept only when nothing changed meanwhile and no write of this process is open (its rows may not stay).
    if (known && last !== undefined && !store.writeInFlight() && sameGeneration(known.generation, sourceForSql(store, paged.sql).generation())) {
      known.ends.delete(page);
      if (known.ends.size >= MAX_ENDS) known.ends.delete(known.ends.keys().next().value as number);
      known.ends.set(page, last);
    }
  }
  if (slice === 'all') return { ids, total: ids.length };
  const counted = statement('count', [], () => countListed(store, principal, readsMetadata(conditions), (listed) => listed.where(andAll(conditions))));
  return { ids, total: await remembered(store, counted, async () => Number((await firstAside<number>(store, counted)) ?? 0)) };
}

/** The book's row if the principal may list it (visible, not deleted, not physical); undefined otherwise. */
export async function listedBookRow(store: Store, principal: Principal, bookId: number): Promise<KomgaBookRow | undefined> {
  const [listed] = await column<number>(store, listedBooks(store, principal, { perRow: true, metadata: false }).where('book.id', '=', bookId).select('book.id').compile());
  return listed === undefined ? undefined : (await loadBookRows(store, [bookId]))[0];
}

export interface LibraryRow {
  id: number;
  name: string;
  root: string;
  createdAt: string;
}

/** The libraries the principal may see, by name. */
export async function visibleLibraries(store: Store, principal: Principal): Promise<LibraryRow[]> {
  const rows = (await store.exec.all(
    `SELECT l.id, l.name, l.created_at, (SELECT p.path FROM library_path p WHERE p.library_id = l.id ORDER BY p.id LIMIT 1) AS root
       FROM library l ORDER BY ${store.dialect.nocase('l.name')}, l.id`,
  )) as { id: number; name: string; created_at: string; root: string | null }[];
  return rows.filter((r) => canSeeLibrary(principal, r.id)).map((r) => ({ id: r.id, name: r.name, root: r.root ?? '', createdAt: r.created_at }));
}
