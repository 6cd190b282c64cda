// AppBookSummary: the mobile app's compact book, with the caller's status, rating and progress. Loaded for a page of
// ids at once (one query per table, on a range of ids or a set), in the order given.
import { batchFilter, repeated, type BatchFilter } from '../books/book-bundles.ts';
import { keptByVersion, keptOrBuilt, type Built } from '../books/book-versions.ts';
import { metadataSelectList, parseFormatPriority } from '../books/book-json.ts';
import { pickPrimary } from '../books/primary-file.ts';
import type { SqlDialect } from '../store/dialect.ts';
import type { SqlExec } from '../store/sql-exec.ts';
import type { Store } from '../store/store.ts';

export type Json = Record<string, unknown>;

/** The ids as one JSON array parameter: one statement text whatever the number of ids. */
export const inIds = (dialect: SqlDialect): string => `IN (${dialect.jsonValues('integer')})`;

/** A statement text per engine, built once. */
export function perDialect(build: (dialect: SqlDialect) => string): (dialect: SqlDialect) => string {
  const texts = new Map<SqlDialect, string>();
  return (dialect) => {
    let text = texts.get(dialect);
    if (text === undefined) texts.set(dialect, (text = build(dialect)));
    return text;
  };
}

/** The condition a statement puts on a column of book ids. */
type OnIds = (column: string) => string;

/** A statement on a set of ids given as one JSON array, per engine. */
const onIdSet = (build: (on: OnIds) => string) => perDialect((d) => build((column) => `${column} ${inIds(d)}`));

/**
 * A statement on a page of ids per engine and batch shape (see batchFilter): a page in date or id order is mostly a
 * dense run of ids, read as one range of each index rather than one probe per id.
 */
function onBatch(build: (on: OnIds) => string): (dialect: SqlDialect, filter: BatchFilter) => string {
  const texts = new Map<string, string>();
  return (dialect, filter) => {
    const key = `${dialect.engine}/${filter.dense}`;
    let text = texts.get(key);
    if (text === undefined) texts.set(key, (text = build(filter.on)));
    return text;
  };
}

/** `allMetadataLocked`, computed as the list-view Book JSON computes it (lock columns exist on book_metadata only). */
const ALL_LOCKED = metadataSelectList([], { listView: true, withDescription: false }).slice(1).join(', ');

const SUMMARY_BOOKS_SQL = onBatch((on) => `SELECT b.id, b.library_id, b.added_on, b.metadata_match_score, b.is_physical, l.format_priority,
  m.title, m.series_name, m.series_number, m.cover_updated_on, m.audiobook_cover_updated_on, m.publisher, m.language, m.narrator,
  m.isbn_13, m.isbn_10, m.published_date, m.page_count, m.age_rating, m.content_rating, m.amazon_rating, m.amazon_review_count,
  m.goodreads_rating, m.goodreads_review_count, m.hardcover_rating, m.hardcover_review_count, m.ranobedb_rating,
  m.lubimyczytac_rating, m.audible_rating, m.audible_review_count, m.book_id AS has_metadata, ${ALL_LOCKED}
  FROM book b JOIN library l ON l.id = b.library_id LEFT JOIN book_metadata m ON m.book_id = b.id WHERE ${on('b.id')}`);

export interface SummaryBookRow {
  id: number;
  library_id: number;
  added_on: string;
  metadata_match_score: number | null;
  is_physical: number;
  format_priority: string | null;
  title: string | null;
  series_name: string | null;
  series_number: number | null;
  cover_updated_on: string | null;
  audiobook_cover_updated_on: string | null;
  publisher: string | null;
  language: string | null;
  narrator: string | null;
  isbn_13: string | null;
  isbn_10: string | null;
  published_date: string | null;
  page_count: number | null;
  age_rating: number | null;
  content_rating: string | null;
  amazon_rating: number | null;
  amazon_review_count: number | null;
  goodreads_rating: number | null;
  goodreads_review_count: number | null;
  hardcover_rating: number | null;
  hardcover_review_count: number | null;
  ranobedb_rating: number | null;
  lubimyczytac_rating: number | null;
  audible_rating: number | null;
  audible_review_count: number | null;
  has_metadata: number | null;
  /** 1/0, or true/false where the expression is a comparison on PostgreSQL. */
  all_metadata_locked: number | boolean | null;
}

export interface FileRow {
  id: number;
  book_id: number;
  file_name: string;
  file_size_kb: number | null;
  is_book: number;
  book_type: string | null;
  archive_type: string | null;
  is_folder_based: number;
  added_on: string;
  missing_at: string | null;
}

export interface ProgressRow {
  book_id: number;
  read_status: string | null;
  personal_rating: number | null;
  last_read_time: string | null;
  date_finished: string | null;
  epub_progress: string | null;
  epub_progress_href: string | null;
  epub_progress_percent: number | null;
  pdf_progress: number | null;
  pdf_progress_percent: number | null;
  cbx_progress: number | null;
  cbx_progress_percent: number | null;
  koreader_progress_percent: number | null;
  koreader_device: string | null;
  koreader_device_id: string | null;
  koreader_last_sync_time: string | null;
  kobo_progress_percent: number | null;
}

/** Authors ordered by their credit order (`ord`), the other names by name. */
const namesText = (on: OnIds): string =>
  ['book_metadata_author_mapping:author:author_id:x.sort_order', 'book_metadata_category_mapping:category:category_id:0', 'book_metadata_tag_mapping:tag:tag_id:0', 'book_metadata_mood_mapping:mood:mood_id:0']
    .map((spec, kind) => {
      const [mapping, table, column, order] = spec.split(':') as [string, string, string, string];
      return `SELECT x.book_id, ${kind} AS kind, n.name, ${order} AS ord FROM ${mapping} x JOIN ${table} n ON n.id = x.${column} WHERE ${on('x.book_id')}`;
    })
    .join(' UNION ALL ');
const NAMES_SQL = onIdSet(namesText);
const NAMES_BATCH_SQL = onBatch(namesText);

const filesText = (on: OnIds): string => `SELECT id, book_id, file_name, file_size_kb, is_book, book_type, archive_type, is_folder_based, added_on, missing_at
  FROM book_file WHERE ${on('book_id')} ORDER BY book_id, id`;
export const FILES_SQL = onIdSet(filesText);
const FILES_BATCH_SQL = onBatch(filesText);

const progressText = (on: OnIds): string => `SELECT book_id, read_status, personal_rating, last_read_time, date_finished, epub_progress, epub_progress_href,
  epub_progress_percent, pdf_progress, pdf_progress_percent, cbx_progress, cbx_progress_percent, koreader_progress_percent, koreader_device,
  koreader_device_id, koreader_last_sync_time, kobo_progress_percent FROM user_book_progress WHERE user_id = ? AND ${on('book_id')}`;
export const PROGRESS_SQL = onIdSet(progressText);
const PROGRESS_BATCH_SQL = onBatch(progressText);

export interface BookNames {
  authors: string[];
  categories: string[];
  tags: string[];
  moods: string[];
}

type NameRow = { book_id: number; kind: number; name: string; ord: number };

/** Authors in credit order; categories, tags and moods by name. */
export async function namesByBook(exec: SqlExec, dialect: SqlDialect, idsJson: string): Promise<Map<number, BookNames>> {
  return namesOf((await exec.all(NAMES_SQL(dialect), [idsJson, idsJson, idsJson, idsJson])) as NameRow[]);
}

function namesOf(rows: NameRow[]): Map<number, BookNames> {
  rows.sort((a, b) => a.book_id - b.book_id || a.kind - b.kind || a.ord - b.ord || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const out = new Map<number, BookNames>();
  const keys = ['authors', 'categories', 'tags', 'moods'] as const;
  for (const r of rows) {
    let names = out.get(r.book_id);
    if (!names) out.set(r.book_id, (names = { authors: [], categories: [], tags: [], moods: [] }));
    names[keys[r.kind] as keyof BookNames].push(r.name);
  }
  return out;
}

export function groupBy<T extends { book_id: number }>(rows: T[]): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const r of rows) {
    const list = out.get(r.book_id);
    if (list) list.push(r);
    else out.set(r.book_id, [r]);
  }
  return out;
}

/** The file that speaks for the book: the library's preferred format among its book files, then the oldest. */
export function primaryFileOf(files: FileRow[], formatPriority: string | null): FileRow | undefined {
  return pickPrimary(
    files.filter((f) => f.is_book === 1),
    parseFormatPriority(formatPriority),
  );
}

/**
 * Grimmory's app `readProgress`: the first percent the progress row has, in this order — KOReader (kept as the 0..1
 * fraction KOReader sends, as Grimmory does), Kobo, EPUB, PDF, comic.
 */
export function readProgressOf(p: ProgressRow | undefined): number | undefined {
  if (!p) return undefined;
  return p.koreader_progress_percent ?? p.kobo_progress_percent ?? p.epub_progress_percent ?? p.pdf_progress_percent ?? p.cbx_progress_percent ?? undefined;
}

/** Copies the non-null values, under their JSON names. */
export function put(out: Json, values: Record<string, unknown>): Json {
  for (const key in values) {
    const value = values[key];
    if (value !== null && value !== undefined) out[key] = value;
  }
  return out;
}

/** Grimmory's app thumbnail path (as it sends it; the app builds cover URLs of its own). */
export const thumbnailUrl = (bookId: number): string => `/api/books/${bookId}/cover`;

type HeadRow = Pick<SummaryBookRow, 'id' | 'title' | 'series_name' | 'series_number' | 'library_id' | 'added_on'>;

/** Sets the field unless the value is null or undefined (Grimmory's JSON leaves those out). */
function set(out: Json, key: string, value: unknown): void {
  if (value !== null && value !== undefined) out[key] = value;
}

/** Adds the fields AppBookSummary and AppBookDetail both open with, in Grimmory's order. */
function putHead(out: Json, book: HeadRow, names: BookNames | undefined, progress: ProgressRow | undefined): Json {
  out.id = book.id;
  set(out, 'title', book.title);
  out.authors = names?.authors ?? [];
  out.thumbnailUrl = thumbnailUrl(book.id);
  set(out, 'readStatus', progress?.read_status);
  set(out, 'personalRating', progress?.personal_rating);
  set(out, 'seriesName', book.series_name);
  set(out, 'seriesNumber', book.series_number);
  set(out, 'libraryId', book.library_id);
  set(out, 'addedOn', book.added_on);
  set(out, 'lastReadTime', progress?.last_read_time);
  return out;
}

/** The fields AppBookSummary and AppBookDetail both open with, in Grimmory's order (nulls left out). */
export function headFields(book: HeadRow, names: BookNames | undefined, progress: ProgressRow | undefined): Json {
  return putHead({}, book, names, progress);
}

/** Built field by field (a page has 50 of them): no intermediate object per book. */
function summaryJson(book: SummaryBookRow, names: BookNames | undefined, files: FileRow[], progress: ProgressRow | undefined): Json {
  const primary = primaryFileOf(files, book.format_priority);
  const out = putHead({}, book, names, progress);
  set(out, 'readProgress', readProgressOf(progress));
  set(out, 'primaryFileId', primary?.id);
  set(out, 'primaryFileType', primary?.book_type);
  set(out, 'primaryFileName', primary?.file_name);
  set(out, 'coverUpdatedOn', book.cover_updated_on);
  set(out, 'audiobookCoverUpdatedOn', book.audiobook_cover_updated_on);
  out.isPhysical = book.is_physical === 1;
  set(out, 'publisher', book.publisher);
  out.categories = names?.categories ?? [];
  out.tags = names?.tags ?? [];
  out.moods = names?.moods ?? [];
  set(out, 'language', book.language);
  set(out, 'narrator', book.narrator);
  set(out, 'isbn13', book.isbn_13);
  set(out, 'isbn10', book.isbn_10);
  set(out, 'publishedDate', book.published_date);
  set(out, 'pageCount', book.page_count);
  set(out, 'ageRating', book.age_rating);
  set(out, 'contentRating', book.content_rating);
  set(out, 'metadataMatchScore', book.metadata_match_score);
  set(out, 'fileSizeKb', primary?.file_size_kb);
  set(out, 'amazonRating', book.amazon_rating);
  set(out, 'amazonReviewCount', book.amazon_review_count);
  set(out, 'goodreadsRating', book.goodreads_rating);
  set(out, 'goodreadsReviewCount', book.goodreads_review_count);
  set(out, 'hardcoverRating', book.hardcover_rating);
  set(out, 'hardcoverReviewCount', book.hardcover_review_count);
  set(out, 'ranobedbRating', book.ranobedb_rating);
  set(out, 'lubimyczytacRating', book.lubimyczytac_rating);
  set(out, 'audibleRating', book.audible_rating);
  set(out, 'audibleReviewCount', book.audible_review_count);
  out.allMetadataLocked = book.has_metadata !== null && Boolean(book.all_metadata_locked);
  return out;
}

/** What an AppBookSummary shows of a book's own rows (the reader's progress aside). */
interface SummaryParts {
  book: SummaryBookRow;
  names: BookNames | undefined;
  files: FileRow[];
}

/** Books whose rows are kept per catalog: a few pages of every list a few readers page through. */
const KEPT_SUMMARIES = 4096;

/** Each book's rows, read in one snapshot. */
async function summaryParts(store: Store, ids: readonly number[]): Promise<Built<SummaryParts>[]> {
  const d = store.dialect;
  const batch = batchFilter(d, ids);
  const params = batch.params;
  return store.read(async ({ exec }) => {
    const books = (await exec.all(SUMMARY_BOOKS_SQL(d, batch), params)) as unknown as SummaryBookRow[];
    const names = namesOf((await exec.all(NAMES_BATCH_SQL(d, batch), repeated(params, 4))) as NameRow[]);
    const files = groupBy((await exec.all(FILES_BATCH_SQL(d, batch), params)) as unknown as FileRow[]);
    return books.map((book) => ({ id: book.id, value: { book, names: names.get(book.id), files: files.get(book.id) ?? [] }, keep: true }));
  });
}

/**
 * AppBookSummary of each id that exists, in the order given, with `userId`'s reading state. The books' own rows are
 * kept under each book's version (book-versions.ts): a page built again after a write elsewhere in the catalog reads
 * the versions, the reader's progress and only the rows of the books that changed.
 */
export async function bookSummaries(store: Store, userId: number, ids: readonly number[]): Promise<Json[]> {
  if (ids.length === 0) return [];
  const parts = await keptOrBuilt(store, keptByVersion<SummaryParts>(store, 'app-summary', KEPT_SUMMARIES), ids, (missing) => summaryParts(store, missing));
  const batch = batchFilter(store.dialect, ids);
  const progress = new Map(((await store.exec.all(PROGRESS_BATCH_SQL(store.dialect, batch), [userId, ...batch.params])) as unknown as ProgressRow[]).map((p) => [p.book_id, p]));
  const out: Json[] = [];
  for (const id of ids) {
    const found = parts.get(id);
    if (found) out.push(summaryJson(found.book, found.names, found.files, progress.get(id)));
  }
  return out;
}
