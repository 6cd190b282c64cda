// Reads books out of the catalog in the Grimmory `Book` shape (camelCase, nulls omitted).
import { sql } from 'kysely';
import { join } from 'node:path';
import type { Db } from '../store/store.ts';
import { pickPrimary } from './primary-file.ts';
import type { BookFileType } from '../formats/types.ts';
import type { AudioChapter } from '../formats/types.ts';

type Json = Record<string, unknown>;

const HIDDEN_METADATA_COLUMNS = new Set(['book_id', 'identifiers_json', 'search_text', 'thumbnail', 'cover', 'review_count', 'thumbnail_locked', 'review_count_locked', 'rating_locked_legacy']);
const BOOLEAN_METADATA_COLUMNS = new Set(['abridged']);

export function camel(column: string): string {
  return column.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

function dropNulls(obj: Json): Json {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== null && v !== undefined));
}

/** book_metadata row → BookMetadata JSON (locks as booleans, `all_fields_locked` as `allMetadataLocked`). */
export function metadataJson(row: Json): Json {
  const out: Json = {};
  for (const [column, value] of Object.entries(row)) {
    if (HIDDEN_METADATA_COLUMNS.has(column)) continue;
    if (column === 'all_fields_locked') out.allMetadataLocked = value === 1;
    else if (column.endsWith('_locked') || BOOLEAN_METADATA_COLUMNS.has(column)) out[camel(column)] = value === null ? null : value === 1;
    else out[camel(column)] = value;
  }
  return dropNulls(out);
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

export function absoluteFilePath(rootPath: string | undefined, file: Pick<BookFileRow, 'file_sub_path' | 'file_name'>): string | undefined {
  if (!rootPath) return undefined;
  return join(rootPath, file.file_sub_path, file.file_name);
}

function extensionOf(file: BookFileRow): string | undefined {
  if (file.is_folder_based) return undefined;
  const lower = file.file_name.toLowerCase();
  if (lower.endsWith('.fb2.zip')) return 'fb2';
  const dot = lower.lastIndexOf('.');
  return dot === -1 ? undefined : lower.slice(dot + 1);
}

export function bookFileJson(file: BookFileRow, rootPath: string | undefined): Json {
  return dropNulls({
    id: file.id,
    bookId: file.book_id,
    fileName: file.file_name,
    filePath: absoluteFilePath(rootPath, file),
    fileSubPath: file.file_sub_path,
    book: file.is_book === 1,
    folderBased: file.is_folder_based === 1,
    bookType: file.book_type,
    archiveType: file.archive_type,
    fileSizeKb: file.file_size_kb,
    extension: extensionOf(file),
    description: file.description,
    addedOn: file.added_on,
  });
}

export function audiobookJson(file: BookFileRow): Json {
  let chapters: AudioChapter[] | undefined;
  try {
    chapters = file.chapters_json ? (JSON.parse(file.chapters_json) as AudioChapter[]) : undefined;
  } catch {
    chapters = undefined;
  }
  return dropNulls({
    durationSeconds: file.duration_seconds,
    bitrate: file.bitrate,
    sampleRate: file.sample_rate,
    channels: file.channels,
    codec: file.codec,
    chapterCount: file.chapter_count,
    chapters,
  });
}

async function namesByBook(db: Db, bookIds: number[], mapping: 'book_metadata_author_mapping' | 'book_metadata_category_mapping' | 'book_metadata_tag_mapping' | 'book_metadata_mood_mapping'): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  if (bookIds.length === 0) return out;
  let rows: { book_id: number; name: string }[];
  if (mapping === 'book_metadata_author_mapping') {
    rows = await db.selectFrom('book_metadata_author_mapping as m').innerJoin('author as n', 'n.id', 'm.author_id').select(['m.book_id', 'n.name']).where('m.book_id', 'in', bookIds).orderBy('m.book_id').orderBy('m.sort_order').execute();
  } else if (mapping === 'book_metadata_category_mapping') {
    rows = await db.selectFrom('book_metadata_category_mapping as m').innerJoin('category as n', 'n.id', 'm.category_id').select(['m.book_id', 'n.name']).where('m.book_id', 'in', bookIds).orderBy('n.name').execute();
  } else if (mapping === 'book_metadata_tag_mapping') {
    rows = await db.selectFrom('book_metadata_tag_mapping as m').innerJoin('tag as n', 'n.id', 'm.tag_id').select(['m.book_id', 'n.name']).where('m.book_id', 'in', bookIds).orderBy('n.name').execute();
  } else {
    rows = await db.selectFrom('book_metadata_mood_mapping as m').innerJoin('mood as n', 'n.id', 'm.mood_id').select(['m.book_id', 'n.name']).where('m.book_id', 'in', bookIds).orderBy('n.name').execute();
  }
  for (const r of rows) {
    const list = out.get(r.book_id) ?? [];
    list.push(r.name);
    out.set(r.book_id, list);
  }
  return out;
}

async function comicJson(db: Db, bookId: number): Promise<Json | undefined> {
  const row = (await db.selectFrom('comic_metadata').selectAll().where('book_id', '=', bookId).executeTakeFirst()) as Json | undefined;
  if (!row) return undefined;
  const out: Json = {};
  for (const [column, value] of Object.entries(row)) {
    if (column === 'book_id') continue;
    out[camel(column)] = column.endsWith('_locked') || column === 'black_and_white' || column === 'manga' ? (value === null ? null : value === 1) : value;
  }
  const creators = await db.selectFrom('comic_metadata_creator_mapping as m').innerJoin('comic_creator as c', 'c.id', 'm.creator_id').select(['m.role', 'c.name']).where('m.book_id', '=', bookId).orderBy('m.id').execute();
  const roles: Record<string, string> = { PENCILLER: 'pencillers', INKER: 'inkers', COLORIST: 'colorists', LETTERER: 'letterers', COVER_ARTIST: 'coverArtists', EDITOR: 'editors' };
  for (const c of creators) {
    const field = roles[c.role];
    if (field) out[field] = [...((out[field] as string[] | undefined) ?? []), c.name];
  }
  for (const [field, mapping, table, column] of [
    ['characters', 'comic_metadata_character_mapping', 'comic_character', 'character_id'],
    ['teams', 'comic_metadata_team_mapping', 'comic_team', 'team_id'],
    ['locations', 'comic_metadata_location_mapping', 'comic_location', 'location_id'],
  ] as const) {
    const { rows } = await sql<{ name: string }>`select n.name from ${sql.table(mapping)} m join ${sql.table(table)} n on n.id = ${sql.ref(`m.${column}`)} where m.book_id = ${bookId}`.execute(db);
    if (rows.length > 0) out[field] = rows.map((n) => n.name);
  }
  return dropNulls(out);
}

/** Full Book JSON for one book, or undefined when there is no such book. */
export async function bookJson(db: Db, bookId: number): Promise<Json | undefined> {
  const book = await db.selectFrom('book').innerJoin('library', 'library.id', 'book.library_id').select(['book.id', 'book.library_id', 'book.library_path_id', 'book.added_on', 'book.metadata_match_score', 'book.is_physical', 'book.missing_at', 'library.name as library_name', 'library.format_priority']).where('book.id', '=', bookId).executeTakeFirst();
  if (!book) return undefined;
  const metaRow = (await db.selectFrom('book_metadata').selectAll().where('book_id', '=', bookId).executeTakeFirst()) as Json | undefined;
  const files = (await db.selectFrom('book_file').selectAll().where('book_id', '=', bookId).orderBy('id').execute()) as unknown as BookFileRow[];
  const roots = new Map((await db.selectFrom('library_path').select(['id', 'path']).where('library_id', '=', book.library_id).execute()).map((r) => [r.id, r.path]));
  const priority = book.format_priority ? (JSON.parse(book.format_priority) as BookFileType[]) : null;
  const bookFiles = files.filter((f) => f.is_book === 1);
  const primary = pickPrimary(bookFiles, priority);
  const rootOf = (f: BookFileRow): string | undefined => (f.library_path_id === null ? undefined : roots.get(f.library_path_id));

  const metadata = metaRow ? metadataJson(metaRow) : {};
  const [authors, categories, tags, moods] = await Promise.all([
    namesByBook(db, [bookId], 'book_metadata_author_mapping'),
    namesByBook(db, [bookId], 'book_metadata_category_mapping'),
    namesByBook(db, [bookId], 'book_metadata_tag_mapping'),
    namesByBook(db, [bookId], 'book_metadata_mood_mapping'),
  ]);
  metadata.bookId = bookId;
  metadata.authors = authors.get(bookId) ?? [];
  metadata.categories = categories.get(bookId) ?? [];
  metadata.tags = tags.get(bookId) ?? [];
  metadata.moods = moods.get(bookId) ?? [];
  if (primary?.is_fixed_layout) metadata.isFixedLayout = true;
  const audioFile = bookFiles.find((f) => f.book_type === 'AUDIOBOOK');
  if (audioFile) metadata.audiobookMetadata = audiobookJson(audioFile);
  const comic = await comicJson(db, bookId);
  if (comic) metadata.comicMetadata = comic;

  const rootPath = book.library_path_id === null ? undefined : roots.get(book.library_path_id);
  return dropNulls({
    id: book.id,
    libraryId: book.library_id,
    libraryName: book.library_name,
    libraryPath: book.library_path_id === null ? undefined : { id: book.library_path_id, libraryId: book.library_id, path: rootPath },
    title: metadata.title,
    addedOn: book.added_on,
    metadataMatchScore: book.metadata_match_score,
    isPhysical: book.is_physical === 1,
    metadata,
    primaryFile: primary ? bookFileJson(primary, rootOf(primary)) : undefined,
    alternativeFormats: bookFiles.filter((f) => f.id !== primary?.id).map((f) => bookFileJson(f, rootOf(f))),
    supplementaryFiles: files.filter((f) => f.is_book !== 1).map((f) => bookFileJson(f, rootOf(f))),
    // Not part of Grimmory's Book: tells scripts the files are gone from disk (the book is kept with its reading data).
    missing: book.missing_at ? true : undefined,
  });
}

export interface BookListItem {
  id: number;
  libraryId: number;
  title: string | null;
  authors: string[];
  seriesName: string | null;
  seriesNumber: number | null;
  formats: string[];
  missing: boolean;
}

export async function listBookItems(db: Db, filter: { libraryId?: number; limit?: number; offset?: number } = {}): Promise<BookListItem[]> {
  let q = db
    .selectFrom('book')
    .leftJoin('book_metadata as m', 'm.book_id', 'book.id')
    .select(['book.id', 'book.library_id', 'book.missing_at', 'm.title', 'm.series_name', 'm.series_number'])
    .orderBy('book.id');
  if (filter.libraryId !== undefined) q = q.where('book.library_id', '=', filter.libraryId);
  if (filter.limit !== undefined) q = q.limit(filter.limit).offset(filter.offset ?? 0);
  const rows = await q.execute();
  const ids = rows.map((r) => r.id);
  const authors = new Map<number, string[]>();
  const formats = new Map<number, string[]>();
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    for (const [id, names] of await namesByBook(db, chunk, 'book_metadata_author_mapping')) authors.set(id, names);
    const files = await db.selectFrom('book_file').select(['book_id', 'book_type']).where('book_id', 'in', chunk).where('is_book', '=', 1).orderBy('id').execute();
    for (const f of files) formats.set(f.book_id, [...new Set([...(formats.get(f.book_id) ?? []), f.book_type ?? '?'])]);
  }
  return rows.map((r) => ({
    id: r.id,
    libraryId: r.library_id,
    title: r.title,
    authors: authors.get(r.id) ?? [],
    seriesName: r.series_name,
    seriesNumber: r.series_number,
    formats: formats.get(r.id) ?? [],
    missing: r.missing_at !== null,
  }));
}
