// `bindery import calibre LIBRARY_DIR`: the calibre library becomes a Bindery library in place. Books keep calibre's
// folders and files; metadata comes from metadata.db (read-only), the cover from each book folder's cover.jpg. A
// later run re-reads only the books whose last_modified changed, and never overwrites a field locked in Bindery.
import { readFile, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { SqlExec } from '../../store/sql-exec.ts';
import type { NameTable } from '../../books/names.ts';
import { makeCoverImages, type CoverImages } from '../../covers/cover-images.ts';
import { newCoverHash, saveCoverImages } from '../../covers/cover-store.ts';
import { partialMd5 } from '../../formats/hash.ts';
import { formatOf } from '../../formats/index.ts';
import { createLibrary, listLibraries, type Library } from '../../libraries/libraries.ts';
import { refreshSearchText } from '../../books/search-text.ts';
import { searchKey } from '../../text/search-key.ts';
import type { Store } from '../../store/store.ts';
import { nowIso } from '../../time.ts';
import { IdMap } from '../id-map.ts';
import { emptyTableReport, recordSkip, type TableReport } from '../import-report.ts';
import { ImportError } from '../grimmory/source.ts';
import { CalibreLibrary, type CalibreBook, type CalibreDetails, type CustomColumn } from './calibre-db.ts';
import { checkMapping, COLUMN_TARGETS, namesOf, readStatusOf, type ColumnMapping } from './column-map.ts';
import { languageCode } from './languages.ts';

export interface CalibreImportOptions {
  store: Store;
  root: string;
  coversRoot: string;
  libraryName?: string;
  columns: readonly ColumnMapping[];
  /** Whose read status, ratings and shelves mapped columns fill (needed only with such mappings). */
  userId?: number;
  onProgress?(done: number, total: number): void;
}

export interface CalibreImportResult {
  library: { id: number; name: string; path: string; created: boolean };
  books: TableReport;
  files: TableReport;
  covers: TableReport;
  columns: { column: string; target: string; books: number }[];
}

/** A book read and prepared outside any transaction (files hashed, cover resized), ready to write. */
interface PreparedBook {
  book: CalibreBook;
  details: CalibreDetails;
  files: { name: string; sizeBytes: number; mtimeMs: number; hash: string; bookType: string | null }[];
  cover: CoverImages | undefined;
  custom: { mapping: ColumnMapping; column: CustomColumn; value: ReturnType<CalibreLibrary['customValue']> }[];
}

const BATCH = 100;

/** calibre's instants (`2024-02-11 08:36:33.533504+00:00`) → ISO-8601 UTC with milliseconds; its "no date" (year 101) → null. */
export function calibreInstant(value: string | null): string | null {
  if (!value) return null;
  const date = new Date(value.replace(' ', 'T'));
  if (Number.isNaN(date.getTime()) || date.getUTCFullYear() <= 101) return null;
  return date.toISOString();
}

const IDENTIFIER_FIELDS: Record<string, string> = {
  amazon: 'asin',
  asin: 'asin',
  'mobi-asin': 'asin',
  goodreads: 'goodreads_id',
  google: 'google_id',
  hardcover: 'hardcover_id',
  comicvine: 'comicvine_id',
  audible: 'audible_id',
  lubimyczytac: 'lubimyczytac_id',
  ranobedb: 'ranobedb_id',
  douban: 'douban_id',
};

/** calibre identifiers → metadata fields; ISBNs by length; the rest kept as JSON. */
export function identifierFields(identifiers: Record<string, string>): Record<string, string | null> {
  const fields: Record<string, string | null> = { isbn_13: null, isbn_10: null, identifiers_json: null };
  const rest: Record<string, string> = {};
  for (const [type, value] of Object.entries(identifiers)) {
    if (type === 'isbn') {
      const digits = value.replace(/[^0-9Xx]/g, '');
      if (digits.length === 13) fields.isbn_13 = digits;
      else if (digits.length === 10) fields.isbn_10 = digits.toUpperCase();
      else rest[type] = value;
    } else if (IDENTIFIER_FIELDS[type] && !fields[IDENTIFIER_FIELDS[type]]) fields[IDENTIFIER_FIELDS[type]] = value;
    else rest[type] = value;
  }
  if (Object.keys(rest).length) fields.identifiers_json = JSON.stringify(rest);
  return fields;
}

/** The metadata columns a calibre book sets, before locks are applied. */
function metadataFields(p: PreparedBook): Record<string, string | number | null> {
  const { book, details } = p;
  const fields: Record<string, string | number | null> = {
    title: book.title,
    publisher: details.publisher,
    published_date: calibreInstant(book.pubdate)?.slice(0, 10) ?? null,
    description: details.comments,
    language: details.languages[0] ? languageCode(details.languages[0]) : null,
    rating: details.rating === null ? null : details.rating / 2,
    series_name: details.series,
    series_number: details.series ? book.seriesIndex : null,
    ...identifierFields(details.identifiers),
  };
  for (const { mapping, value } of p.custom) {
    if (mapping.target === 'subtitle' || mapping.target === 'narrator') fields[mapping.target] = value === null ? null : namesOf(value).join(', ') || null;
    if (mapping.target === 'pageCount') fields.page_count = typeof value === 'number' ? Math.round(value) : null;
  }
  return fields;
}

async function findOrCreateLibrary(store: Store, root: string, name: string | undefined): Promise<{ library: Library; created: boolean }> {
  const existing = (await listLibraries(store.db)).find((l) => l.paths.some((p) => resolve(p.path) === root));
  if (existing) return { library: existing, created: false };
  const library = await createLibrary(store.db, { name: name ?? basename(root), paths: [root], organizationMode: 'BOOK_PER_FOLDER' });
  return { library, created: true };
}

async function prepare(calibre: CalibreLibrary, book: CalibreBook, columns: readonly { mapping: ColumnMapping; column: CustomColumn }[], report: CalibreImportResult): Promise<PreparedBook> {
  const details = calibre.details(book.id);
  const files: PreparedBook['files'] = [];
  for (const name of details.files) {
    const path = join(calibre.root, book.path, name);
    try {
      const s = await stat(path);
      files.push({ name, sizeBytes: s.size, mtimeMs: Math.trunc(s.mtimeMs), hash: await partialMd5(path), bookType: formatOf(name)?.bookType ?? null });
    } catch {
      recordSkip(report.files, 'file not found on disk', join(book.path, name));
    }
  }
  let cover: CoverImages | undefined;
  if (book.hasCover) {
    try {
      cover = await makeCoverImages(await readFile(join(calibre.root, book.path, 'cover.jpg')), 'book');
    } catch (error) {
      recordSkip(report.covers, `cover.jpg not usable: ${(error as Error).message}`, book.path);
    }
  }
  return { book, details, files, cover, custom: columns.map((c) => ({ ...c, value: calibre.customValue(c.column, book.id) })) };
}

/** Writes one book (new, or changed since the last run) with its files, names, and mapped user data. */
async function writeBook(exec: SqlExec, ids: IdMap, library: Library, p: PreparedBook, userId: number | undefined, result: CalibreImportResult): Promise<number | undefined> {
  const known = (await ids.get('book', p.book.id)) as number | undefined;
  const exists = known !== undefined && (await exec.get('select 1 as found from book where id = ?', [known]));
  const libraryPathId = library.paths[0]?.id as number;
  let bookId: number;
  if (!exists) {
    if (!p.files.some((f) => f.bookType)) {
      recordSkip(result.books, 'no book file of a format Bindery reads is on disk', p.book.path);
      return undefined;
    }
    const row = await exec.get('insert into book (library_id, library_path_id, added_on) values (?, ?, ?) returning id', [library.id, libraryPathId, calibreInstant(p.book.timestamp) ?? nowIso()]);
    bookId = row?.id as number;
    await exec.run('insert into book_metadata (book_id) values (?)', [bookId]);
    result.books.imported++;
  } else {
    bookId = known;
    result.books.updated++;
  }
  await ids.set('book', p.book.id, bookId, p.book.lastModified);

  for (const f of p.files) {
    const have = await exec.get('select id from book_file where library_path_id = ? and file_sub_path = ? and file_name = ?', [libraryPathId, p.book.path, f.name]);
    if (have) {
      await exec.run('update book_file set size_bytes = ?, mtime_ms = ?, current_hash = ?, missing_at = null where id = ?', [f.sizeBytes, f.mtimeMs, f.hash, have.id as number]);
      result.files.unchanged++;
      continue;
    }
    await exec.run(
      'insert into book_file (book_id, library_path_id, file_sub_path, file_name, size_bytes, file_size_kb, mtime_ms, initial_hash, current_hash, is_book, book_type) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [bookId, libraryPathId, p.book.path, f.name, f.sizeBytes, Math.round(f.sizeBytes / 1024), f.mtimeMs, f.hash, f.hash, f.bookType ? 1 : 0, f.bookType],
    );
    result.files.imported++;
  }

  const locks = ((await exec.get('select * from book_metadata where book_id = ?', [bookId])) ?? {}) as Record<string, unknown>;
  const allLocked = locks.all_fields_locked === 1;
  const open = (field: string): boolean => !allLocked && locks[`${field}_locked`] !== 1;
  const fields = Object.entries(metadataFields(p)).filter(([field]) => open(field === 'identifiers_json' ? 'none' : field));
  if (fields.length) await exec.run(`update book_metadata set ${fields.map(([f]) => `${f} = ?`).join(', ')} where book_id = ?`, [...fields.map(([, v]) => v), bookId]);

  const names = async (table: NameTable, mapping: string, column: string, list: string[], ordered = false): Promise<void> => {
    await exec.run(`delete from ${mapping} where book_id = ?`, [bookId]);
    const found = await nameIds(exec, table, [...new Set(list)]);
    for (const [i, id] of found.entries()) {
      await exec.run(`insert into ${mapping} (book_id, ${column}${ordered ? ', sort_order' : ''}) values (?, ?${ordered ? ', ?' : ''}) on conflict do nothing`, ordered ? [bookId, id, i] : [bookId, id]);
    }
  };
  if (open('authors')) await names('author', 'book_metadata_author_mapping', 'author_id', p.details.authors, true);
  const mappedNames = (target: string): string[] => p.custom.filter((c) => c.mapping.target === target).flatMap((c) => namesOf(c.value));
  if (open('tags')) await names('tag', 'book_metadata_tag_mapping', 'tag_id', [...p.details.tags, ...mappedNames('tags')]);
  if (open('categories') && p.custom.some((c) => c.mapping.target === 'categories')) await names('category', 'book_metadata_category_mapping', 'category_id', mappedNames('categories'));
  if (open('moods') && p.custom.some((c) => c.mapping.target === 'moods')) await names('mood', 'book_metadata_mood_mapping', 'mood_id', mappedNames('moods'));

  if (userId !== undefined) await writeUserColumns(exec, userId, bookId, p);
  return bookId;
}

/** The ids of the names, each added when the catalog does not have it yet. */
async function nameIds(exec: SqlExec, table: NameTable, names: string[]): Promise<number[]> {
  const add = async (name: string): Promise<number> =>
    (table === 'author' ? await exec.get('insert into author (name, name_key) values (?, ?) returning id', [name, searchKey(name)]) : await exec.get(`insert into ${table} (name) values (?) returning id`, [name]))?.id as number;
  const ids: number[] = [];
  for (const name of names) ids.push(((await exec.get(`select id from ${table} where name = ?`, [name]))?.id as number | undefined) ?? (await add(name)));
  return ids;
}

async function writeUserColumns(exec: SqlExec, userId: number, bookId: number, p: PreparedBook): Promise<void> {
  const progress: Record<string, string | number | null> = {};
  for (const { mapping, value } of p.custom) {
    if (mapping.target === 'readStatus') {
      const status = readStatusOf(value);
      if (status) Object.assign(progress, { read_status: status, read_status_modified_time: nowIso() });
    } else if (mapping.target === 'dateFinished') {
      const date = typeof value === 'string' ? calibreInstant(value) : null;
      if (date) progress.date_finished = date;
    } else if (mapping.target === 'personalRating' && typeof value === 'number') {
      progress.personal_rating = Math.max(0, Math.min(10, Math.round(value)));
    } else if (mapping.target === 'shelf') {
      for (const name of namesOf(value)) {
        const shelf = (await exec.get('select id from shelf where user_id = ? and name = ?', [userId, name])) ?? (await exec.get('insert into shelf (user_id, name) values (?, ?) returning id', [userId, name]));
        await exec.run('insert into book_shelf_mapping (book_id, shelf_id) values (?, ?) on conflict do nothing', [bookId, shelf?.id as number]);
      }
    }
  }
  const columns = Object.keys(progress);
  if (!columns.length) return;
  await exec.run(
    `insert into user_book_progress (user_id, book_id, ${columns.join(', ')}) values (?, ?, ${columns.map(() => '?').join(', ')}) on conflict (user_id, book_id) do update set ${columns.map((c) => `${c} = excluded.${c}`).join(', ')}`,
    [userId, bookId, ...Object.values(progress)],
  );
}

export function listCalibreColumns(root: string): { column: string; name: string; datatype: string; multiple: boolean; books: number; suggested: string[] }[] {
  const calibre = new CalibreLibrary(resolve(root));
  try {
    return calibre.customColumns().map((c) => ({
      column: `#${c.label}`,
      name: c.name,
      datatype: c.datatype,
      multiple: c.isMultiple,
      books: calibre.customCount(c),
      suggested: suggestedTargets(c),
    }));
  } finally {
    calibre.close();
  }
}

function suggestedTargets(c: CustomColumn): string[] {
  const byType: Record<string, string[]> = { bool: ['readStatus'], rating: ['personalRating'], datetime: ['dateFinished'], int: ['pageCount', 'personalRating'], float: ['personalRating'], text: ['shelf', 'tags', 'categories', 'moods', 'readStatus'], enumeration: ['readStatus', 'shelf', 'categories'], comments: ['subtitle'] };
  return byType[c.datatype] ?? [];
}

export async function importCalibre(options: CalibreImportOptions): Promise<CalibreImportResult> {
  const root = resolve(options.root);
  const calibre = new CalibreLibrary(root);
  try {
    const available = calibre.customColumns();
    const custom = options.columns.map((mapping) => {
      const column = available.find((c) => c.label === mapping.label);
      checkMapping(mapping, column);
      return { mapping, column: column as CustomColumn };
    });
    if (custom.some((c) => COLUMN_TARGETS[c.mapping.target] === 'user') && options.userId === undefined) {
      throw new ImportError('INVALID_ARGUMENT', 'mapping a column to read status, ratings or shelves needs the user they belong to: --user NAME');
    }
    const { library, created } = await findOrCreateLibrary(options.store, root, options.libraryName);
    const result: CalibreImportResult = {
      library: { id: library.id, name: library.name, path: root, created },
      books: emptyTableReport('books'),
      files: emptyTableReport('files'),
      covers: emptyTableReport('covers'),
      columns: custom.map((c) => ({ column: `#${c.column.label}`, target: c.mapping.target, books: calibre.customCount(c.column) })),
    };
    const { store } = options;
    const ids = new IdMap(`calibre:${library.id}`);
    const versions = new Map<string, string | null>();
    for (const r of await store.exec.all('select source_id, source_version from import_id_map where source = ? and kind = ?', [`calibre:${library.id}`, 'book'])) versions.set(r.source_id as string, r.source_version as string | null);

    const total = calibre.bookCount();
    let done = 0;
    let batch: PreparedBook[] = [];
    const flush = async (): Promise<void> => {
      let written: [PreparedBook, number][];
      try {
        written = await store.write(async ({ exec }) => {
          ids.bind(exec);
          const out: [PreparedBook, number][] = [];
          for (const p of batch) {
            const bookId = await writeBook(exec, ids, library, p, options.userId, result);
            if (bookId !== undefined) out.push([p, bookId]);
          }
          await refreshSearchText(exec, out.map(([, id]) => id));
          return out;
        });
      } catch (error) {
        ids.reset();
        throw error;
      }
      ids.bind(store.exec);
      for (const [p, bookId] of written) {
        if (!p.cover) continue;
        // A cover the user locked stays, as locked fields do.
        const locks = await store.exec.get('select cover_locked, all_fields_locked from book_metadata where book_id = ?', [bookId]);
        if (locks?.cover_locked === 1 || locks?.all_fields_locked === 1) continue;
        await saveCoverImages(options.coversRoot, bookId, 'book', p.cover);
        await store.write(async ({ exec }) => {
          await exec.run('update book set book_cover_hash = ? where id = ?', [newCoverHash(), bookId]);
          await exec.run('update book_metadata set cover_updated_on = ? where book_id = ?', [nowIso(), bookId]);
        });
        result.covers.imported++;
      }
      batch = [];
    };
    for (const book of calibre.books()) {
      done++;
      const seen = versions.get(String(book.id));
      if (seen !== undefined && seen === book.lastModified && (await ids.bind(store.exec).has('book', book.id))) {
        result.books.unchanged++;
      } else {
        batch.push(await prepare(calibre, book, custom, result));
        if (batch.length >= BATCH) await flush();
      }
      if (done % 50 === 0 || done === total) options.onProgress?.(done, total);
    }
    await flush();
    return result;
  } finally {
    calibre.close();
  }
}

