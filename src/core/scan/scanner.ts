// Scanning a library: find what changed on disk since the catalog last looked, and bring the catalog up to date.
import { rm } from 'node:fs/promises';
import { DEFAULT_COVER_CROPPING, type CoverCropping } from '../covers/cover-cropping.ts';
import { createStagingDir, type StagedCoverImages } from '../covers/cover-store.ts';
import { pendingThumbnailCount } from '../covers/thumbnail-backlog.ts';
import type { FileRecord } from '../books/file-record.ts';
import { lockKeyForTransaction, libraryPathKey } from '../store/key-locks.ts';
import type { SqlExec } from '../store/sql-exec.ts';
import type { Extraction } from '../formats/types.ts';
import type { Library, LibraryPath } from '../libraries/libraries.ts';
import type { Store, WriteScope } from '../store/store.ts';
import { writeSidecarsForNewBooks } from '../sidecar/after-scan.ts';
import { emitEvent } from '../events/live-events.ts';
import { nowIso } from '../time.ts';
import { attachFile, createBook, markMissing, markPresent, relocateFile, updateFile, type BookContext } from './catalog-updates.ts';
import { groupKey } from './grouping.ts';
import { inScope, rootScope, type RootScope } from './scan-scope.ts';
import type { ParseResult, ParseTask } from './parse-task.ts';
import { createTaskRunner, forEachLimited, type TaskRunner } from './task-runner.ts';
import { probeRoot, unitAt, unitCount, type ScanUnit, type WalkResult } from './walk.ts';

export interface ScanFailure {
  path: string;
  code: string;
  reason: string;
}

export interface ScanSummary {
  libraryId: number;
  libraryName: string;
  added: number;
  updated: number;
  moved: number;
  missing: number;
  restored: number;
  unchanged: number;
  failed: ScanFailure[];
  /** Books added or updated with part of their metadata or cover left out, and why. */
  warnings: { path: string; reason: string }[];
  skippedRoots: { path: string; reason: string }[];
  /**
   * Thumbnails still to be made when the scan returned, in any library: a scan stores every book with its cover and
   * leaves the thumbnails to bindery serve (in the background, or on the first request for one); see
   * src/core/covers/thumbnail-backlog.ts.
   */
  thumbnailsPending: number;
  durationMs: number;
}

export interface ScanProgress {
  phase: 'walking' | 'parsing' | 'done';
  root: string;
  total: number;
  done: number;
}

export interface ScanOptions {
  coversRoot: string;
  /** Re-read every file, even unchanged ones (and retry earlier failures). */
  full?: boolean;
  workers: number;
  cropping?: CoverCropping;
  onProgress?: (progress: ScanProgress) => void;
  /**
   * Only these folders (absolute, under the library's folders) and what is below them; files elsewhere are neither
   * read nor marked missing. The whole library when absent.
   */
  folders?: readonly string[];
}

/** A catalog file that may turn up elsewhere: one that vanished in this scan, or one already missing. */
interface ExistingFile {
  id: number;
  book_id: number;
  library_path_id: number;
  file_sub_path: string;
  file_name: string;
  size_bytes: number | null;
  mtime_ms: number | null;
  content_hash: string | null;
  missing_at: string | null;
  is_folder_based: number;
}

/** The catalog's files under one root, column by column (a row object each cost ~10x more for a large library). */
interface KnownFiles {
  byKey: Map<string, number>;
  ids: number[];
  /** NaN where the catalog has no value, so it never equals what is on disk. */
  sizes: number[];
  mtimes: number[];
  missing: boolean[];
}

type Work = { unit: ScanUnit; task: ParseTask } & ({ kind: 'changed'; fileId: number } | { kind: 'fresh' });

/** The books one batch added and changed: reported with the batch, in its transaction. */
interface Touched {
  added: number[];
  changed: number[];
}

const key = (subPath: string, fileName: string): string => `${subPath}\0${fileName}`;
const BATCH_SIZE = 64;
const SKIP = 0;
const CHANGED = 1;
const FRESH = 2;

export async function scanLibrary(store: Store, library: Library, options: ScanOptions): Promise<ScanSummary> {
  const started = performance.now();
  const startedAt = nowIso();
  const summary: ScanSummary = {
    libraryId: library.id, libraryName: library.name, added: 0, updated: 0, moved: 0, missing: 0, restored: 0, unchanged: 0,
    failed: [], warnings: [], skippedRoots: [], thumbnailsPending: 0, durationMs: 0,
  };
  const runner = createTaskRunner(options.workers);
  const stagingDir = await createStagingDir(options.coversRoot, store.liveness);
  const what = options.folders ? `${library.name} (${options.folders.length} changed ${options.folders.length === 1 ? 'folder' : 'folders'})` : library.name;
  await emitEvent(store.db, { kind: 'log', audience: 'managers', message: `Started scanning library: ${what}`, severity: 'INFO' });
  try {
    for (const root of library.paths) {
      const scope = options.folders ? await rootScope(root.path, options.folders) : undefined;
      if (scope?.length === 0) continue;
      await scanRoot(store, runner, stagingDir, library, root, options, summary, scope?.[0] === '' ? undefined : scope);
    }
  } finally {
    await runner.close();
    await rm(stagingDir, { recursive: true, force: true });
  }
  // When the library was last compared with its folders as a whole.
  if (!options.folders) await store.db.updateTable('library').set({ last_scanned_at: nowIso() }).where('id', '=', library.id).execute();
  summary.warnings.push(...(await writeSidecarsForNewBooks(store, library.id, startedAt, options.coversRoot)));
  summary.thumbnailsPending = await pendingThumbnailCount(store);
  summary.durationMs = Math.round(performance.now() - started);
  const counts = `${summary.added} added, ${summary.updated} updated, ${summary.moved} moved, ${summary.missing} missing, ${summary.restored} back`;
  await emitEvent(store.db, { kind: 'log', audience: 'managers', message: `Finished scanning library: ${what} (${counts})`, severity: summary.failed.length > 0 ? 'WARN' : 'INFO' });
  options.onProgress?.({ phase: 'done', root: '', total: 0, done: 0 });
  return summary;
}

const KNOWN_PAGE = 5000;

async function loadKnownFiles(store: Store, rootId: number, scope: RootScope | undefined): Promise<KnownFiles> {
  const known: KnownFiles = { byKey: new Map(), ids: [], sizes: [], mtimes: [], missing: [] };
  // In pages by id, so a large library never holds all its rows as objects at once; one snapshot for all of them. The
  // unary plus keeps SQLite walking the primary key in order (through the location index it sorted every page anew:
  // 4x the CPU at 100,000 files); on PostgreSQL it is plain arithmetic.
  await store.read(async ({ exec }) => {
    for (let after = 0; ; ) {
      const rows = (await exec.all(
        'select id, file_sub_path, file_name, size_bytes, mtime_ms, case when missing_at is null then 0 else 1 end as missing ' +
          `from book_file where +library_path_id = ? and id > ? order by id limit ${KNOWN_PAGE}`,
        [rootId, after],
      )) as { id: number; file_sub_path: string; file_name: string; size_bytes: number | null; mtime_ms: number | null; missing: number }[];
      for (const row of rows) {
        if (scope && !inScope(scope, row.file_sub_path, row.file_name)) continue;
        known.byKey.set(key(row.file_sub_path, row.file_name), known.ids.length);
        known.ids.push(row.id);
        known.sizes.push(row.size_bytes ?? Number.NaN);
        known.mtimes.push(row.mtime_ms ?? Number.NaN);
        known.missing.push(row.missing === 1);
      }
      if (rows.length < KNOWN_PAGE) break;
      after = (rows[rows.length - 1] as { id: number }).id;
    }
  });
  return known;
}

const FILE_COLUMNS = ['book_file.id', 'book_file.book_id', 'book_file.library_path_id', 'book_file.file_sub_path', 'book_file.file_name', 'book_file.size_bytes', 'book_file.mtime_ms', 'book_file.content_hash', 'book_file.missing_at', 'book_file.is_folder_based'] as const;

async function filesById(store: Store, ids: number[]): Promise<ExistingFile[]> {
  const rows: ExistingFile[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    rows.push(...((await store.db.selectFrom('book_file').select(FILE_COLUMNS).where('book_file.id', 'in', ids.slice(i, i + 500)).execute()) as ExistingFile[]));
  }
  return rows;
}

/** What one root needs: decided from the walk and the catalog before any file is read. */
interface RootPlan {
  walk: WalkResult;
  /** Per unit: SKIP, CHANGED or FRESH. */
  kinds: Uint8Array;
  /** Unit index → its book_file id, for changed units. */
  changedFile: Map<number, number>;
  total: number;
  restored: number[];
  vanishedIds: number[];
  failures: { id: number }[];
  failuresOnDisk: Set<number>;
}

async function planRoot(store: Store, runner: TaskRunner, root: LibraryPath, options: ScanOptions, summary: ScanSummary, scope: RootScope | undefined): Promise<RootPlan | undefined> {
  const probe = await probeRoot(root.path);
  if (!probe.ok) {
    summary.skippedRoots.push({ path: root.path, reason: `cannot read the folder (${probe.reason}); nothing was marked missing` });
    return undefined;
  }
  const known = await loadKnownFiles(store, root.id, scope);
  const present = known.missing.filter((m) => !m).length;
  if (probe.empty && present > 0) {
    summary.skippedRoots.push({ path: root.path, reason: `the folder is empty but the catalog has ${present} files there (an unmounted share?); nothing was marked missing` });
    return undefined;
  }

  const walk = await runner.walk(root.path, scope);
  for (const u of walk.unreadable) summary.failed.push({ path: u.path, code: 'IO', reason: u.reason });
  const failures = (await store.db.selectFrom('scan_failure').selectAll().where('library_path_id', '=', root.id).execute()).filter((f) => !scope || inScope(scope, f.file_sub_path, f.file_name));
  const failureByKey = new Map(failures.map((f) => [key(f.file_sub_path, f.file_name), f]));
  const failuresOnDisk = new Set<number>();

  const count = unitCount(walk);
  const kinds = new Uint8Array(count);
  const changedFile = new Map<number, number>();
  const seen = new Uint8Array(known.ids.length);
  const restored: number[] = [];
  let total = 0;
  for (let i = 0; i < count; i++) {
    const k = key(walk.folders[walk.folder[i] as number] as string, walk.names[i] as string);
    const failure = failureByKey.size > 0 ? failureByKey.get(k) : undefined;
    if (failure) failuresOnDisk.add(failure.id);
    const row = known.byKey.get(k);
    if (row !== undefined) {
      seen[row] = 1;
      if (!options.full && known.sizes[row] === walk.sizes[i] && known.mtimes[row] === walk.mtimes[i]) {
        summary.unchanged++;
        if (known.missing[row]) restored.push(known.ids[row] as number);
      } else {
        kinds[i] = CHANGED;
        changedFile.set(i, known.ids[row] as number);
        total++;
      }
      continue;
    }
    // A file that failed for what it contains is not read again until it changes; one that could not be read (no
    // permission, a share that dropped) is tried again on every scan, since fixing that does not change the file.
    if (failure && failure.code !== 'IO' && !options.full && failure.size_bytes === walk.sizes[i] && failure.mtime_ms === walk.mtimes[i]) {
      summary.failed.push({ path: unitAt(walk, i).absolutePath, code: failure.code, reason: failure.reason });
      continue;
    }
    kinds[i] = FRESH;
    total++;
  }
  const vanishedIds = known.ids.filter((_, row) => !seen[row] && !known.missing[row]);
  return { walk, kinds, changedFile, total, restored, vanishedIds, failures, failuresOnDisk };
}

/** Scans one root: all of it, or only the folders of `scope`. */
async function scanRoot(store: Store, runner: TaskRunner, stagingDir: string, library: Library, root: LibraryPath, options: ScanOptions, summary: ScanSummary, scope?: RootScope): Promise<void> {
  const { db } = store;
  options.onProgress?.({ phase: 'walking', root: root.path, total: 0, done: 0 });
  const plan = await planRoot(store, runner, root, options, summary, scope);
  if (!plan) return;
  const { walk, kinds, changedFile, total, restored } = plan;
  const cropping = options.cropping ?? DEFAULT_COVER_CROPPING;

  // Files gone from where they were, plus files already missing anywhere in this library, may turn up as "new" files.
  const vanished = await filesById(store, plan.vanishedIds);
  const missingElsewhere = (await db
    .selectFrom('book_file')
    .innerJoin('book', 'book.id', 'book_file.book_id')
    .select(FILE_COLUMNS)
    .where('book.library_id', '=', library.id)
    .where('book_file.missing_at', 'is not', null)
    .execute()) as ExistingFile[];
  const moveCandidates = new Map<number, ExistingFile[]>();
  for (const f of [...vanished, ...missingElsewhere]) {
    if (f.size_bytes === null || !f.content_hash) continue;
    const list = moveCandidates.get(f.size_bytes) ?? [];
    list.push(f);
    moveCandidates.set(f.size_bytes, list);
  }

  // The work is built lazily, a few items at a time, as the pool takes it.
  function* work(): Generator<Work> {
    for (let i = 0; i < kinds.length; i++) {
      const kind = kinds[i];
      if (kind === SKIP) continue;
      const unit = unitAt(walk, i);
      const task: ParseTask = { absolutePath: unit.absolutePath, cropping, stagingDir, deferThumbnail: true, ...(unit.tracks ? { tracks: unit.tracks } : {}) };
      if (kind === CHANGED) {
        yield { kind: 'changed', unit, task, fileId: changedFile.get(i) as number };
        continue;
      }
      const candidates = moveCandidates.get(unit.sizeBytes);
      if (candidates) task.movedCandidates = candidates.map((c) => c.content_hash as string);
      yield { kind: 'fresh', unit, task };
    }
  }

  const ctx: BookContext = { libraryId: library.id, formatPriority: library.formatPriority, coversRoot: options.coversRoot };
  const movedIds = new Set<number>();
  let pending: { work: Work; result: ParseResult }[] = [];
  let done = 0;

  // Short transactions, so other writers get in between batches. Each holds its folder's key: a scan of the same library
  // by another process, or a bookdrop import into it, decides what is already catalogued only after this batch commits.
  const flush = async (): Promise<void> => {
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    await store.write(async (scope) => {
      await lockKeyForTransaction(scope.db, libraryPathKey(root.id));
      const catalogued = await cataloguedPlaces(scope.exec, root.id, batch.filter((item) => item.work.kind === 'fresh').map((item) => item.work.unit));
      const touched: Touched = { added: [], changed: [] };
      for (const item of batch) {
        if (item.work.kind === 'fresh' && catalogued.has(key(item.work.unit.subPath, item.work.unit.fileName))) {
          // Another process catalogued it since this scan looked.
          summary.unchanged++;
          continue;
        }
        await applyResult(scope, ctx, library, root, item.work, item.result, summary, moveCandidates, movedIds, touched);
      }
      await emitEvent(scope.exec, { kind: 'books-added', bookIds: touched.added });
      await emitEvent(scope.exec, { kind: 'books-changed', bookIds: [...new Set(touched.changed)] });
    });
  };

  options.onProgress?.({ phase: 'parsing', root: root.path, total, done: 0 });
  await forEachLimited(work(), Math.max(2, options.workers * 10), (w) => runner.parse(w.task), async (w, result) => {
    pending.push({ work: w, result });
    done++;
    options.onProgress?.({ phase: 'parsing', root: root.path, total, done });
    if (pending.length >= BATCH_SIZE) await flush();
  });
  await flush();

  let gone = vanished.filter((f) => !movedIds.has(f.id));
  await store.write(async (scope) => {
    const trx = scope.db;
    await lockKeyForTransaction(scope.db, libraryPathKey(root.id));
    // A file another process found at a new place since this scan looked is not missing.
    gone = await stillAt(scope.exec, gone);
    await markMissing(trx, gone.map((f) => f.id));
    await markPresent(trx, restored);
    await emitEvent(trx, { kind: 'books-changed', bookIds: [...new Set([...gone.map((f) => f.book_id), ...(await bookIdsOfFiles(trx, restored))])] });
    const stale = plan.failures.filter((f) => !plan.failuresOnDisk.has(f.id)).map((f) => f.id);
    for (let i = 0; i < stale.length; i += 500) await trx.deleteFrom('scan_failure').where('id', 'in', stale.slice(i, i + 500)).execute();
  });
  summary.missing += gone.length;
  summary.restored += restored.length;
}

function recordOf(unit: ScanUnit, root: LibraryPath, prints: { partialMd5: string; contentHash: string }, extraction: Extraction): FileRecord {
  return {
    libraryPathId: root.id,
    subPath: unit.subPath,
    fileName: unit.fileName,
    sizeBytes: unit.sizeBytes,
    mtimeMs: unit.mtimeMs,
    partialMd5: prints.partialMd5,
    contentHash: prints.contentHash,
    folderBased: unit.tracks !== undefined,
    extraction,
  };
}

async function applyResult(
  { db: trx, exec }: WriteScope,
  ctx: BookContext,
  library: Library,
  root: LibraryPath,
  work: Work,
  result: ParseResult,
  summary: ScanSummary,
  moveCandidates: Map<number, ExistingFile[]>,
  movedIds: Set<number>,
  touched: Touched,
): Promise<void> {
  const { unit } = work;
  if (result.kind === 'failed') {
    summary.failed.push({ path: unit.absolutePath, code: result.code, reason: result.reason });
    const now = nowIso();
    await exec.run(
      'insert into scan_failure (library_path_id, file_sub_path, file_name, size_bytes, mtime_ms, code, reason, failed_at) values (?, ?, ?, ?, ?, ?, ?, ?) ' +
        'on conflict (library_path_id, file_sub_path, file_name) do update set size_bytes = excluded.size_bytes, mtime_ms = excluded.mtime_ms, code = excluded.code, reason = excluded.reason, failed_at = excluded.failed_at',
      [root.id, unit.subPath, unit.fileName, unit.sizeBytes, unit.mtimeMs, result.code, result.reason, now],
    );
    return;
  }
  await exec.run('delete from scan_failure where library_path_id = ? and file_sub_path = ? and file_name = ?', [root.id, unit.subPath, unit.fileName]);

  if (result.kind === 'moved') {
    const candidate = moveCandidates.get(unit.sizeBytes)?.find((c) => c.content_hash === result.contentHash && !movedIds.has(c.id));
    if (candidate) {
      movedIds.add(candidate.id);
      await relocateFile(trx, candidate.id, { libraryPathId: root.id, subPath: unit.subPath, fileName: unit.fileName, sizeBytes: unit.sizeBytes, mtimeMs: unit.mtimeMs, partialMd5: result.partialMd5, contentHash: result.contentHash });
      touched.changed.push(candidate.book_id);
      summary.moved++;
      return;
    }
    // Two copies of the same moved file: the second one is a new book. Parse it properly next time round.
    summary.failed.push({ path: unit.absolutePath, code: 'DUPLICATE', reason: 'same content as a file that moved in this scan; rescan to add it' });
    return;
  }

  const record = recordOf(unit, root, result, result.extraction as Extraction);
  const cover: StagedCoverImages | undefined = result.cover;
  if (result.coverError) summary.warnings.push({ path: unit.absolutePath, reason: `no cover: ${result.coverError}` });
  for (const warning of result.extraction.warnings ?? []) summary.warnings.push({ path: unit.absolutePath, reason: warning });

  if (work.kind === 'changed') {
    const row = (await exec.get('select book_id from book_file where id = ?', [work.fileId])) as { book_id: number };
    await updateFile(exec, ctx, work.fileId, row.book_id, record, cover);
    touched.changed.push(row.book_id);
    summary.updated++;
    return;
  }
  const group = groupKey({ subPath: unit.subPath, fileName: unit.fileName, folderBased: record.folderBased }, library.organizationMode);
  const owner = group === undefined ? undefined : await findGroupOwner(exec, library, root, group);
  if (owner !== undefined) {
    await attachFile(exec, ctx, owner, record, cover);
    touched.changed.push(owner);
    summary.updated++;
  } else {
    touched.added.push(await createBook(exec, ctx, record, cover));
    summary.added++;
  }
}

async function bookIdsOfFiles(trx: WriteScope['db'], fileIds: number[]): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < fileIds.length; i += 500) {
    const rows = await trx.selectFrom('book_file').select('book_id').distinct().where('id', 'in', fileIds.slice(i, i + 500)).execute();
    out.push(...rows.map((r) => r.book_id));
  }
  return out;
}

/** The book that already holds a file of the same group in this root, if any. */
async function findGroupOwner(exec: SqlExec, library: Library, root: LibraryPath, group: string): Promise<number | undefined> {
  const [subPath] = group.split('\0');
  const parentOfFolder = subPath?.includes('/') ? subPath.slice(0, subPath.lastIndexOf('/')) : '';
  const rows = (await exec.all('select book_id, file_sub_path, file_name, is_folder_based from book_file where library_path_id = ? and file_sub_path in (?, ?)', [root.id, subPath ?? '', parentOfFolder])) as {
    book_id: number;
    file_sub_path: string;
    file_name: string;
    is_folder_based: number;
  }[];
  const hit = rows.find((r) => groupKey({ subPath: r.file_sub_path, fileName: r.file_name, folderBased: r.is_folder_based === 1 }, library.organizationMode) === group);
  return hit?.book_id;
}

/** Which of these places under the root the catalog has a file at now (present or missing). */
async function cataloguedPlaces(exec: SqlExec, rootId: number, units: ScanUnit[]): Promise<Set<string>> {
  const found = new Set<string>();
  if (units.length === 0) return found;
  const names = [...new Set(units.map((u) => u.fileName))];
  for (let i = 0; i < names.length; i += 500) {
    const chunk = names.slice(i, i + 500);
    const rows = await exec.all(`select file_sub_path, file_name from book_file where library_path_id = ? and file_name in (${chunk.map(() => '?').join(', ')})`, [rootId, ...chunk]);
    for (const row of rows) found.add(key(row.file_sub_path as string, row.file_name as string));
  }
  return found;
}

/** The files that are still where this scan saw them (another process may have relocated some meanwhile). */
async function stillAt(exec: SqlExec, files: ExistingFile[]): Promise<ExistingFile[]> {
  const kept: ExistingFile[] = [];
  for (let i = 0; i < files.length; i += 500) {
    const chunk = files.slice(i, i + 500);
    const rows = await exec.all(`select id, library_path_id, file_sub_path, file_name from book_file where id in (${chunk.map(() => '?').join(', ')})`, chunk.map((f) => f.id));
    const place = (pathId: unknown, subPath: unknown, fileName: unknown): string => `${String(pathId)}\0${key(subPath as string, fileName as string)}`;
    const now = new Map(rows.map((r) => [r.id as number, place(r.library_path_id, r.file_sub_path, r.file_name)]));
    kept.push(...chunk.filter((f) => now.get(f.id) === place(f.library_path_id, f.file_sub_path, f.file_name)));
  }
  return kept;
}
