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

/**
 * Writes extracted metadata for a book. On a first write every field the file has is stored; on a rescan a field
 * whose lock is set (or all fields, with all_fields_locked) keeps its value. `extra` columns (a cover timestamp) go
 * into the same insert or update.
 */
export async function writeBookMetadata(db: Transaction<DB> | SqlExec, bookId: number, meta: ExtractedMetadata, fileName: string, extra: Record<string, Scalar> = {}): Promise<void> {
  const exec = isSqlExec(db) ? db : kyselyExec(db);
  const existing = (await exec.get('select * from book_metadata where book_id = ?', [bookId])) as Row | undefined;
  const values: Record<string, Scalar> = {};
  for (const [column, lock, pick] of SCALAR_FIELDS) {
    if (isLocked(existing, `${lock}_locked`)) continue;
    values[column] = pick(meta) ?? null;
  }
  if (!isLocked(existing, 'title_locked') && !values.title) values.title = titleFromFileName(fileName);
  values.identifiers_json = Object.keys(meta.identifiers).length > 0 ? JSON.stringify(meta.identifiers) : null;
  values.search_text = searchText(meta, values.title as string | null);
  Object.assign(values, extra);
  await upsertRow(exec, 'book_metadata', bookId, existing !== undefined, values);

  for (const [table, mapping, column, lock, pick] of LIST_FIELDS) {
    if (isLocked(existing, lock)) continue;
    await replaceNames(exec, bookId, table, mapping, column, pick(meta));
  }
}

/** Updates the book's row of `table`, or inserts it. Column names come from the tables above, never from input. */
async function upsertRow(exec: SqlExec, table: 'book_metadata' | 'comic_metadata', bookId: number, exists: boolean, values: Record<string, Scalar>): Promise<void> {
  const columns = Object.keys(values);
  const params = Object.values(values);
  if (exists) {
    if (columns.length > 0) await exec.run(`update ${table} set ${columns.map((c) => `${c} = ?`).join(', ')} where book_id = ?`, [...params, bookId]);
  } else {
    await exec.run(`insert into ${table} (book_id${columns.map((c) => `, ${c}`).join('')}) values (?${', ?'.repeat(columns.length)})`, [bookId, ...params]);
  }
}

async function replaceNames(
  exec: SqlExec,
  bookId: number,
  table: NameTable,
  mapping: 'book_metadata_author_mapping' | 'book_metadata_category_mapping' | 'book_metadata_tag_mapping' | 'comic_metadata_character_mapping' | 'comic_metadata_team_mapping' | 'comic_metadata_location_mapping',
  column: string,
  names: string[],
): Promise<void> {
  await exec.run(`delete from ${mapping} where book_id = ?`, [bookId]);
  const ids = await nameIds(exec, table, names);
  const sortOrder = mapping === 'book_metadata_author_mapping';
  const insert = sortOrder
    ? `insert into ${mapping} (book_id, ${column}, sort_order) values (?, ?, ?) on conflict do nothing`
    : `insert into ${mapping} (book_id, ${column}) values (?, ?) on conflict do nothing`;
  for (const [i, id] of ids.entries()) await exec.run(insert, sortOrder ? [bookId, id, i] : [bookId, id]);
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

export async function writeComicMetadata(db: Transaction<DB> | SqlExec, bookId: number, comic: ExtractedComic, bookLocks: Row | undefined): Promise<void> {
  const exec = isSqlExec(db) ? db : kyselyExec(db);
  const existing = (await exec.get('select * from comic_metadata where book_id = ?', [bookId])) as Row | undefined;
  const allLocked = bookLocks?.all_fields_locked === 1;
  const locked = (lock: string): boolean => allLocked || existing?.[lock] === 1;
  const values: Record<string, Scalar> = {};
  for (const [column, lock, pick] of COMIC_SCALARS) if (!locked(`${lock}_locked`)) values[column] = pick(comic) ?? null;
  await upsertRow(exec, 'comic_metadata', bookId, existing !== undefined, values);

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
