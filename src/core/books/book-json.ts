// Turns catalog rows of one book into Grimmory's `Book` JSON (camelCase, nulls omitted), in its full and list-view forms.
import { join } from 'node:path';
import type { AudioChapter, BookFileType } from '../formats/types.ts';
import { BOOK_METADATA_LOCKS } from '../store/migrations/001-initial.ts';
import { pickPrimary } from './primary-file.ts';

export type Json = Record<string, unknown>;

export interface BookRow {
  id: number;
  library_id: number;
  library_name: string;
  format_priority: string | null;
  library_path_id: number | null;
  added_on: string;
  metadata_match_score: number | null;
  is_physical: number;
  missing_at: string | null;
}

export interface BookFileRow {
  id: number;
  book_id: number;
  library_path_id: number | null;
  file_sub_path: string;
  file_name: string;
  file_size_kb: number | null;
  is_book: number;
  book_type: string | null;
  archive_type: string | null;
  is_folder_based: number;
  is_fixed_layout: number;
  description: string | null;
  added_on: string;
  missing_at: string | null;
  duration_seconds: number | null;
  bitrate: number | null;
  sample_rate: number | null;
  channels: number | null;
  codec: string | null;
  chapter_count: number | null;
  chapters_json: string | null;
}

export interface ComicParts {
  row: Json;
  creators: { role: string; name: string }[];
  characters: string[];
  teams: string[];
  locations: string[];
}

/** Everything the catalog holds about one book, as loaded in bulk. */
export interface BookBundle {
  book: BookRow;
  metadata: Json | undefined;
  authors: string[];
  categories: string[];
  tags: string[];
  moods: string[];
  files: BookFileRow[];
  comic: ComicParts | undefined;
}

export interface BookJsonOptions {
  /** Grimmory's `stripForListView`: no lock flags, external ids or detail fields, no empty collections. */
  listView: boolean;
  withDescription: boolean;
}

export function camel(column: string): string {
  return column.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** Lock flags Grimmory's BookMetadata carries; `allMetadataLocked` in list view means every one of them is set. */
const GRIMMORY_LOCKS = BOOK_METADATA_LOCKS.filter((f) => f !== 'thumbnail' && f !== 'rating' && f !== 'review_count').map((f) => `${f}_locked`);

const NEVER_SENT = new Set(['book_id', 'identifiers_json', 'search_text', 'thumbnail', 'cover', 'review_count', 'thumbnail_locked', 'review_count_locked', 'rating_locked', 'all_fields_locked', 'all_metadata_locked']);
const BOOLEAN_VALUES = new Set(['abridged']);
const LIST_VIEW_DROPPED = new Set([
  'asin', 'goodreads_id', 'comicvine_id', 'hardcover_id', 'hardcover_book_id', 'google_id', 'lubimyczytac_id', 'ranobedb_id',
  'audible_id', 'douban_id', 'subtitle', 'series_total', 'abridged', 'external_url', 'douban_rating', 'douban_review_count',
  'audible_rating', 'audible_review_count', 'lubimyczytac_rating',
]);

type ColumnRule = { key: string; as: 'value' | 'boolean' } | undefined;
const fullRules = new Map<string, ColumnRule>();
const listRules = new Map<string, ColumnRule>();

/** How a book_metadata column appears in JSON; computed once per column name. */
function ruleFor(column: string, listView: boolean): ColumnRule {
  const cache = listView ? listRules : fullRules;
  if (cache.has(column)) return cache.get(column);
  let rule: ColumnRule;
  const isLock = column.endsWith('_locked');
  if (NEVER_SENT.has(column) || column === 'description') rule = undefined;
  else if (listView && (isLock || LIST_VIEW_DROPPED.has(column))) rule = undefined;
  else rule = { key: camel(column), as: isLock || BOOLEAN_VALUES.has(column) ? 'boolean' : 'value' };
  cache.set(column, rule);
  return rule;
}

/** book_metadata row → BookMetadata JSON without the name lists. */
export function metadataJson(row: Json, options: BookJsonOptions = { listView: false, withDescription: true }): Json {
  const out: Json = {};
  for (const column in row) {
    const value = row[column];
    if (value === null || value === undefined) continue;
    const rule = ruleFor(column, options.listView);
    if (!rule) continue;
    out[rule.key] = rule.as === 'boolean' ? value === 1 : value;
  }
  if (options.withDescription && typeof row.description === 'string') out.description = row.description;
  if (options.listView) {
    out.allMetadataLocked = 'all_metadata_locked' in row ? row.all_metadata_locked === 1 : row.all_fields_locked === 1 || GRIMMORY_LOCKS.every((lock) => row[lock] === 1);
  }
  return out;
}

/**
 * The SELECT list of book_metadata a view needs: only the columns it sends, so a list of many books reads no lock
 * flags; list view gets `allMetadataLocked` computed by the query instead.
 */
export function metadataSelectList(columns: readonly string[], options: BookJsonOptions): string[] {
  const out = ['book_id', ...columns.filter((c) => ruleFor(c, options.listView) !== undefined)];
  if (options.withDescription) out.push('description');
  if (options.listView) out.push(`CASE WHEN all_fields_locked = 1 OR (${GRIMMORY_LOCKS.map((l) => `${l} = 1`).join(' AND ')}) THEN 1 ELSE 0 END AS all_metadata_locked`);
  return out;
}

/** A path `normalize` would change: `//`, a `.` or `..` segment, a trailing `/`. */
const NOT_NORMAL = /\/\/|(^|\/)\.\.?(\/|$)|\/$/;

export function absoluteFilePath(rootPath: string | undefined, file: Pick<BookFileRow, 'file_sub_path' | 'file_name'>): string | undefined {
  if (!rootPath) return undefined;
  // What join gives, without its normalizing pass when there is nothing to normalize (a page lists hundreds of files).
  const joined = file.file_sub_path === '' ? `${rootPath}/${file.file_name}` : `${rootPath}/${file.file_sub_path}/${file.file_name}`;
  return file.file_name === '' || NOT_NORMAL.test(joined) ? join(rootPath, file.file_sub_path, file.file_name) : joined;
}

/** Grimmory's rule: the text after the last dot (not a leading one), lower case; folders have none here. */
function extensionOf(file: Pick<BookFileRow, 'file_name' | 'is_folder_based'>): string | undefined {
  if (file.is_folder_based === 1) return undefined;
  const dot = file.file_name.lastIndexOf('.');
  return dot > 0 ? file.file_name.slice(dot + 1).toLowerCase() : undefined;
}

export function bookFileJson(file: BookFileRow, rootPath: string | undefined): Json {
  const out: Json = { id: file.id, bookId: file.book_id, fileName: file.file_name };
  const filePath = absoluteFilePath(rootPath, file);
  if (filePath !== undefined) out.filePath = filePath;
  out.fileSubPath = file.file_sub_path;
  out.book = file.is_book === 1;
  out.folderBased = file.is_folder_based === 1;
  if (file.book_type !== null) out.bookType = file.book_type;
  if (file.archive_type !== null) out.archiveType = file.archive_type;
  if (file.file_size_kb !== null) out.fileSizeKb = file.file_size_kb;
  const extension = extensionOf(file);
  if (extension !== undefined) out.extension = extension;
  if (file.description !== null) out.description = file.description;
  out.addedOn = file.added_on;
  return out;
}

function parseChapters(json: string | null): AudioChapter[] | undefined {
  if (!json) return undefined;
  try {
    const list = JSON.parse(json) as unknown;
    return Array.isArray(list) ? (list as AudioChapter[]) : undefined;
  } catch {
    return undefined;
  }
}

export function audiobookJson(file: BookFileRow, withChapters = true): Json {
  const out: Json = {};
  if (file.duration_seconds !== null) out.durationSeconds = file.duration_seconds;
  if (file.bitrate !== null) out.bitrate = file.bitrate;
  if (file.sample_rate !== null) out.sampleRate = file.sample_rate;
  if (file.channels !== null) out.channels = file.channels;
  if (file.codec !== null) out.codec = file.codec;
  if (file.chapter_count !== null) out.chapterCount = file.chapter_count;
  const chapters = withChapters ? parseChapters(file.chapters_json) : undefined;
  if (chapters) out.chapters = chapters;
  return out;
}

const CREATOR_FIELDS: Record<string, string> = { PENCILLER: 'pencillers', INKER: 'inkers', COLORIST: 'colorists', LETTERER: 'letterers', COVER_ARTIST: 'coverArtists', EDITOR: 'editors' };
const COMIC_BOOLEANS = new Set(['black_and_white', 'manga']);

export function comicJson(comic: ComicParts, listView: boolean): Json {
  const out: Json = {};
  if (!listView) {
    for (const column in comic.row) {
      const value = comic.row[column];
      if (column === 'book_id' || value === null || value === undefined) continue;
      out[camel(column)] = column.endsWith('_locked') || COMIC_BOOLEANS.has(column) ? value === 1 : value;
    }
  }
  for (const c of comic.creators) {
    const field = CREATOR_FIELDS[c.role];
    if (!field) continue;
    const names = (out[field] as string[] | undefined) ?? [];
    names.push(c.name);
    out[field] = names;
  }
  if (comic.characters.length > 0) out.characters = comic.characters;
  if (comic.teams.length > 0) out.teams = comic.teams;
  if (comic.locations.length > 0) out.locations = comic.locations;
  return out;
}

export function parseFormatPriority(json: string | null): BookFileType[] | null {
  if (!json) return null;
  try {
    const list = JSON.parse(json) as unknown;
    return Array.isArray(list) ? (list as BookFileType[]) : null;
  } catch {
    return null;
  }
}

/** A file's JSON with its library root. */
function fileJsonIn(file: BookFileRow, roots: ReadonlyMap<number, string>): Json {
  return bookFileJson(file, file.library_path_id === null ? undefined : roots.get(file.library_path_id));
}

/**
 * The Book JSON without its per-user parts (progress, status, rating, shelves). Plain loops rather than array
 * callbacks: a page runs this for every book, and V8 compiled the callback form (with every callback inlined) in 15-24
 * ms on the daemon's thread, again after each deoptimization, in the first pages a daemon served.
 */
export function assembleBook(bundle: BookBundle, roots: ReadonlyMap<number, string>, options: BookJsonOptions): Json {
  const { book, files } = bundle;
  const listView = options.listView;
  const bookFiles: BookFileRow[] = [];
  for (let i = 0; i < files.length; i++) if ((files[i] as BookFileRow).is_book === 1) bookFiles.push(files[i] as BookFileRow);
  const primary = pickPrimary(bookFiles, parseFormatPriority(book.format_priority));

  const metadata = bundle.metadata ? metadataJson(bundle.metadata, options) : {};
  metadata.bookId = book.id;
  if (!listView || bundle.authors.length > 0) metadata.authors = bundle.authors;
  if (!listView || bundle.categories.length > 0) metadata.categories = bundle.categories;
  if (!listView || bundle.moods.length > 0) metadata.moods = bundle.moods;
  if (!listView || bundle.tags.length > 0) metadata.tags = bundle.tags;
  if (primary?.is_fixed_layout === 1) metadata.isFixedLayout = true;
  let audioFile: BookFileRow | undefined;
  for (let i = 0; i < bookFiles.length && !audioFile; i++) {
    const file = bookFiles[i] as BookFileRow;
    if (file.book_type === 'AUDIOBOOK' && file.duration_seconds !== null) audioFile = file;
  }
  if (audioFile) metadata.audiobookMetadata = audiobookJson(audioFile, !listView);
  if (bundle.comic) metadata.comicMetadata = comicJson(bundle.comic, listView);

  const out: Json = { id: book.id, libraryId: book.library_id, libraryName: book.library_name };
  if (!listView && book.library_path_id !== null) out.libraryPath = { id: book.library_path_id };
  out.addedOn = book.added_on;
  if (book.metadata_match_score !== null) out.metadataMatchScore = book.metadata_match_score;
  out.isPhysical = book.is_physical === 1;
  out.metadata = metadata;
  if (primary) out.primaryFile = fileJsonIn(primary, roots);
  const alternatives: Json[] = [];
  for (let i = 0; i < bookFiles.length; i++) if (bookFiles[i] !== primary) alternatives.push(fileJsonIn(bookFiles[i] as BookFileRow, roots));
  const supplementary: Json[] = [];
  for (let i = 0; i < files.length; i++) if ((files[i] as BookFileRow).is_book !== 1) supplementary.push(fileJsonIn(files[i] as BookFileRow, roots));
  if (!listView || alternatives.length > 0) out.alternativeFormats = alternatives;
  if (!listView || supplementary.length > 0) out.supplementaryFiles = supplementary;
  // Not part of Grimmory's Book: tells clients the files are gone from disk (the book is kept with its reading data).
  if (book.missing_at) out.missing = true;
  return out;
}
