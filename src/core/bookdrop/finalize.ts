// Importing bookdrop files into libraries. Per file: claim the row, read the file, copy it into the library under
// the naming pattern (flushed and verified), record the book, and only then remove the original. Any failure leaves
// the original where it was, puts the row back for review and is reported for that file alone.
import { readFile, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { DEFAULT_COVER_CROPPING, makeCoverImages } from '../covers/cover-images.ts';
import { createStagingDir, stageCoverImages } from '../covers/cover-store.ts';
import { errorCode } from '../moves/fs.ts';
import { activeBatches } from '../moves/journal.ts';
import { formatOf } from '../formats/index.ts';
import { listLibraries, type Library, type LibraryPath } from '../libraries/libraries.ts';
import { movePattern } from '../moves/plan.ts';
import { renderPath } from '../naming/render.ts';
import { createTaskRunner, forEachLimited, type TaskRunner } from '../scan/task-runner.ts';
import { ensureHeld, RegistrationLost, type Registration } from '../store/liveness.ts';
import type { SqlExec } from '../store/sql-exec.ts';
import type { Store } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { importKey, NO_IMPORT, ORIGINAL_LEFT_NOTE, removeEmptyFolders } from './bookdrop-cleanup.ts';
import { currentMetadata, FINALIZED, PENDING, rowsByIds, type BookdropRow } from './bookdrop-files.ts';
import { dropMetadata, namingFacts, overlayMetadata, type DropMetadata } from './bookdrop-metadata.ts';
import { bookdropCoverPath, partialName, removeBookdropCover } from './bookdrop-paths.ts';
import { catalogHasFile, recordImportedFile, type ParsedFile } from './record-book.ts';
import { copyVerified, ImportStepError, nodeImportFs, placeUnderFreeName, splitRelativePath, step, type ImportFs } from './safe-copy.ts';
import { emitEvent } from '../events/live-events.ts';
import { markOf } from '../work-files.ts';

/** BookdropFinalizeRequest. */
export interface FinalizeRequest {
  selectAll?: boolean | null;
  excludedIds?: readonly number[] | null;
  files?: readonly FinalizeFile[] | null;
  defaultLibraryId?: number | null;
  defaultPathId?: number | null;
}

export interface FinalizeFile {
  fileId?: number | null;
  libraryId?: number | null;
  pathId?: number | null;
  /** BookMetadata; replaces the stored metadata for this file. */
  metadata?: unknown;
}

export interface FileOutcome {
  fileId: number;
  fileName: string | null;
  success: boolean;
  message: string;
  bookId?: number;
  /** Where the file is now. */
  path?: string;
  /** The file was imported, but something after that did not work out (the original could not be removed). */
  warning?: string;
}

export interface FinalizeOutcome {
  totalFiles: number;
  successfullyImported: number;
  failed: number;
  processedAt: string;
  results: FileOutcome[];
}

export interface FinalizeEnv {
  store: Store;
  dataDir: string;
  /** When given, folders of the bookdrop an import leaves empty are removed (never the bookdrop folder itself). */
  bookdropDir?: string;
}

export interface FinalizeOptions {
  /** Filesystem steps (tests inject failures here). */
  fs?: ImportFs;
  /** Runs inside each book's catalog transaction just before it commits (tests throw here). */
  beforeCommit?: (fileId: number) => void | Promise<void>;
  /** Parse files on this many worker threads (0: on the caller's thread). */
  workers?: number;
  /** Files imported at once (default 4); results keep the order of the request either way. */
  concurrency?: number;
  onProgress?: (done: number, total: number, last: FileOutcome) => void;
}

class FileFailure extends Error {
  override name = 'FileFailure';
}

/** Files `finalize` takes: with selectAll every file waiting for review but the excluded ones, else those listed. */
async function targetIds(store: Store, request: FinalizeRequest): Promise<number[]> {
  if (request.selectAll) {
    const excluded = new Set(request.excludedIds ?? []);
    const rows = await store.db.selectFrom('bookdrop_file').select('id').where('status', '=', PENDING).orderBy('id').execute();
    return rows.map((r) => r.id).filter((id) => !excluded.has(id));
  }
  const ids: number[] = [];
  for (const f of request.files ?? []) if (typeof f.fileId === 'number' && !ids.includes(f.fileId)) ids.push(f.fileId);
  return ids;
}

interface Target {
  library: Library;
  root: LibraryPath;
  metadata: DropMetadata | null;
}

function resolveTarget(row: BookdropRow, override: FinalizeFile | undefined, request: FinalizeRequest, libraries: Map<number, Library>): Target {
  if (!override && (request.defaultLibraryId == null || request.defaultPathId == null)) {
    throw new FileFailure(`Missing metadata and defaults for fileId=${row.id}`);
  }
  const libraryId = override?.libraryId ?? request.defaultLibraryId;
  const pathId = override?.pathId ?? request.defaultPathId;
  if (libraryId == null || pathId == null) throw new FileFailure(`No library or folder given for fileId=${row.id}`);
  const library = libraries.get(libraryId);
  if (!library) throw new FileFailure(`Library not found with ID: ${libraryId}`);
  const root = library.paths.find((p) => p.id === pathId);
  if (!root) throw new FileFailure('Invalid library path');
  const format = formatOf(row.file_name);
  if (!format) throw new FileFailure('Invalid file format: Unsupported file extension');
  if (library.allowedFormats && library.allowedFormats.length > 0 && !library.allowedFormats.includes(format.bookType)) {
    throw new FileFailure(`Format '${format.bookType}' is not allowed in library '${library.name}'`);
  }
  const metadata = override?.metadata != null ? dropMetadata(override.metadata) : currentMetadata(row);
  return { library, root, metadata };
}

interface Importer {
  env: FinalizeEnv;
  fs: ImportFs;
  runner: TaskRunner;
  stagingDir: string;
  coversRoot: string;
  patterns: Map<number, string>;
  beforeCommit: FinalizeOptions['beforeCommit'];
}

class SourceMissing extends Error {}

function sameFile(a: { size: number; mtimeMs: number }, b: { size: number; mtimeMs: number }): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** A row this process claimed for its import, and the registration that shows other processes it runs. */
interface Claim {
  id: number;
  /** The owner written on the row. */
  me: string;
  registration: Registration;
}

const WORK = 'bookdrop import';

/**
 * The import of one claimed file; the original is only removed once the book is in the catalog. Every change it makes
 * is fenced by the claim: once this process lost its registration, another process may have taken the claim over and
 * be recovering it, so the import stops where it is (RegistrationLost) and touches nothing more.
 */
async function importOne(im: Importer, row: BookdropRow, target: Target, claim: Claim): Promise<{ bookId: number; path: string; warning?: string }> {
  const source = row.file_path;
  const before = await stat(source).catch((error: unknown) => {
    if (errorCode(error) === 'ENOENT') throw new SourceMissing();
    throw new ImportStepError('read', (error as Error).message);
  });
  if (!before.isFile()) throw new ImportStepError('read', 'not a regular file');

  // The cover was already taken from the file when it arrived: the book's covers are made from that one, which
  // spares decoding the book's own image (or rendering a PDF page) a second time.
  const dropCover = await readFile(bookdropCoverPath(im.env.dataDir, row.id)).catch(() => undefined);
  const result = await step('read', () => im.runner.parse({ absolutePath: source, cropping: DEFAULT_COVER_CROPPING, stagingDir: im.stagingDir, skipCover: dropCover !== undefined }));
  if (result.kind !== 'parsed') throw new ImportStepError('read', result.kind === 'failed' ? result.reason : 'unexpected result');
  const parsed: ParsedFile = result;
  if (dropCover) {
    const images = await makeCoverImages(dropCover, parsed.extraction.bookType === 'AUDIOBOOK' ? 'audiobook' : 'book').catch(() => undefined);
    if (images) parsed.cover = stageCoverImages(im.stagingDir, images);
  }
  const metadata = overlayMetadata(parsed.extraction.metadata, target.metadata);

  let pattern = im.patterns.get(target.library.id);
  if (pattern === undefined) {
    pattern = await movePattern(im.env.store.db, target.library);
    im.patterns.set(target.library.id, pattern);
  }
  const where = splitRelativePath(renderPath(pattern, namingFacts(metadata, row.file_name)));
  if (!where) throw new ImportStepError('place', 'the naming pattern gives no usable path');
  const dir = join(target.root.path, where.subPath);

  // Where the copy goes is on the row before it is made: a recovery after a kill finds (and removes) it.
  const partial = join(dir, partialName('copy', markOf(claim.registration.owner)));
  await traceImport(im.env.store, claim, { import_partial_path: partial });
  await copyVerified(im.fs, source, dir, { size: before.size, hash: parsed.contentHash }, partial);
  let placed: string;
  try {
    const after = await stat(source).catch(() => undefined);
    if (!after || !sameFile(before, after)) throw new ImportStepError('verify', 'the original changed while it was being imported');
    placed = await placeUnderFreeName(
      im.fs,
      partial,
      dir,
      where.fileName,
      async (name) => catalogHasFile(im.env.store, target.root.id, where.subPath, name),
      (path) => traceImport(im.env.store, claim, { import_target_path: path }),
    );
  } catch (error) {
    await im.fs.unlink(partial).catch(() => undefined);
    throw error;
  }

  const fileName = basename(placed);
  let bookId: number;
  try {
    ({ bookId } = await step('record', () =>
      recordImportedFile(im.env.store, {
        library: target.library,
        root: target.root,
        subPath: where.subPath,
        fileName,
        path: placed,
        parsed,
        metadata,
        given: target.metadata,
        coversRoot: im.coversRoot,
        beforeCommit: () => im.beforeCommit?.(row.id),
        fence: (exec) => stillClaimed(im.env.store, exec, claim),
      }),
    ));
  } catch (error) {
    if (error instanceof RegistrationLost) throw error;
    // The copy goes, unless the catalog points at it meanwhile (a library scan found it first).
    if (!(await catalogHasFile(im.env.store, target.root.id, where.subPath, fileName))) await im.fs.unlink(placed).catch(() => undefined);
    throw error;
  }

  ensureHeld(claim.registration, WORK);
  try {
    await im.fs.unlink(source);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') {
      // Imported and recorded: the row stays FINALIZED, no longer a claim, so that no recovery offers the file again.
      const reason = (error as Error).message;
      await markOriginalLeft(im.env.store, claim, reason);
      return { bookId, path: placed, warning: `${ORIGINAL_LEFT_NOTE}: ${reason}` };
    }
  }
  await forgetClaimed(im.env.store, claim);
  await removeBookdropCover(im.env.dataDir, row.id);
  if (im.env.bookdropDir) await removeEmptyFolders(resolve(im.env.bookdropDir), dirname(source)).catch(() => undefined);
  return { bookId, path: placed };
}

/**
 * Takes the row for this import, in this process's name; false when it is not waiting for review (imported, or being
 * imported elsewhere).
 */
async function claim(store: Store, id: number): Promise<Claim | undefined> {
  // Registered first, so that every process sharing the catalog sees the claim's owner running.
  const registration = await store.liveness.register();
  const me = JSON.stringify(registration.owner);
  const res = await store.db
    .updateTable('bookdrop_file')
    .set({ status: FINALIZED, updated_at: nowIso(), ...NO_IMPORT, import_owner: me })
    .where('id', '=', id)
    .where('status', '=', PENDING)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) return undefined;
  activeBatches.add(importKey(id));
  return { id, me, registration };
}

/** An update of a claim's row, applied only while the claim is still this process's own. */
function updateClaimed(store: Store, claim: Claim) {
  return store.db.updateTable('bookdrop_file').where('id', '=', claim.id).where('import_owner', '=', claim.me);
}

async function traceImport(store: Store, claim: Claim, trace: { import_partial_path: string } | { import_target_path: string }): Promise<void> {
  ensureHeld(claim.registration, WORK);
  const res = await updateClaimed(store, claim).set(trace).executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) throw new RegistrationLost(WORK);
}

/** Inside the book's catalog transaction: it commits only while the claim is still this process's own. */
async function stillClaimed(store: Store, exec: SqlExec, claim: Claim): Promise<void> {
  ensureHeld(claim.registration, WORK);
  const row = await exec.get(`select import_owner from bookdrop_file where id = ?${store.dialect.forUpdate}`, [claim.id]);
  if (row?.import_owner !== claim.me) throw new RegistrationLost(WORK);
}

async function forgetClaimed(store: Store, claim: Claim): Promise<void> {
  await store.db.deleteFrom('bookdrop_file').where('id', '=', claim.id).where('import_owner', '=', claim.me).execute();
}

async function markOriginalLeft(store: Store, claim: Claim, reason: string): Promise<void> {
  await updateClaimed(store, claim).set({ ...NO_IMPORT, original_left: reason, updated_at: nowIso() }).execute();
}

async function release(store: Store, claim: Claim): Promise<void> {
  await updateClaimed(store, claim).set({ status: PENDING, updated_at: nowIso(), ...NO_IMPORT }).execute();
}

export async function finalizeImport(env: FinalizeEnv, request: FinalizeRequest, options: FinalizeOptions = {}): Promise<FinalizeOutcome> {
  const processedAt = nowIso();
  const ids = await targetIds(env.store, request);
  const overrides = new Map<number, FinalizeFile>();
  for (const f of request.files ?? []) if (typeof f.fileId === 'number') overrides.set(f.fileId, f);
  const libraries = new Map((await listLibraries(env.store.db)).map((l) => [l.id, l]));
  const coversRoot = join(env.dataDir, 'covers');
  const outcome: FinalizeOutcome = { totalFiles: 0, successfullyImported: 0, failed: 0, processedAt, results: [] };
  if (ids.length === 0) return outcome;

  const im: Importer = {
    env,
    fs: options.fs ?? nodeImportFs,
    runner: createTaskRunner(options.workers ?? 0),
    stagingDir: await createStagingDir(coversRoot, env.store.liveness),
    coversRoot,
    patterns: new Map(),
    beforeCommit: options.beforeCommit,
  };
  try {
    for (let i = 0; i < ids.length; i += 100) {
      const chunk = ids.slice(i, i + 100);
      const rows = new Map((await rowsByIds(env.store.db, chunk)).map((r) => [r.id, r]));
      const results: FileOutcome[] = [];
      // A few files in flight: one file's flush waits on the disk while the next one is read.
      await forEachLimited(chunk.entries(), options.concurrency ?? 4, ([, id]) => finalizeOne(im, id, rows.get(id), overrides.get(id), request, libraries), ([at], result) => {
        results[at] = result;
        outcome.totalFiles++;
        if (result.success) outcome.successfullyImported++;
        else outcome.failed++;
        options.onProgress?.(outcome.totalFiles, ids.length, result);
      });
      outcome.results.push(...results);
    }
  } finally {
    await im.runner.close();
    await rm(im.stagingDir, { recursive: true, force: true });
    await emitEvent(env.store.db, { kind: 'bookdrop-changed' });
  }
  return outcome;
}

async function finalizeOne(im: Importer, id: number, row: BookdropRow | undefined, override: FinalizeFile | undefined, request: FinalizeRequest, libraries: Map<number, Library>): Promise<FileOutcome> {
  if (!row) return { fileId: id, fileName: null, success: false, message: `Bookdrop file not found with ID: ${id}` };
  const fail = (message: string): FileOutcome => ({ fileId: id, fileName: row.file_name, success: false, message });
  let target: Target;
  try {
    target = resolveTarget(row, override, request, libraries);
  } catch (error) {
    if (error instanceof FileFailure) return fail(error.message);
    throw error;
  }
  const claimed = await claim(im.env.store, id);
  if (!claimed) return fail('The file is already imported or being imported');
  try {
    return await importClaimed(im, row, target, claimed, fail);
  } finally {
    activeBatches.delete(importKey(id));
  }
}

async function importClaimed(im: Importer, row: BookdropRow, target: Target, claimed: Claim, fail: (message: string) => FileOutcome): Promise<FileOutcome> {
  const id = row.id;
  try {
    const done = await importOne(im, row, target, claimed);
    return {
      fileId: id,
      fileName: basename(done.path),
      success: true,
      message: `File successfully imported into the '${target.library.name}' library from the Bookdrop folder`,
      bookId: done.bookId,
      path: done.path,
      ...(done.warning ? { warning: done.warning } : {}),
    };
  } catch (error) {
    if (error instanceof SourceMissing) {
      await forgetClaimed(im.env.store, claimed);
      await removeBookdropCover(im.env.dataDir, id);
      return fail('Source file does not exist in bookdrop folder');
    }
    if (error instanceof RegistrationLost) return fail(`Import interrupted: ${error.message}`);
    await release(im.env.store, claimed);
    if (error instanceof ImportStepError) return fail(error.message);
    return fail(`Import failed: ${(error as Error).message}`);
  }
}

/** The wire shape (BookdropFinalizeResult). */
export function finalizeResultJson(outcome: FinalizeOutcome): Record<string, unknown> {
  return {
    totalFiles: outcome.totalFiles,
    successfullyImported: outcome.successfullyImported,
    failed: outcome.failed,
    processedAt: outcome.processedAt,
    results: outcome.results.map((r) => ({ fileName: r.fileName, success: r.success, message: r.warning ? `${r.message} (${r.warning})` : r.message })),
  };
}
