// Loads many books at once: one set query per table for a batch of ids.
import type { Kysely } from 'kysely';
import type { DB } from '../store/db-types.ts';
import { dialectOf, type SqlDialect } from '../store/dialect.ts';
import type { Generation } from '../store/snapshot.ts';
import type { SqlExec, SqlValue } from '../store/sql-exec.ts';
import { metadataSelectList, type BookBundle, type BookFileRow, type BookJsonOptions, type BookRow, type ComicParts, type Json } from './book-json.ts';
import { metadataTableColumns } from './metadata-columns.ts';

/** What the loaders read through: a Store, or the scope of one of its snapshots (`store.read`). */
export interface CatalogReader {
  db: Kysely<DB>;
  exec: SqlExec;
  /** A snapshot's: the generation it began at (ReadScope.snapshotGeneration). */
  snapshotGeneration?: Generation;
  /** A snapshot's: the reading state's generation taken with it (ReadScope.snapshotReadingGeneration). */
  snapshotReadingGeneration?: Generation;
}

/**
 * Two ways to name a batch: a dense run of ids as a range (index range scans), or any set of ids as one JSON array
 * parameter (one probe per id, no SQL of varying shape). Each use of the filter in a statement takes its parameters
 * again.
 */
export interface BatchFilter {
  /** The condition on `column`. */
  on(column: string): string;
  params: SqlValue[];
  dense: boolean;
}

export function batchFilter(dialect: SqlDialect, ids: readonly number[]): BatchFilter & { lo: number; hi: number } {
  let lo = ids[0] as number;
  let hi = lo;
  for (const id of ids) {
    if (id < lo) lo = id;
    else if (id > hi) hi = id;
  }
  // Rows of ids in the range but not asked for only add entries nobody looks up (or are filtered out).
  const dense = hi - lo + 1 <= ids.length * 2;
  const inSet = `IN (${dialect.jsonValues('integer')})`;
  return dense
    ? { on: (column) => `${column} BETWEEN ? AND ?`, params: [lo, hi], dense, lo, hi }
    : { on: (column) => `${column} ${inSet}`, params: [JSON.stringify(ids)], dense, lo, hi };
}

/** The filter's parameters once per use in the statement. */
export function repeated(params: readonly SqlValue[], uses: number): SqlValue[] {
  const out: SqlValue[] = [];
  for (let i = 0; i < uses; i++) out.push(...params);
  return out;
}

interface Statement {
  text: string;
  /** How often the batch filter appears in it. */
  uses: number;
}

interface Statements {
  books: Statement;
  /** By view: `${listView}/${withDescription}`. */
  metadata: Map<string, Statement>;
  names: Statement;
  files: Statement;
  comic: Statement;
  creators: Statement;
  comicNames: Statement;
}

const FILE_COLUMNS = [
  'id', 'book_id', 'library_path_id', 'file_sub_path', 'file_name', 'file_size_kb', 'is_book', 'book_type', 'archive_type',
  'is_folder_based', 'is_fixed_layout', 'description', 'added_on', 'missing_at', 'duration_seconds', 'bitrate', 'sample_rate',
  'channels', 'codec', 'chapter_count', 'chapters_json',
].join(', ');

const NAME_KINDS = ['authors', 'categories', 'tags', 'moods'] as const;
const COMIC_NAME_KINDS = ['characters', 'teams', 'locations'] as const;

export type NameRow = { book_id: number; kind: number; name: string; ord_number: number | null; ord_text: string | null };

/**
 * One query for several name lists; each row carries its list's index in `kind` and its sort key in `ord_number` (a
 * position) or `ord_text` (the name): a column of a union has one type. Rows come in index order (by book); sorting
 * within a book is left to the caller, which is cheaper than an SQL sort of the union.
 */
function namesQuery(filter: Pick<BatchFilter, 'on'>, lists: [mapping: string, table: string, column: string, order: 'position' | 'name'][]): Statement {
  const parts = lists.map(
    ([mapping, table, column, order], kind) =>
      `SELECT m.book_id AS book_id, ${kind} AS kind, n.name AS name, ${order === 'position' ? 'm.sort_order' : 'NULL'} AS ord_number, ${order === 'name' ? 'n.name' : 'NULL'} AS ord_text FROM ${mapping} m JOIN ${table} n ON n.id = m.${column} WHERE ${filter.on('m.book_id')}`,
  );
  return { text: parts.join(' UNION ALL '), uses: lists.length };
}

function statementsOf(filter: Pick<BatchFilter, 'on'>, metadataColumns: string[]): Statements {
  const { on } = filter;
  const once = (text: string): Statement => ({ text, uses: 1 });
  const metadata = new Map<string, Statement>();
  for (const listView of [false, true]) {
    for (const withDescription of [false, true]) {
      const select = metadataSelectList(metadataColumns, { listView, withDescription });
      metadata.set(`${listView}/${withDescription}`, once(`SELECT ${select.join(', ')} FROM book_metadata WHERE ${on('book_id')}`));
    }
  }
  return {
    books: once(
      `SELECT b.id, b.library_id, l.name AS library_name, l.format_priority, b.library_path_id, b.added_on, b.metadata_match_score, b.is_physical, b.missing_at
       FROM book b JOIN library l ON l.id = b.library_id WHERE ${on('b.id')} ORDER BY b.id`,
    ),
    metadata,
    names: namesQuery(filter, [
      ['book_metadata_author_mapping', 'author', 'author_id', 'position'],
      ['book_metadata_category_mapping', 'category', 'category_id', 'name'],
      ['book_metadata_tag_mapping', 'tag', 'tag_id', 'name'],
      ['book_metadata_mood_mapping', 'mood', 'mood_id', 'name'],
    ]),
    files: once(`SELECT ${FILE_COLUMNS} FROM book_file WHERE ${on('book_id')} ORDER BY book_id, id`),
    comic: once(`SELECT * FROM comic_metadata WHERE ${on('book_id')}`),
    creators: once(
      `SELECT m.book_id AS book_id, m.role AS role, c.name AS name FROM comic_metadata_creator_mapping m JOIN comic_creator c ON c.id = m.creator_id WHERE ${on('m.book_id')} ORDER BY m.book_id, m.id`,
    ),
    comicNames: namesQuery(filter, [
      ['comic_metadata_character_mapping', 'comic_character', 'character_id', 'name'],
      ['comic_metadata_team_mapping', 'comic_team', 'team_id', 'name'],
      ['comic_metadata_location_mapping', 'comic_location', 'location_id', 'name'],
    ]),
  };
}

/** By engine, then range or set. */
const built = new Map<string, Statements>();

function statementsWith(engine: string, filter: BatchFilter, columns: readonly { name: string }[]): Statements {
  const key = `${engine}/${filter.dense}`;
  let statements = built.get(key);
  if (!statements) {
    const metadataColumns = columns.map((c) => c.name).filter((name) => name !== 'search_text' && name !== 'identifiers_json');
    statements = statementsOf(filter, metadataColumns);
    built.set(key, statements);
  }
  return statements;
}

const paramsOf = (statement: Statement, filter: BatchFilter): SqlValue[] => (statement.uses === 1 ? filter.params : repeated(filter.params, statement.uses));

/** Rows by their book, in the order given. */
export function grouped<T extends { book_id: number }>(rows: T[]): Map<number, T[]> {
  const out = new Map<number, T[]>();
  // An indexed loop: less for V8 to compile than for…of's iterator protocol (TurboFan took 2.5-4 ms over this function
  // in a daemon's first OPDS pages).
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as T;
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

/** Sorts rows[from..to) in place by byOrd, keeping equal rows in their order (a book's lists are short). */
function sortRun(rows: NameRow[], from: number, to: number): void {
  for (let i = from + 1; i < to; i++) {
    const row = rows[i] as NameRow;
    let j = i - 1;
    while (j >= from && byOrd(rows[j] as NameRow, row) > 0) {
      rows[j + 1] = rows[j] as NameRow;
      j--;
    }
    rows[j + 1] = row;
  }
}

function emptyNames<K extends string>(kinds: readonly K[]): Record<K, string[]> {
  const named = {} as Record<K, string[]>;
  for (let k = 0; k < kinds.length; k++) named[kinds[k] as K] = [];
  return named;
}

/**
 * Each book's name lists, each in its order. SQLite returns a book's rows of one list together (each part of the
 * union walks its mapping by book): each such run is sorted where it lies and its names taken as they are, without a
 * list of rows per book and kind or the copy Array.prototype.sort makes (together ~130 of the ~450 KB a built page of
 * 50 books allocated). Rows in any other order (PostgreSQL promises none) are grouped first.
 */
export function namesByBook<K extends string>(rows: NameRow[], kinds: readonly K[]): Map<number, Record<K, string[]>> {
  // Plain loops: with callbacks V8 compiled this again after each deoptimization of a daemon's first pages (~6 ms each).
  const out = new Map<number, Record<K, string[]>>();
  for (let from = 0; from < rows.length; ) {
    const first = rows[from] as NameRow;
    let to = from + 1;
    while (to < rows.length && (rows[to] as NameRow).book_id === first.book_id && (rows[to] as NameRow).kind === first.kind) to++;
    let named = out.get(first.book_id);
    if (!named) out.set(first.book_id, (named = emptyNames(kinds)));
    const names = named[kinds[first.kind] as K];
    // The book's list had a run already: the rows are not together.
    if (names.length > 0) return groupedNamesByBook(rows, kinds);
    if (to - from > 1) sortRun(rows, from, to);
    for (let i = from; i < to; i++) names.push((rows[i] as NameRow).name);
    from = to;
  }
  return out;
}

function groupedNamesByBook<K extends string>(rows: NameRow[], kinds: readonly K[]): Map<number, Record<K, string[]>> {
  const grouped = new Map<number, NameRow[][]>();
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as NameRow;
    let lists = grouped.get(row.book_id);
    if (!lists) {
      lists = [];
      for (let k = 0; k < kinds.length; k++) lists.push([]);
      grouped.set(row.book_id, lists);
    }
    (lists[row.kind] as NameRow[]).push(row);
  }
  const out = new Map<number, Record<K, string[]>>();
  for (const [bookId, lists] of grouped) {
    const named = {} as Record<K, string[]>;
    for (let k = 0; k < kinds.length; k++) {
      const list = lists[k] as NameRow[];
      if (list.length > 1) list.sort(byOrd);
      const names: string[] = [];
      for (let i = 0; i < list.length; i++) names.push((list[i] as NameRow).name);
      named[kinds[k] as K] = names;
    }
    out.set(bookId, named);
  }
  return out;
}

/** Root folder of every library path, by path id. */
export async function libraryRoots(reader: Pick<CatalogReader, 'exec'>): Promise<Map<number, string>> {
  const rows = (await reader.exec.all('SELECT id, path FROM library_path')) as { id: number; path: string }[];
  return new Map(rows.map((r) => [r.id, r.path]));
}

/**
 * Reading a batch's bundles as a sequence of statements: each step yields a statement and is resumed with its rows
 * (comic statements only when the batch has comics).
 */
function* bundleSteps(s: Statements, ids: readonly number[], filter: BatchFilter & { lo: number; hi: number }, options: BookJsonOptions): Generator<Statement, BookBundle[], unknown[]> {
  const wanted = filter.dense && filter.hi - filter.lo + 1 !== ids.length ? new Set(ids) : undefined;
  let books = (yield s.books) as BookRow[];
  if (wanted) books = books.filter((b) => wanted.has(b.id));
  if (books.length === 0) return [];
  const metadataRows = (yield s.metadata.get(`${options.listView}/${options.withDescription}`) as Statement) as (Json & { book_id: number })[];
  const metadata = new Map(metadataRows.map((row) => [row.book_id, row]));
  const names = namesByBook((yield s.names) as NameRow[], NAME_KINDS);
  const files = grouped((yield s.files) as BookFileRow[]);
  const comicRows = (yield s.comic) as (Json & { book_id: number })[];
  const comics = new Map<number, ComicParts>();
  if (comicRows.length > 0) {
    const creators = grouped((yield s.creators) as { book_id: number; role: string; name: string }[]);
    const comicNames = namesByBook((yield s.comicNames) as NameRow[], COMIC_NAME_KINDS);
    for (const row of comicRows) {
      const lists = comicNames.get(row.book_id);
      comics.set(row.book_id, { row, creators: creators.get(row.book_id) ?? [], characters: lists?.characters ?? [], teams: lists?.teams ?? [], locations: lists?.locations ?? [] });
    }
  }
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

/** The bundles of the given books that exist, in id order. Keep batches to a few thousand ids. */
export async function loadBundles(reader: CatalogReader, ids: readonly number[], options: BookJsonOptions): Promise<BookBundle[]> {
  if (ids.length === 0) return [];
  const dialect = dialectOf(reader.db);
  const filter = batchFilter(dialect, [...ids].sort((a, b) => a - b));
  const statements = statementsWith(dialect.engine, filter, await metadataTableColumns(reader.db));
  const steps = bundleSteps(statements, ids, filter, options);
  let step = steps.next();
  while (!step.done) step = steps.next(await reader.exec.all(step.value.text, paramsOf(step.value, filter)));
  return step.value;
}

