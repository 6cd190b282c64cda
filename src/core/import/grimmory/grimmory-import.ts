// `bindery import grimmory`: everything a Grimmory server holds that has a place in Bindery, stage by stage, each
// stage one transaction (a dry run is one transaction rolled back at the end). Rows already brought over by an earlier
// run are left alone, so running it again changes nothing and a later run adds only what is new.
import bcrypt from 'bcryptjs';
import { copyFile, mkdir, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { authorImagesRoot } from '../../authors/author-photos.ts';
import { CoverChangeError, regenerateCover } from '../../covers/cover-update.ts';
import { refreshSearchText } from '../../books/search-text.ts';
import { searchKey } from '../../text/search-key.ts';
import { SETTING_KEYS } from '../../settings/setting-keys.ts';
import { syncIdSequences } from '../../store/id-sequences.ts';
import { rehearse } from '../../store/rehearsal.ts';
import type { Store, WriteScope } from '../../store/store.ts';
import { IdMap } from '../id-map.ts';
import { emptyTableReport, recordSkip, type DroppedFields, type NotImported, type StageReport, type TableReport } from '../import-report.ts';
import { remapPath, type PathMapping } from '../path-map.ts';
import { Skip, TableCopier, type CopySpec, type Row, type Value } from '../table-copy.ts';
import { remapMagicShelfFilter } from './magic-shelf-rules.ts';
import { NOT_IMPORTED, STAGE_TABLES } from './grimmory-tables.ts';
import { checkSchemaVersion, ImportError, instantFromSql, TIME_TYPES, type GrimmorySource, type SourceSchema } from './source.ts';

export interface GrimmoryImportOptions {
  source: GrimmorySource;
  store: Store;
  dataDir: string;
  coversRoot: string;
  /** Grimmory's data folder (`/app/data` in its container): covers and author photos come from there. */
  grimmoryData?: string;
  pathMap: readonly PathMapping[];
  dryRun: boolean;
  onProgress?(stage: string, table: string, rows: number): void;
}

export interface GrimmoryImportResult {
  source: string;
  schemaVersion: string;
  dryRun: boolean;
  stages: StageReport[];
  notImported: NotImported[];
  droppedFields: DroppedFields[];
  warnings: string[];
}

const ID_SOURCE = 'grimmory';
const KNOWN_SETTINGS = new Set(SETTING_KEYS.map((k) => k.dbKey));
const BOOK_IMAGES = ['cover.jpg', 'thumbnail.jpg', 'audiobook-cover.jpg', 'audiobook-thumbnail.jpg'];
const AUTHOR_IMAGES = ['photo.jpg', 'thumbnail.jpg'];

interface FileFacts {
  sizeBytes: number;
  mtimeMs: number;
}

/** Where each book's files are on this machine, found before any book is written. */
interface DiskFacts {
  /** Source library path id → its folder here (after --map). */
  roots: Map<string, string>;
  /** Source book id → source library path id. */
  bookRoot: Map<string, string>;
  /** Source book_file id → what the file on disk is; absent when it is not there. */
  files: Map<string, FileFacts>;
  /** Source book ids with at least one file on disk. */
  booksOnDisk: Set<string>;
  /** Source book id → the first of its files that is not on disk, for the report. */
  missing: Map<string, string>;
}

async function exists(path: string): Promise<FileFacts | undefined> {
  try {
    const s = await stat(path);
    return { sizeBytes: s.size, mtimeMs: Math.trunc(s.mtimeMs) };
  } catch {
    return undefined;
  }
}

function filePath(root: string | undefined, row: Row): string | undefined {
  if (root === undefined) return undefined;
  const sub = String(row.file_sub_path ?? '');
  return join(root, sub, String(row.file_name ?? ''));
}

async function surveyDisk(source: GrimmorySource, pathMap: readonly PathMapping[], warnings: string[]): Promise<DiskFacts> {
  const facts: DiskFacts = { roots: new Map(), bookRoot: new Map(), files: new Map(), booksOnDisk: new Set(), missing: new Map() };
  for await (const row of source.rows('library_path')) {
    if (row.path === null) continue;
    const here = remapPath(String(row.path), pathMap);
    facts.roots.set(String(row.id), here);
    if (!(await exists(here))) warnings.push(`library folder ${here}${here === row.path ? '' : ` (Grimmory's ${row.path})`} does not exist here${here === row.path ? `: map it with --map ${row.path}=/where/it/is/now` : ''}`);
  }
  for await (const row of source.rows('book')) if (row.library_path_id !== null) facts.bookRoot.set(String(row.id), String(row.library_path_id));
  for await (const row of source.rows('book_file')) {
    const book = String(row.book_id);
    const path = filePath(facts.roots.get(facts.bookRoot.get(book) ?? ''), row);
    const found = path ? await exists(path) : undefined;
    if (!found) {
      if (!facts.missing.has(book)) facts.missing.set(book, path ?? `book file #${row.id} (its library folder is unknown)`);
      continue;
    }
    facts.files.set(String(row.id), found);
    facts.booksOnDisk.add(book);
  }
  return facts;
}

interface Pending {
  /** Catalog ids of the books this run added. */
  newBooks: number[];
  /** Whether this run added authors (without Grimmory's data folder their photos stay behind). */
  newAuthors: boolean;
}

/** The per-table hooks that need the import's own state. */
function withHooks(spec: CopySpec, ids: IdMap, disk: DiskFacts, pending: Pending, pathMap: readonly PathMapping[]): CopySpec {
  switch (spec.table) {
    case 'app_settings':
      return { ...spec, prepare: (row) => (KNOWN_SETTINGS.has(String(row.name)) ? row : new Skip('no Bindery meaning', String(row.name))) };
    case 'library_path':
      return { ...spec, prepare: (row) => ({ ...row, path: row.path === null ? null : remapPath(String(row.path), pathMap) }) };
    case 'author':
      return { ...spec, prepare: (row) => ({ ...row, name_key: searchKey(String(row.name ?? '')) }), imported: () => (pending.newAuthors = true) };
    case 'book':
      return {
        ...spec,
        prepare: (row, source) =>
          Number(source.is_physical) === 1 || disk.booksOnDisk.has(String(source.id)) ? row : new Skip('no file of the book is on disk', disk.missing.get(String(source.id)) ?? `#${source.id} (no file listed)`),
        imported: (_source, id) => pending.newBooks.push(Number(id)),
      };
    case 'book_file':
      return {
        ...spec,
        prepare: (row, source) => {
          const found = disk.files.get(String(source.id));
          const sourceRoot = disk.bookRoot.get(String(source.book_id));
          if (!found) return new Skip('file not found on disk', filePath(disk.roots.get(sourceRoot ?? ''), source) ?? `#${source.id}`);
          return ids.get('library_path', sourceRoot).then((libraryPathId) => ({ ...row, library_path_id: libraryPathId ?? null, size_bytes: found.sizeBytes, mtime_ms: found.mtimeMs }));
        },
      };
    case 'koreader_user':
      // Bindery keeps only a bcrypt hash of the MD5 key KOReader sends (docs/koreader.md); a handful of rows, hashed here.
      return { ...spec, prepare: (row, source) => ({ ...row, key_hash: bcrypt.hashSync(String(source.password_md5 ?? '').toLowerCase(), 10) }) };
    case 'magic_shelf':
      return { ...spec, prepare: async (row) => ({ ...row, filter_json: await remapMagicShelfFilter(String(row.filter_json ?? '{}'), ids) }) };
    case 'kobo_reading_state':
      return {
        ...spec,
        // A Kobo names each book by its entitlement id, which is the book id.
        prepare: async (row, source) => {
          const book = await ids.get('book', source.entitlement_id);
          return book === undefined ? new Skip('its book was not imported', String(source.entitlement_id)) : { ...row, entitlement_id: String(book) };
        },
      };
    default:
      return spec;
  }
}

function convertTime(value: Value, type: string): Value {
  return TIME_TYPES.has(type) ? instantFromSql(value, type) : value;
}

/** The kinds other rows point at (and magic shelf rules name): held in memory during the import. */
function referencedKinds(): Set<string> {
  const kinds = new Set(['library', 'shelf', 'book', 'library_path']);
  for (const stage of STAGE_TABLES) for (const t of stage.tables) for (const kind of [...Object.values(t.refs ?? {}), ...Object.values(t.optionalRefs ?? {})]) kinds.add(kind);
  return kinds;
}

/** Tables the importer reads that the source lacks: a schema it does not know after all. */
function missingTables(schema: SourceSchema): string[] {
  return STAGE_TABLES.flatMap((s) => s.tables.map((t) => t.table)).filter((t) => !schema.has(t));
}

/**
 * Copies Grimmory's images of every imported book (or author) that does not have them yet, so an import stopped
 * half-way fills in the rest on the next run, and a run after a complete one copies nothing.
 */
async function copyImages(store: Store, kind: string, fromRoot: string, toRoot: string, names: readonly string[], report: TableReport): Promise<void> {
  const imported = (await store.exec.all('select source_id, target_id from import_id_map where source = ? and kind = ?', [ID_SOURCE, kind])) as { source_id: string; target_id: string }[];
  for (const { source_id: sourceId, target_id: targetId } of imported) {
    for (const name of names) {
      const from = join(fromRoot, sourceId, name);
      const to = join(toRoot, targetId, name);
      if ((await exists(to)) || !(await exists(from))) continue;
      await mkdir(join(toRoot, targetId), { recursive: true });
      await copyFile(from, `${to}.${process.pid}.tmp`);
      await rename(`${to}.${process.pid}.tmp`, to);
      report.imported++;
    }
  }
}

/** Covers and author photos: from Grimmory's data folder when given, otherwise each new book's cover from its file. */
async function placeImages(options: GrimmoryImportOptions, pending: Pending): Promise<TableReport[]> {
  if (!options.grimmoryData) return pending.newBooks.length ? [await coversFromFiles(options.store, options.coversRoot, pending.newBooks)] : [];
  const covers = emptyTableReport('cover files');
  const photos = emptyTableReport('author photo files');
  await copyImages(options.store, 'book', join(options.grimmoryData, 'images'), options.coversRoot, BOOK_IMAGES, covers);
  await copyImages(options.store, 'author', join(options.grimmoryData, 'author-images'), authorImagesRoot(options.dataDir), AUTHOR_IMAGES, photos);
  return [covers, photos];
}

export async function importGrimmory(options: GrimmoryImportOptions): Promise<GrimmoryImportResult> {
  const { source, store, dryRun } = options;
  const schema = await source.schema();
  const schemaVersion = await checkSchemaVersion(source, schema);
  const missing = missingTables(schema);
  if (missing.length) throw new ImportError('UNSUPPORTED_SCHEMA', `${source.label} says schema version ${schemaVersion} but lacks the tables ${missing.join(', ')}; nothing was imported`);

  const ids = new IdMap(ID_SOURCE, referencedKinds());
  const warnings: string[] = [];
  const disk = await surveyDisk(source, options.pathMap, warnings);
  const pending: Pending = { newBooks: [], newAuthors: false };
  const stages: StageReport[] = [];
  const droppedFields: DroppedFields[] = [];

  const runStage = async (stage: (typeof STAGE_TABLES)[number], scope: WriteScope): Promise<void> => {
    ids.bind(scope.exec);
    const report: StageReport = { stage: stage.name, tables: [] };
    for (const base of stage.tables) {
      const spec = withHooks(base, ids, disk, pending, options.pathMap);
      const copier = await TableCopier.create(spec, { scope, dialect: store.dialect, ids, sourceColumns: schema.get(spec.table) ?? new Map(), convertTime });
      let rows = 0;
      for await (const row of source.rows(spec.table)) {
        await copier.copy(row);
        if (++rows % 2000 === 0) options.onProgress?.(stage.name, spec.table, rows);
      }
      report.tables.push(copier.report);
      if (copier.dropped.length) droppedFields.push({ table: spec.table, fields: copier.dropped, reason: spec.droppedReason ?? 'Bindery has no such field' });
    }
    if (stage.name === 'catalog') await refreshSearchText(scope.exec, pending.newBooks);
    // Rows kept their Grimmory ids: the next numbered insert must come after them (PostgreSQL).
    await syncIdSequences(scope.db);
    stages.push(report);
  };

  try {
    if (dryRun) {
      // One transaction rolled back at the end: later stages see what earlier ones would have written.
      await rehearse(store, async (scope) => {
        for (const stage of STAGE_TABLES) await runStage(stage, scope);
      });
    } else {
      for (const stage of STAGE_TABLES) {
        await store.write((scope) => runStage(stage, scope));
        if (stage.name === 'catalog') stages.push({ stage: 'images', tables: await placeImages(options, pending) });
      }
    }
  } finally {
    // Whatever was rolled back is no longer true; what committed is read again when needed.
    ids.reset();
  }

  if (!options.grimmoryData && (pending.newBooks.length || pending.newAuthors)) {
    warnings.push('without --grimmory-data DIR (Grimmory’s data folder, /app/data in its container) covers are taken from the book files and author photos are not copied');
  }
  const notImported = await leftBehind(source, schema);
  return { source: source.label, schemaVersion, dryRun, stages, notImported, droppedFields, warnings };
}

/** The tables not brought over that hold rows, with why. */
async function leftBehind(source: GrimmorySource, schema: SourceSchema): Promise<NotImported[]> {
  const out: NotImported[] = [];
  for (const [table, reason] of Object.entries(NOT_IMPORTED)) {
    if (!schema.has(table) || table === 'flyway_schema_history') continue;
    const rows = await source.count(table);
    if (rows) out.push({ table, rows, reason });
  }
  return out;
}

/** Without Grimmory's images: each new book's cover from its own file, as a scan would take it. */
async function coversFromFiles(store: Store, coversRoot: string, bookIds: readonly number[]): Promise<TableReport> {
  const report = emptyTableReport('covers from book files');
  for (const bookId of bookIds) {
    try {
      await regenerateCover(store.db, coversRoot, bookId, 'book');
      report.imported++;
    } catch (bookError) {
      try {
        if (!(bookError instanceof CoverChangeError) || bookError.code !== 'NO_FILE') throw bookError;
        await regenerateCover(store.db, coversRoot, bookId, 'audiobook');
        report.imported++;
      } catch (error) {
        recordSkip(report, error instanceof CoverChangeError ? error.message : `cover not read: ${(error as Error).message}`, `#${bookId}`);
      }
    }
  }
  return report;
}
