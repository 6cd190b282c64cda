// Scanning a library: find what changed on disk since the catalog last looked, and bring the catalog up to date.
import type { Transaction } from 'kysely';
import type { CoverImages } from '../covers/cover-images.ts';
import { DEFAULT_COVER_CROPPING, type CoverCropping } from '../covers/cover-cropping.ts';
import type { FileRecord } from '../books/file-record.ts';
import type { Extraction } from '../formats/types.ts';
import type { Library, LibraryPath } from '../libraries/libraries.ts';
import type { DB } from '../store/db-types.ts';
import type { Store } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { attachFile, createBook, markMissing, markPresent, relocateFile, updateFile, type BookContext } from './catalog-updates.ts';
import { groupKey } from './grouping.ts';
import type { ParseResult, ParseTask } from './parse-task.ts';
import { createTaskRunner, forEachLimited } from './task-runner.ts';
import { probeRoot, walkRoot, type ScanUnit } from './walk.ts';

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
}

interface ExistingFile {
  id: number;
  book_id: number;
  file_sub_path: string;
  file_name: string;
  size_bytes: number | null;
  mtime_ms: number | null;
  content_hash: string | null;
  missing_at: string | null;
  is_folder_based: number;
}

type Work =
  | { kind: 'changed'; unit: ScanUnit; existing: ExistingFile; task: ParseTask }
  | { kind: 'fresh'; unit: ScanUnit; task: ParseTask };

const key = (subPath: string, fileName: string): string => `${subPath}\0${fileName}`;
const BATCH_SIZE = 64;

export async function scanLibrary(store: Store, library: Library, options: ScanOptions): Promise<ScanSummary> {
  const started = performance.now();
  const summary: ScanSummary = {
    libraryId: library.id, libraryName: library.name, added: 0, updated: 0, moved: 0, missing: 0, restored: 0, unchanged: 0,
    failed: [], warnings: [], skippedRoots: [], durationMs: 0,
  };
  for (const root of library.paths) await scanRoot(store, library, root, options, summary);
  await store.db.updateTable('library').set({ last_scanned_at: nowIso() }).where('id', '=', library.id).execute();
  summary.durationMs = Math.round(performance.now() - started);
  options.onProgress?.({ phase: 'done', root: '', total: 0, done: 0 });
  return summary;
}

async function scanRoot(store: Store, library: Library, root: LibraryPath, options: ScanOptions, summary: ScanSummary): Promise<void> {
  const { db } = store;
  options.onProgress?.({ phase: 'walking', root: root.path, total: 0, done: 0 });
  const probe = await probeRoot(root.path);
  if (!probe.ok) {
    summary.skippedRoots.push({ path: root.path, reason: `cannot read the folder (${probe.reason}); nothing was marked missing` });
    return;
  }
  const existing = (await db
    .selectFrom('book_file')
    .select(['id', 'book_id', 'file_sub_path', 'file_name', 'size_bytes', 'mtime_ms', 'content_hash', 'missing_at', 'is_folder_based'])
    .where('library_path_id', '=', root.id)
    .execute()) as ExistingFile[];
  const present = existing.filter((f) => !f.missing_at).length;
  if (probe.empty && present > 0) {
    summary.skippedRoots.push({ path: root.path, reason: `the folder is empty but the catalog has ${present} files there (an unmounted share?); nothing was marked missing` });
    return;
  }

  const walk = await walkRoot(root.path);
  for (const u of walk.unreadable) summary.failed.push({ path: u.path, code: 'IO', reason: u.reason });
  const byKey = new Map(existing.map((f) => [key(f.file_sub_path, f.file_name), f]));
  const failures = await db.selectFrom('scan_failure').selectAll().where('library_path_id', '=', root.id).execute();
  const failureByKey = new Map(failures.map((f) => [key(f.file_sub_path, f.file_name), f]));
  const cropping = options.cropping ?? DEFAULT_COVER_CROPPING;

  const seen = new Set<number>();
  const restored: number[] = [];
  const work: Work[] = [];
  for (const unit of walk.units) {
    const k = key(unit.subPath, unit.fileName);
    const row = byKey.get(k);
    const task: ParseTask = { absolutePath: unit.absolutePath, cropping, ...(unit.tracks ? { tracks: unit.tracks } : {}) };
    if (row) {
      seen.add(row.id);
      if (!options.full && row.size_bytes === unit.sizeBytes && row.mtime_ms === unit.mtimeMs) {
        summary.unchanged++;
        if (row.missing_at) restored.push(row.id);
      } else work.push({ kind: 'changed', unit, existing: row, task });
      continue;
    }
    const failure = failureByKey.get(k);
    if (failure && !options.full && failure.size_bytes === unit.sizeBytes && failure.mtime_ms === unit.mtimeMs) {
      summary.failed.push({ path: unit.absolutePath, code: failure.code, reason: failure.reason });
      continue;
    }
    work.push({ kind: 'fresh', unit, task });
  }

  // Files gone from where they were, plus files already missing anywhere in this library, may turn up as "new" files.
  const vanished = existing.filter((f) => !seen.has(f.id) && !f.missing_at);
  const missingElsewhere = (await db
    .selectFrom('book_file')
    .innerJoin('book', 'book.id', 'book_file.book_id')
    .select(['book_file.id', 'book_file.book_id', 'book_file.file_sub_path', 'book_file.file_name', 'book_file.size_bytes', 'book_file.mtime_ms', 'book_file.content_hash', 'book_file.missing_at', 'book_file.is_folder_based'])
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
  for (const w of work) {
    if (w.kind !== 'fresh') continue;
    const candidates = moveCandidates.get(w.unit.sizeBytes);
    if (candidates) w.task.movedCandidates = candidates.map((c) => c.content_hash as string);
  }

  const ctx: BookContext = { libraryId: library.id, formatPriority: library.formatPriority, coversRoot: options.coversRoot };
  const movedIds = new Set<number>();
  let pending: { work: Work; result: ParseResult }[] = [];
  let done = 0;

  const flush = async (): Promise<void> => {
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    await db.transaction().execute(async (trx) => {
      for (const item of batch) await applyResult(trx, ctx, library, root, item.work, item.result, summary, moveCandidates, movedIds);
    });
  };

  const runner = createTaskRunner(options.workers, work.length);
  try {
    options.onProgress?.({ phase: 'parsing', root: root.path, total: work.length, done: 0 });
    await forEachLimited(work, Math.max(2, options.workers * 6), (w) => runner.run(w.task), async (w, result) => {
      pending.push({ work: w, result });
      done++;
      options.onProgress?.({ phase: 'parsing', root: root.path, total: work.length, done });
      if (pending.length >= BATCH_SIZE) await flush();
    });
    await flush();
  } finally {
    await runner.close();
  }

  const gone = vanished.filter((f) => !movedIds.has(f.id)).map((f) => f.id);
  await db.transaction().execute(async (trx) => {
    await markMissing(trx, gone);
    await markPresent(trx, restored);
    const onDisk = new Set(walk.units.map((u) => key(u.subPath, u.fileName)));
    const stale = failures.filter((f) => !onDisk.has(key(f.file_sub_path, f.file_name))).map((f) => f.id);
    if (stale.length > 0) await trx.deleteFrom('scan_failure').where('id', 'in', stale).execute();
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
  trx: Transaction<DB>,
  ctx: BookContext,
  library: Library,
  root: LibraryPath,
  work: Work,
  result: ParseResult,
  summary: ScanSummary,
  moveCandidates: Map<number, ExistingFile[]>,
  movedIds: Set<number>,
): Promise<void> {
  const { unit } = work;
  if (result.kind === 'failed') {
    summary.failed.push({ path: unit.absolutePath, code: result.code, reason: result.reason });
    await trx
      .insertInto('scan_failure')
      .values({ library_path_id: root.id, file_sub_path: unit.subPath, file_name: unit.fileName, size_bytes: unit.sizeBytes, mtime_ms: unit.mtimeMs, code: result.code, reason: result.reason, failed_at: nowIso() })
      .onConflict((oc) => oc.columns(['library_path_id', 'file_sub_path', 'file_name']).doUpdateSet({ size_bytes: unit.sizeBytes, mtime_ms: unit.mtimeMs, code: result.code, reason: result.reason, failed_at: nowIso() }))
      .execute();
    return;
  }
  await trx.deleteFrom('scan_failure').where('library_path_id', '=', root.id).where('file_sub_path', '=', unit.subPath).where('file_name', '=', unit.fileName).execute();

  if (result.kind === 'moved') {
    const candidate = moveCandidates.get(unit.sizeBytes)?.find((c) => c.content_hash === result.contentHash && !movedIds.has(c.id));
    if (candidate) {
      movedIds.add(candidate.id);
      await relocateFile(trx, candidate.id, { libraryPathId: root.id, subPath: unit.subPath, fileName: unit.fileName, sizeBytes: unit.sizeBytes, mtimeMs: unit.mtimeMs, partialMd5: result.partialMd5, contentHash: result.contentHash });
      summary.moved++;
      return;
    }
    // Two copies of the same moved file: the second one is a new book. Parse it properly next time round.
    summary.failed.push({ path: unit.absolutePath, code: 'DUPLICATE', reason: 'same content as a file that moved in this scan; rescan to add it' });
    return;
  }

  const record = recordOf(unit, root, result, result.extraction as Extraction);
  const cover: CoverImages | undefined = result.cover;
  if (result.coverError) summary.warnings.push({ path: unit.absolutePath, reason: `no cover: ${result.coverError}` });
  for (const warning of result.extraction.warnings ?? []) summary.warnings.push({ path: unit.absolutePath, reason: warning });

  if (work.kind === 'changed') {
    await updateFile(trx, ctx, work.existing.id, work.existing.book_id, record, cover);
    summary.updated++;
    return;
  }
  const group = groupKey({ subPath: unit.subPath, fileName: unit.fileName, folderBased: record.folderBased }, library.organizationMode);
  const owner = group === undefined ? undefined : await findGroupOwner(trx, library, root, group);
  if (owner !== undefined) {
    await attachFile(trx, ctx, owner, record, cover);
    summary.updated++;
  } else {
    await createBook(trx, ctx, record, cover);
    summary.added++;
  }
}

/** The book that already holds a file of the same group in this root, if any. */
async function findGroupOwner(trx: Transaction<DB>, library: Library, root: LibraryPath, group: string): Promise<number | undefined> {
  const [subPath] = group.split('\0');
  const parentOfFolder = subPath?.includes('/') ? subPath.slice(0, subPath.lastIndexOf('/')) : '';
  const rows = await trx
    .selectFrom('book_file')
    .select(['book_id', 'file_sub_path', 'file_name', 'is_folder_based'])
    .where('library_path_id', '=', root.id)
    .where('file_sub_path', 'in', [subPath ?? '', parentOfFolder])
    .execute();
  const hit = rows.find((r) => groupKey({ subPath: r.file_sub_path, fileName: r.file_name, folderBased: r.is_folder_based === 1 }, library.organizationMode) === group);
  return hit?.book_id;
}
