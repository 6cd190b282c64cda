// Writes what a file says into book_metadata and comic_metadata, never touching a locked field.
import type { Transaction } from 'kysely';
import type { ExtractedComic, ExtractedMetadata } from '../formats/types.ts';
import type { DB } from '../store/db-types.ts';
import { bookSearchText, searchKeyOf } from '../text/search-key.ts';
import { nameIds, type NameTable } from './names.ts';
import { refreshSearchText } from './search-text.ts';
import { isSqlExec, kyselyExec, type SqlExec } from '../store/sql-exec.ts';

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
const BOOK_TRAILING = ['identifiers_json', 'search_text', 'series_key'];
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
  const searched = { title: (title ?? null) as string | null, subtitle: meta.subtitle, authors: meta.authors, seriesName: meta.seriesName, isbn13: meta.isbn13, isbn10: meta.isbn10 };
  params.push(Object.keys(meta.identifiers).length > 0 ? JSON.stringify(meta.identifiers) : null, bookSearchText(searched), searchKeyOf(meta.seriesName));
  await exec.run(rowSql(bookSql, 'book_metadata', BOOK_COLUMNS, BOOK_TRAILING, mask, existing !== undefined), [...params, bookId]);

  for (const [table, mapping, column, lock, pick] of LIST_FIELDS) {
    if (isLocked(existing, lock)) continue;
    await replaceNames(exec, bookId, table, mapping, column, pick(meta));
  }
  // A locked field kept its stored value, which the keys just written from the file do not reflect.
  if (SEARCHED_LOCKS.some((lock) => isLocked(existing, lock))) await refreshSearchText(exec, [bookId]);
}

const SEARCHED_LOCKS = ['title_locked', 'subtitle_locked', 'authors_locked', 'series_name_locked', 'isbn_13_locked', 'isbn_10_locked'];

type Mapping = 'book_metadata_author_mapping' | 'book_metadata_category_mapping' | 'book_metadata_tag_mapping' | 'book_metadata_mood_mapping' | 'comic_metadata_character_mapping' | 'comic_metadata_team_mapping' | 'comic_metadata_location_mapping';

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

/** book_metadata columns a patch may write; each has a `<column>_locked` flag. */
export const PATCHABLE_COLUMNS = [
  'title', 'subtitle', 'publisher', 'published_date', 'description', 'isbn_13', 'isbn_10', 'page_count', 'language',
  'series_name', 'series_number', 'series_total', 'asin', 'goodreads_id', 'google_id', 'hardcover_id', 'hardcover_book_id',
  'comicvine_id', 'lubimyczytac_id', 'ranobedb_id', 'audible_id', 'douban_id', 'amazon_rating', 'amazon_review_count',
  'goodreads_rating', 'goodreads_review_count', 'hardcover_rating', 'hardcover_review_count', 'lubimyczytac_rating',
  'ranobedb_rating', 'audible_rating', 'audible_review_count', 'douban_rating', 'douban_review_count', 'narrator', 'abridged',
  'age_rating', 'content_rating', 'external_url',
] as const;
export type PatchColumn = (typeof PATCHABLE_COLUMNS)[number];
const PATCHABLE = new Set<string>(PATCHABLE_COLUMNS);
const PATCHABLE_COMIC = new Set<string>(COMIC_COLUMNS);

export type CreatorRole = 'PENCILLER' | 'INKER' | 'COLORIST' | 'LETTERER' | 'COVER_ARTIST' | 'EDITOR';

export interface ComicPatch {
  /** comic_metadata column → value (`issue_number`, `manga` as 0/1, ...). */
  fields?: Record<string, Scalar | undefined>;
  characters?: string[];
  teams?: string[];
  locations?: string[];
  creators?: Partial<Record<CreatorRole, string[]>>;
}

/** Some of a book's metadata: what is given is written (unless locked), what is left out stays as it is. */
export interface MetadataPatch {
  fields?: Partial<Record<PatchColumn, Scalar>>;
  authors?: string[];
  categories?: string[];
  tags?: string[];
  moods?: string[];
  comic?: ComicPatch;
}

export interface PatchOutcome {
  /** Columns and lists whose value changed (`comic.` in front for comic ones). */
  changed: string[];
  /** Fields the patch gave that were left alone because they are locked. */
  locked: string[];
}

type ListKey = 'authors' | 'categories' | 'tags' | 'moods';
const PATCH_LISTS: [key: ListKey, table: NameTable, mapping: Mapping, column: string, lock: string][] = [
  ['authors', 'author', 'book_metadata_author_mapping', 'author_id', 'authors_locked'],
  ['categories', 'category', 'book_metadata_category_mapping', 'category_id', 'categories_locked'],
  ['tags', 'tag', 'book_metadata_tag_mapping', 'tag_id', 'tags_locked'],
  ['moods', 'mood', 'book_metadata_mood_mapping', 'mood_id', 'moods_locked'],
];
const SEARCHED = new Set(['title', 'subtitle', 'authors', 'series_name', 'isbn_13', 'isbn_10']);

async function currentNames(exec: SqlExec, bookId: number, table: NameTable, mapping: Mapping, column: string): Promise<string[]> {
  const order = mapping === 'book_metadata_author_mapping' ? ' order by m.sort_order' : '';
  const rows = await exec.all(`select n.name as name from ${mapping} m join ${table} n on n.id = m.${column} where m.book_id = ?${order}`, [bookId]);
  return rows.map((r) => r.name as string);
}

/** Authors keep their order; the other lists are sets. */
function sameNames(current: string[], wanted: string[], ordered: boolean): boolean {
  const unique = [...new Set(wanted)];
  if (current.length !== unique.length) return false;
  if (ordered) return current.every((name, i) => name === unique[i]);
  const have = new Set(current);
  return unique.every((name) => have.has(name));
}


/**
 * Writes the fields a patch gives, leaving every other field and every locked one (or all, with all_fields_locked)
 * as it is. Names lists are replaced as a whole. Runs inside the caller's write transaction.
 */
export async function writeMetadataPatch(db: Transaction<DB> | SqlExec, bookId: number, patch: MetadataPatch): Promise<PatchOutcome> {
  const exec = isSqlExec(db) ? db : kyselyExec(db);
  let row = (await exec.get('select * from book_metadata where book_id = ?', [bookId])) as Row | undefined;
  if (!row) {
    await exec.run('insert into book_metadata (book_id) values (?)', [bookId]);
    row = (await exec.get('select * from book_metadata where book_id = ?', [bookId])) as Row;
  }
  const out: PatchOutcome = { changed: [], locked: [] };
  const columns: string[] = [];
  const values: Scalar[] = [];
  for (const [column, value] of Object.entries(patch.fields ?? {})) {
    if (value === undefined) continue;
    if (!PATCHABLE.has(column)) throw new Error(`not a writable metadata column: ${column}`);
    if (isLocked(row, `${column}_locked`)) out.locked.push(column);
    else if (row[column] !== value) {
      columns.push(column);
      values.push(value);
      out.changed.push(column);
    }
  }
  if (columns.length > 0) await exec.run(`update book_metadata set ${columns.map((c) => `${c} = ?`).join(', ')} where book_id = ?`, [...values, bookId]);
  for (const [key, table, mapping, column, lock] of PATCH_LISTS) {
    const names = patch[key];
    if (names === undefined) continue;
    if (isLocked(row, lock)) {
      out.locked.push(key);
      continue;
    }
    if (sameNames(await currentNames(exec, bookId, table, mapping, column), names, key === 'authors')) continue;
    await replaceNames(exec, bookId, table, mapping, column, [...new Set(names)]);
    out.changed.push(key);
  }
  if (out.changed.some((c) => SEARCHED.has(c))) await refreshSearchText(exec, [bookId]);
  if (patch.comic) await writeComicPatch(exec, bookId, patch.comic, row.all_fields_locked === 1, out);
  return out;
}

const COMIC_LISTS: ['characters' | 'teams' | 'locations', NameTable, Mapping, string][] = [
  ['characters', 'comic_character', 'comic_metadata_character_mapping', 'character_id'],
  ['teams', 'comic_team', 'comic_metadata_team_mapping', 'team_id'],
  ['locations', 'comic_location', 'comic_metadata_location_mapping', 'location_id'],
];

function hasComicValues(patch: ComicPatch): boolean {
  const lists = [patch.characters, patch.teams, patch.locations, ...Object.values(patch.creators ?? {})];
  return Object.values(patch.fields ?? {}).some((v) => v !== undefined && v !== null) || lists.some((l) => l !== undefined && l.length > 0);
}

async function writeComicPatch(exec: SqlExec, bookId: number, patch: ComicPatch, allLocked: boolean, out: PatchOutcome): Promise<void> {
  let comic = (await exec.get('select * from comic_metadata where book_id = ?', [bookId])) as Row | undefined;
  if (!comic) {
    if (!hasComicValues(patch)) return;
    await exec.run('insert into comic_metadata (book_id) values (?)', [bookId]);
    comic = (await exec.get('select * from comic_metadata where book_id = ?', [bookId])) as Row;
  }
  const locked = (lock: string): boolean => allLocked || comic[lock] === 1;
  const columns: string[] = [];
  const values: Scalar[] = [];
  for (const [column, value] of Object.entries(patch.fields ?? {})) {
    if (value === undefined) continue;
    if (!PATCHABLE_COMIC.has(column)) throw new Error(`not a writable comic metadata column: ${column}`);
    if (locked(`${column}_locked`)) out.locked.push(`comic.${column}`);
    else if (comic[column] !== value) {
      columns.push(column);
      values.push(value);
      out.changed.push(`comic.${column}`);
    }
  }
  if (columns.length > 0) await exec.run(`update comic_metadata set ${columns.map((c) => `${c} = ?`).join(', ')} where book_id = ?`, [...values, bookId]);
  for (const [key, table, mapping, column] of COMIC_LISTS) {
    const names = patch[key];
    if (names === undefined) continue;
    if (locked(`${key}_locked`)) out.locked.push(`comic.${key}`);
    else if (!sameNames(await currentNames(exec, bookId, table, mapping, column), names, false)) {
      await replaceNames(exec, bookId, table, mapping, column, [...new Set(names)]);
      out.changed.push(`comic.${key}`);
    }
  }
  for (const [role, lock] of COMIC_ROLES) {
    const names = patch.creators?.[role as CreatorRole];
    if (names === undefined) continue;
    if (locked('creators_locked') || locked(lock)) {
      out.locked.push(`comic.${lock.slice(0, -'_locked'.length)}`);
      continue;
    }
    const current = await exec.all('select c.name as name from comic_metadata_creator_mapping m join comic_creator c on c.id = m.creator_id where m.book_id = ? and m.role = ? order by m.id', [bookId, role]);
    if (sameNames(current.map((r) => r.name as string), names, false)) continue;
    await exec.run('delete from comic_metadata_creator_mapping where book_id = ? and role = ?', [bookId, role]);
    for (const creatorId of await nameIds(exec, 'comic_creator', [...new Set(names)])) {
      await exec.run('insert into comic_metadata_creator_mapping (book_id, creator_id, role) values (?, ?, ?) on conflict do nothing', [bookId, creatorId, role]);
    }
    out.changed.push(`comic.${lock.slice(0, -'_locked'.length)}`);
  }
}
