// Writes what a file says into book_metadata and comic_metadata, never touching a locked field.
import type { Transaction } from 'kysely';
import type { ExtractedComic, ExtractedMetadata } from '../formats/types.ts';
import type { DB } from '../store/db-types.ts';
import { nameIds, type NameTable } from './names.ts';
import { isSqlExec, kyselyExec, type SqlExec } from './sql-exec.ts';

type Scalar = string | number | null;

/** book_metadata column ← extracted field; the lock flag is `<column>_locked`. */
const SCALAR_FIELDS: [column: string, lock: string, pick: (m: ExtractedMetadata) => Scalar | undefined][] = [
  ['title', 'title', (m) => m.title],
  ['subtitle', 'subtitle', (m) => m.subtitle],
  ['publisher', 'publisher', (m) => m.publisher],
  ['published_date', 'published_date', (m) => m.publishedDate],
  ['description', 'description', (m) => m.description],
  ['isbn_13', 'isbn_13', (m) => m.isbn13],
  ['isbn_10', 'isbn_10', (m) => m.isbn10],
  ['asin', 'asin', (m) => m.asin],
  ['google_id', 'google_id', (m) => m.googleId],
  ['goodreads_id', 'goodreads_id', (m) => m.goodreadsId],
  ['hardcover_id', 'hardcover_id', (m) => m.hardcoverId],
  ['comicvine_id', 'comicvine_id', (m) => m.comicvineId],
  ['page_count', 'page_count', (m) => m.pageCount],
  ['language', 'language', (m) => m.language],
  ['series_name', 'series_name', (m) => m.seriesName],
  ['series_number', 'series_number', (m) => m.seriesNumber],
  ['series_total', 'series_total', (m) => m.seriesTotal],
  ['narrator', 'narrator', (m) => m.narrator],
  ['abridged', 'abridged', (m) => (m.abridged === undefined ? undefined : m.abridged ? 1 : 0)],
  ['rating', 'rating', (m) => m.rating],
  ['age_rating', 'age_rating', (m) => m.ageRating],
];

const LIST_FIELDS: [table: NameTable, mapping: 'book_metadata_author_mapping' | 'book_metadata_category_mapping' | 'book_metadata_tag_mapping', column: 'author_id' | 'category_id' | 'tag_id', lock: string, pick: (m: ExtractedMetadata) => string[]][] = [
  ['author', 'book_metadata_author_mapping', 'author_id', 'authors_locked', (m) => m.authors],
  ['category', 'book_metadata_category_mapping', 'category_id', 'categories_locked', (m) => m.categories],
  ['tag', 'book_metadata_tag_mapping', 'tag_id', 'tags_locked', (m) => m.tags],
];

type Row = Record<string, unknown>;

function isLocked(row: Row | undefined, lock: string): boolean {
  if (!row) return false;
  return row.all_fields_locked === 1 || row[lock] === 1;
}

const SCALAR_LOCKS = SCALAR_FIELDS.map(([, lock]) => `${lock}_locked`);

/**
 * The insert or update of a book's row in `table` for the columns `mask` selects (bit i: columns[i]), then
 * `trailing`. Built once per shape: a scan writes thousands of rows, all but a few with the same shape.
 */
function rowSql(cache: Map<number, string>, table: string, columns: readonly string[], trailing: readonly string[], mask: number, exists: boolean): string {
  const key = mask * 2 + (exists ? 1 : 0);
  let sql = cache.get(key);
  if (sql === undefined) {
    const names = [...columns.filter((_, i) => mask & (1 << i)), ...trailing];
    if (exists) sql = names.length > 0 ? `update ${table} set ${names.map((c) => `${c} = ?`).join(', ')} where book_id = ?` : '';
    else sql = `insert into ${table} (${[...names, 'book_id'].join(', ')}) values (${[...names, 'book_id'].map(() => '?').join(', ')})`;
    cache.set(key, sql);
  }
  return sql;
}

const BOOK_COLUMNS = SCALAR_FIELDS.map(([column]) => column);
const BOOK_TRAILING = ['identifiers_json', 'search_text'];
const bookSql = new Map<number, string>();

/**
 * Writes extracted metadata for a book. On a first write every field the file has is stored; on a rescan a field
 * whose lock is set (or all fields, with all_fields_locked) keeps its value.
 */
export async function writeBookMetadata(db: Transaction<DB> | SqlExec, bookId: number, meta: ExtractedMetadata, fileName: string): Promise<void> {
  const exec = isSqlExec(db) ? db : kyselyExec(db);
  const existing = (await exec.get('select * from book_metadata where book_id = ?', [bookId])) as Row | undefined;
  const params: Scalar[] = [];
  let mask = 0;
  let title: Scalar | undefined;
  for (let i = 0; i < SCALAR_FIELDS.length; i++) {
    if (isLocked(existing, SCALAR_LOCKS[i] as string)) continue;
    mask |= 1 << i;
    let value = (SCALAR_FIELDS[i] as (typeof SCALAR_FIELDS)[number])[2](meta) ?? null;
    // SCALAR_FIELDS starts with the title, which falls back to the file name.
    if (i === 0) title = value ||= titleFromFileName(fileName);
    params.push(value);
  }
  params.push(Object.keys(meta.identifiers).length > 0 ? JSON.stringify(meta.identifiers) : null, searchText(meta, (title ?? null) as string | null));
  await exec.run(rowSql(bookSql, 'book_metadata', BOOK_COLUMNS, BOOK_TRAILING, mask, existing !== undefined), [...params, bookId]);

  for (const [table, mapping, column, lock, pick] of LIST_FIELDS) {
    if (isLocked(existing, lock)) continue;
    await replaceNames(exec, bookId, table, mapping, column, pick(meta));
  }
}

type Mapping = 'book_metadata_author_mapping' | 'book_metadata_category_mapping' | 'book_metadata_tag_mapping' | 'comic_metadata_character_mapping' | 'comic_metadata_team_mapping' | 'comic_metadata_location_mapping';

const mappingSql = new Map<Mapping, { clear: string; insert: string }>();

async function replaceNames(exec: SqlExec, bookId: number, table: NameTable, mapping: Mapping, column: string, names: string[]): Promise<void> {
  const sortOrder = mapping === 'book_metadata_author_mapping';
  let sql = mappingSql.get(mapping);
  if (!sql) {
    sql = {
      clear: `delete from ${mapping} where book_id = ?`,
      insert: sortOrder ? `insert into ${mapping} (book_id, ${column}, sort_order) values (?, ?, ?) on conflict do nothing` : `insert into ${mapping} (book_id, ${column}) values (?, ?) on conflict do nothing`,
    };
    mappingSql.set(mapping, sql);
  }
  await exec.run(sql.clear, [bookId]);
  const ids = await nameIds(exec, table, names);
  for (let i = 0; i < ids.length; i++) await exec.run(sql.insert, sortOrder ? [bookId, ids[i] as number, i] : [bookId, ids[i] as number]);
}

/** `Some Book.epub` → `Some Book`; a folder audiobook's name stays as it is. */
function titleFromFileName(fileName: string): string {
  const lower = fileName.toLowerCase();
  if (lower.endsWith('.fb2.zip')) return fileName.slice(0, -'.fb2.zip'.length);
  const dot = fileName.lastIndexOf('.');
  return dot > 0 && fileName.length - dot <= 6 ? fileName.slice(0, dot) : fileName;
}

function searchText(meta: ExtractedMetadata, title: string | null): string {
  return [title, meta.subtitle, ...meta.authors, meta.seriesName, meta.isbn13, meta.isbn10].filter(Boolean).join(' ').toLowerCase();
}

const COMIC_SCALARS: [column: string, lock: string, pick: (c: ExtractedComic) => Scalar | undefined][] = [
  ['issue_number', 'issue_number', (c) => c.issueNumber],
  ['volume_name', 'volume_name', (c) => c.volumeName],
  ['volume_number', 'volume_number', (c) => c.volumeNumber],
  ['story_arc', 'story_arc', (c) => c.storyArc],
  ['story_arc_number', 'story_arc_number', (c) => c.storyArcNumber],
  ['alternate_series', 'alternate_series', (c) => c.alternateSeries],
  ['alternate_issue', 'alternate_issue', (c) => c.alternateIssue],
  ['imprint', 'imprint', (c) => c.imprint],
  ['format', 'format', (c) => c.format],
  ['black_and_white', 'black_and_white', (c) => (c.blackAndWhite === undefined ? undefined : c.blackAndWhite ? 1 : 0)],
  ['manga', 'manga', (c) => (c.manga === undefined ? undefined : c.manga ? 1 : 0)],
  ['reading_direction', 'reading_direction', (c) => c.readingDirection],
  ['web_link', 'web_link', (c) => c.webLink],
  ['notes', 'notes', (c) => c.notes],
];

const COMIC_ROLES: [role: string, lock: string, pick: (c: ExtractedComic) => string[]][] = [
  ['PENCILLER', 'pencillers_locked', (c) => c.pencillers],
  ['INKER', 'inkers_locked', (c) => c.inkers],
  ['COLORIST', 'colorists_locked', (c) => c.colorists],
  ['LETTERER', 'letterers_locked', (c) => c.letterers],
  ['COVER_ARTIST', 'cover_artists_locked', (c) => c.coverArtists],
  ['EDITOR', 'editors_locked', (c) => c.editors],
];

const COMIC_COLUMNS = COMIC_SCALARS.map(([column]) => column);
const COMIC_LOCKS = COMIC_SCALARS.map(([, lock]) => `${lock}_locked`);
const comicSql = new Map<number, string>();

export async function writeComicMetadata(db: Transaction<DB> | SqlExec, bookId: number, comic: ExtractedComic, bookLocks: Row | undefined): Promise<void> {
  const exec = isSqlExec(db) ? db : kyselyExec(db);
  const existing = (await exec.get('select * from comic_metadata where book_id = ?', [bookId])) as Row | undefined;
  const allLocked = bookLocks?.all_fields_locked === 1;
  const locked = (lock: string): boolean => allLocked || existing?.[lock] === 1;
  const params: Scalar[] = [];
  let mask = 0;
  for (let i = 0; i < COMIC_SCALARS.length; i++) {
    if (locked(COMIC_LOCKS[i] as string)) continue;
    mask |= 1 << i;
    params.push((COMIC_SCALARS[i] as (typeof COMIC_SCALARS)[number])[2](comic) ?? null);
  }
  const sql = rowSql(comicSql, 'comic_metadata', COMIC_COLUMNS, [], mask, existing !== undefined);
  if (sql) await exec.run(sql, [...params, bookId]);

  for (const [table, mapping, column, lock, pick] of [
    ['comic_character', 'comic_metadata_character_mapping', 'character_id', 'characters_locked', (c: ExtractedComic) => c.characters],
    ['comic_team', 'comic_metadata_team_mapping', 'team_id', 'teams_locked', (c: ExtractedComic) => c.teams],
    ['comic_location', 'comic_metadata_location_mapping', 'location_id', 'locations_locked', (c: ExtractedComic) => c.locations],
  ] as const) {
    if (!locked(lock)) await replaceNames(exec, bookId, table, mapping, column, pick(comic));
  }
  if (locked('creators_locked')) return;
  for (const [role, lock, pick] of COMIC_ROLES) {
    if (locked(lock)) continue;
    await exec.run('delete from comic_metadata_creator_mapping where book_id = ? and role = ?', [bookId, role]);
    for (const creatorId of await nameIds(exec, 'comic_creator', pick(comic))) {
      await exec.run('insert into comic_metadata_creator_mapping (book_id, creator_id, role) values (?, ?, ?) on conflict do nothing', [bookId, creatorId, role]);
    }
  }
}
