// Loads many books at once: one set query per table for a batch of ids, run synchronously on the raw SQLite handle.
import type Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { DB } from '../store/db-types.ts';
import { dialectOf } from '../store/dialect.ts';
import type { SqlExec } from '../store/sql-exec.ts';
import { metadataSelectList, type BookBundle, type BookFileRow, type BookJsonOptions, type BookRow, type ComicParts, type Json } from './book-json.ts';

/**
 * Two ways to name a batch: a dense run of ids as a range (index range scans), or any set of ids as one JSON array
 * parameter (one probe per id, no SQL of varying shape). `%` stands for the column.
 */
const BY_RANGE = '% BETWEEN :lo AND :hi';
const BY_SET = '% IN (SELECT value FROM json_each(:ids))';

interface Statements {
  books: Database.Statement;
  /** By view: `${listView}/${withDescription}`. */
  metadata: Map<string, Database.Statement>;
  names: Database.Statement;
  files: Database.Statement;
  comic: Database.Statement;
  creators: Database.Statement;
  comicNames: Database.Statement;
}

interface Prepared {
  range: Statements;
  set: Statements;
  roots: Database.Statement;
}

const prepared = new WeakMap<Database.Database, Prepared>();

const FILE_COLUMNS = [
  'id', 'book_id', 'library_path_id', 'file_sub_path', 'file_name', 'file_size_kb', 'is_book', 'book_type', 'archive_type',
  'is_folder_based', 'is_fixed_layout', 'description', 'added_on', 'missing_at', 'duration_seconds', 'bitrate', 'sample_rate',
  'channels', 'codec', 'chapter_count', 'chapters_json',
].join(', ');

const NAME_KINDS = ['authors', 'categories', 'tags', 'moods'] as const;
const COMIC_NAME_KINDS = ['characters', 'teams', 'locations'] as const;

type NameRow = { book_id: number; kind: number; name: string; ord_number: number | null; ord_text: string | null };

/**
 * One query for several name lists; each row carries its list's index in `kind` and its sort key in `ord`. Rows come
 * in index order (by book); sorting within a book is left to the caller, which is cheaper than an SQL sort of the union.
 */
function namesQuery(where: string, lists: [mapping: string, table: string, column: string, order: 'position' | 'name'][]): string {
  // A column of a union has one type (on PostgreSQL): positions and names sort through columns of their own.
  const parts = lists.map(
    ([mapping, table, column, order], kind) =>
      `SELECT m.book_id AS book_id, ${kind} AS kind, n.name AS name, ${order === 'position' ? 'm.sort_order' : 'NULL'} AS ord_number, ${order === 'name' ? 'n.name' : 'NULL'} AS ord_text FROM ${mapping} m JOIN ${table} n ON n.id = m.${column} WHERE ${where.replace('%', 'm.book_id')}`,
  );
  return parts.join(' UNION ALL ');
}

type Texts = { [K in keyof Statements]: Statements[K] extends Map<string, Database.Statement> ? Map<string, string> : string };

function statementTexts(where: string, metadataColumns: string[]): Texts {
  const on = (column: string): string => where.replace('%', column);
  const metadata = new Map<string, string>();
  for (const listView of [false, true]) {
    for (const withDescription of [false, true]) {
      const select = metadataSelectList(metadataColumns, { listView, withDescription });
      metadata.set(`${listView}/${withDescription}`, `SELECT ${select.join(', ')} FROM book_metadata WHERE ${on('book_id')}`);
    }
  }
  return {
    books: `SELECT b.id, b.library_id, l.name AS library_name, l.format_priority, b.library_path_id, b.added_on, b.metadata_match_score, b.is_physical, b.missing_at
       FROM book b JOIN library l ON l.id = b.library_id WHERE ${on('b.id')} ORDER BY b.id`,
    metadata,
    names: namesQuery(where, [
        ['book_metadata_author_mapping', 'author', 'author_id', 'position'],
        ['book_metadata_category_mapping', 'category', 'category_id', 'name'],
        ['book_metadata_tag_mapping', 'tag', 'tag_id', 'name'],
        ['book_metadata_mood_mapping', 'mood', 'mood_id', 'name'],
      ]),
    files: `SELECT ${FILE_COLUMNS} FROM book_file WHERE ${on('book_id')} ORDER BY book_id, id`,
    comic: `SELECT * FROM comic_metadata WHERE ${on('book_id')}`,
    creators: `SELECT m.book_id AS book_id, m.role AS role, c.name AS name FROM comic_metadata_creator_mapping m JOIN comic_creator c ON c.id = m.creator_id WHERE ${on('m.book_id')} ORDER BY m.book_id, m.id`,
    comicNames: namesQuery(where, [
        ['comic_metadata_character_mapping', 'comic_character', 'character_id', 'name'],
        ['comic_metadata_team_mapping', 'comic_team', 'team_id', 'name'],
        ['comic_metadata_location_mapping', 'comic_location', 'location_id', 'name'],
      ]),
  };
}

function prepareAll(sqlite: Database.Database, where: string, metadataColumns: string[]): Statements {
  const texts = statementTexts(where, metadataColumns);
  return {
    books: sqlite.prepare(texts.books),
    metadata: new Map([...texts.metadata].map(([key, text]) => [key, sqlite.prepare(text)])),
    names: sqlite.prepare(texts.names),
    files: sqlite.prepare(texts.files),
    comic: sqlite.prepare(texts.comic),
    creators: sqlite.prepare(texts.creators),
    comicNames: sqlite.prepare(texts.comicNames),
  };
}

function statementsFor(sqlite: Database.Database): Prepared {
  const cached = prepared.get(sqlite);
  if (cached) return cached;
  const metadataColumns = (sqlite.prepare('PRAGMA table_info(book_metadata)').all() as { name: string }[])
    .map((c) => c.name)
    .filter((name) => name !== 'search_text' && name !== 'identifiers_json');
  const statements: Prepared = {
    range: prepareAll(sqlite, BY_RANGE, metadataColumns),
    set: prepareAll(sqlite, BY_SET, metadataColumns),
    roots: sqlite.prepare('SELECT id, path FROM library_path'),
  };
  prepared.set(sqlite, statements);
  return statements;
}

function grouped<T extends { book_id: number }>(rows: T[]): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const row of rows) {
    const list = out.get(row.book_id);
    if (list) list.push(row);
    else out.set(row.book_id, [row]);
  }
  return out;
}

function byOrd(a: NameRow, b: NameRow): number {
  const x = a.ord_number ?? a.ord_text ?? 0;
  const y = b.ord_number ?? b.ord_text ?? 0;
  return x < y ? -1 : x > y ? 1 : 0;
}

function namesByBook<K extends string>(rows: NameRow[], kinds: readonly K[]): Map<number, Record<K, string[]>> {
  const grouped = new Map<number, NameRow[][]>();
  for (const row of rows) {
    let lists = grouped.get(row.book_id);
    if (!lists) grouped.set(row.book_id, (lists = kinds.map(() => [])));
    (lists[row.kind] as NameRow[]).push(row);
  }
  const out = new Map<number, Record<K, string[]>>();
  for (const [bookId, lists] of grouped) {
    const named = {} as Record<K, string[]>;
    kinds.forEach((kind, i) => {
      const list = lists[i] as NameRow[];
      if (list.length > 1) list.sort(byOrd);
      named[kind] = list.map((r) => r.name);
    });
    out.set(bookId, named);
  }
  return out;
}

/** Root folder of every library path, by path id. */
export function libraryRoots(sqlite: Database.Database): Map<number, string> {
  const rows = statementsFor(sqlite).roots.all() as { id: number; path: string }[];
  return new Map(rows.map((r) => [r.id, r.path]));
}

/** The bundles of the given books that exist, in id order. Keep batches to a few thousand ids. */
export function loadBundlesSqlite(sqlite: Database.Database, ids: readonly number[], options: BookJsonOptions): BookBundle[] {
  if (ids.length === 0) return [];
  const sorted = [...ids].sort((a, b) => a - b);
  const first = sorted[0] as number;
  const last = sorted.at(-1) as number;
  const span = last - first + 1;
  const dense = span <= ids.length * 2;
  const s = dense ? statementsFor(sqlite).range : statementsFor(sqlite).set;
  const params: Record<string, unknown> = dense ? { lo: first, hi: last } : { ids: JSON.stringify(sorted) };
  const wanted = dense && span !== ids.length ? new Set(ids) : undefined;

  let books = s.books.all(params) as BookRow[];
  if (wanted) books = books.filter((b) => wanted.has(b.id));
  if (books.length === 0) return [];
  const metadataRows = (s.metadata.get(`${options.listView}/${options.withDescription}`) as Database.Statement).all(params) as (Json & { book_id: number })[];
  const metadata = new Map(metadataRows.map((row) => [row.book_id, row]));
  const names = namesByBook(s.names.all(params) as NameRow[], NAME_KINDS);
  const files = grouped(s.files.all(params) as BookFileRow[]);
  const comics = loadComics(s, params);
  return bundlesOf(books, metadata, names, files, comics);
}

/** Each book's rows put together, in the order of `books`. */
function bundlesOf(
  books: BookRow[],
  metadata: Map<number, Json & { book_id: number }>,
  names: Map<number, Record<(typeof NAME_KINDS)[number], string[]>>,
  files: Map<number, BookFileRow[]>,
  comics: Map<number, ComicParts>,
): BookBundle[] {
  return books.map((book) => {
    const lists = names.get(book.id);
    return {
      book,
      metadata: metadata.get(book.id),
      authors: lists?.authors ?? [],
      categories: lists?.categories ?? [],
      tags: lists?.tags ?? [],
      moods: lists?.moods ?? [],
      files: files.get(book.id) ?? [],
      comic: comics.get(book.id),
    };
  });
}

function loadComics(s: Statements, params: Record<string, unknown>): Map<number, ComicParts> {
  const rows = s.comic.all(params) as (Json & { book_id: number })[];
  const out = new Map<number, ComicParts>();
  if (rows.length === 0) return out;
  const creators = grouped(s.creators.all(params) as { book_id: number; role: string; name: string }[]);
  const names = namesByBook(s.comicNames.all(params) as NameRow[], COMIC_NAME_KINDS);
  for (const row of rows) {
    const lists = names.get(row.book_id);
    out.set(row.book_id, {
      row,
      creators: creators.get(row.book_id) ?? [],
      characters: lists?.characters ?? [],
      teams: lists?.teams ?? [],
      locations: lists?.locations ?? [],
    });
  }
  return out;
}

/** What the asynchronous loader reads through: a Store, or the scope of one of its snapshots. */
export interface CatalogReader {
  db: Kysely<DB>;
  exec: SqlExec;
}

const metadataColumnsByEngine = new Map<string, Promise<string[]>>();

function metadataColumnsOf(db: Kysely<DB>): Promise<string[]> {
  const engine = dialectOf(db).engine;
  let columns = metadataColumnsByEngine.get(engine);
  if (!columns) {
    columns = db.introspection.getTables().then((tables) =>
      (tables.find((t) => t.name === 'book_metadata')?.columns ?? []).map((c) => c.name).filter((name) => name !== 'search_text' && name !== 'identifiers_json'),
    );
    metadataColumnsByEngine.set(engine, columns);
  }
  return columns;
}

/** loadBundlesSqlite on either engine: the same statements, the batch named as one JSON array of ids. */
export async function loadBundles(reader: CatalogReader, ids: readonly number[], options: BookJsonOptions): Promise<BookBundle[]> {
  if (ids.length === 0) return [];
  const dialect = dialectOf(reader.db);
  const texts = statementTexts(`% IN (${dialect.jsonValues('integer')})`, await metadataColumnsOf(reader.db));
  const idsJson = JSON.stringify([...ids].sort((a, b) => a - b));
  const run = async <T>(text: string): Promise<T[]> => (await reader.exec.all(text, Array.from({ length: text.split('?').length - 1 }, () => idsJson))) as T[];
  const books = await run<BookRow>(texts.books);
  if (books.length === 0) return [];
  const metadata = new Map((await run<Json & { book_id: number }>(texts.metadata.get(`${options.listView}/${options.withDescription}`) as string)).map((row) => [row.book_id, row]));
  const names = namesByBook(await run<NameRow>(texts.names), NAME_KINDS);
  const files = grouped(await run<BookFileRow>(texts.files));
  const comics = new Map<number, ComicParts>();
  const comicRows = await run<Json & { book_id: number }>(texts.comic);
  if (comicRows.length > 0) {
    const creators = grouped(await run<{ book_id: number; role: string; name: string }>(texts.creators));
    const comicNames = namesByBook(await run<NameRow>(texts.comicNames), COMIC_NAME_KINDS);
    for (const row of comicRows) {
      const lists = comicNames.get(row.book_id);
      comics.set(row.book_id, { row, creators: creators.get(row.book_id) ?? [], characters: lists?.characters ?? [], teams: lists?.teams ?? [], locations: lists?.locations ?? [] });
    }
  }
  return bundlesOf(books, metadata, names, files, comics);
}
