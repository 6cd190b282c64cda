// Uploads: a file streamed to disk under a hidden partial name (never held in memory, cut off at the size limit),
// then given its place, in the bookdrop folder (waiting for review) or in a library (named by the upload pattern and
// recorded as a book at once). An existing file is never replaced.
import { createWriteStream } from 'node:fs';
import { mkdir, open, rm, unlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CodedError } from '../coded-error.ts';
import { DEFAULT_COVER_CROPPING } from '../covers/cover-images.ts';
import { createStagingDir } from '../covers/cover-store.ts';
import { formatOf } from '../formats/index.ts';
import { findLibrary, LibraryError } from '../libraries/libraries.ts';
import { errorCode } from '../moves/fs.ts';
import { movePattern } from '../moves/plan.ts';
import { renderPath, truncateFileName } from '../naming/render.ts';
import { readSetting } from '../settings/app-settings.ts';
import { createTaskRunner } from '../scan/task-runner.ts';
import type { Store } from '../store/store.ts';
import { namingFacts } from './bookdrop-metadata.ts';
import { partialName } from './bookdrop-paths.ts';
import { ensureBookdropDir, intakeFile, type BookdropEnv } from './intake.ts';
import { catalogHasFile, recordImportedFile } from './record-book.ts';
import { copyVerified, ImportStepError, nodeImportFs, splitRelativePath, type ImportFs } from './safe-copy.ts';

export type UploadErrorCode = 'EMPTY' | 'TOO_LARGE' | 'BAD_NAME' | 'UNSUPPORTED' | 'EXISTS' | 'LIBRARY_NOT_FOUND' | 'INVALID_PATH' | 'FORMAT_NOT_ALLOWED' | 'UNREADABLE';

export class UploadError extends CodedError<UploadErrorCode> {}

/** The `max_file_upload_size_in_mb` setting (100 unless changed). */
export async function maxUploadMb(store: Store): Promise<number> {
  const value = await readSetting(store.db, 'MAX_FILE_UPLOAD_SIZE_IN_MB');
  return typeof value === 'number' && value > 0 ? value : 100;
}

export function tooLarge(limitMb: number): UploadError {
  return new UploadError('TOO_LARGE', `File size exceeds the limit: ${limitMb} MB`);
}

/** The name a client gave, reduced to a plain file name (never a path), cut to 245 bytes with its extension kept. */
export function uploadFileName(given: string | undefined): string {
  const name = basename((given ?? '').replace(/\\/g, '/'));
  if (name === '' || name === '.' || name === '..' || name.includes('\0')) throw new UploadError('BAD_NAME', 'Invalid filename');
  if (!formatOf(name) || name.startsWith('.')) throw new UploadError('UNSUPPORTED', 'Invalid file format: Unsupported file extension');
  return truncateFileName(name);
}

export interface ReceivedFile {
  path: string;
  size: number;
  /** The mark of the receiving process (work-files.ts), which its partial names carry. */
  mark: string;
}

/**
 * Streams `stream` to a hidden partial file in `dir` and flushes it. More than `maxBytes` stops the upload (the
 * partial file is removed) with TOO_LARGE; so does the stream reporting its own limit (`truncated`).
 */
export async function receiveUpload(stream: Readable & { truncated?: boolean }, dir: string, maxBytes: number, limitMb: number, mark: string): Promise<ReceivedFile> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, partialName('upload', mark));
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > maxBytes) done(tooLarge(limitMb));
      else done(null, chunk);
    },
  });
  try {
    await pipeline(stream, counter, createWriteStream(path, { flags: 'wx' }));
    if (stream.truncated) throw tooLarge(limitMb);
    const handle = await open(path, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    await rm(path, { force: true });
    if (error instanceof UploadError) throw error;
    // The stream's own size limit (multipart) surfaces as an error with a 413-ish code: the documented 400 instead.
    if (/too large|limit/i.test((error as Error).message) && size >= maxBytes) throw tooLarge(limitMb);
    throw error;
  }
  return { path, size, mark };
}

/** Gives a received file its name in `dir`: a link when on the same filesystem, else a verified copy. Never replaces. */
export async function placeReceived(fs: ImportFs, received: ReceivedFile, dir: string, name: string, hash: () => Promise<string>): Promise<string> {
  await fs.mkdirp(dir);
  const target = join(dir, name);
  let from = received.path;
  try {
    await fs.link(from, target);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'EEXIST') throw new UploadError('EXISTS', 'File already exists');
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw error;
    from = await copyVerified(fs, received.path, dir, { size: received.size, hash: await hash() }, join(dir, partialName('copy', received.mark)));
    try {
      await fs.link(from, target);
    } catch (linkError) {
      if (errorCode(linkError) === 'EEXIST') throw new UploadError('EXISTS', 'File already exists');
      throw linkError;
    } finally {
      await fs.unlink(from).catch(() => undefined);
    }
  }
  await fs.fsyncDir(dir);
  return target;
}

/**
 * An upload into the bookdrop folder: placed under its own name (409 when taken) and taken into the review queue
 * at once. The received file must be in the bookdrop folder (or on its filesystem).
 */
export async function placeBookdropUpload(env: BookdropEnv, received: ReceivedFile, givenName: string, fs: ImportFs = nodeImportFs): Promise<{ path: string; id?: number }> {
  try {
    const name = uploadFileName(givenName);
    if (received.size === 0) throw new UploadError('EMPTY', 'Uploaded file is missing.');
    await ensureBookdropDir(env.bookdropDir);
    const { contentHash } = await import('../formats/hash.ts');
    const path = await placeReceived(fs, received, env.bookdropDir, name, () => contentHash(received.path));
    const outcome = await intakeFile(env, path, { settleMs: 0 });
    return { path, ...(outcome.kind === 'added' ? { id: outcome.id } : {}) };
  } finally {
    await unlink(received.path).catch(() => undefined);
  }
}

export interface LibraryUpload {
  libraryId: number;
  pathId: number;
  fileName: string;
}

/** Where an upload for this library folder should be streamed: the folder itself (same filesystem), when it exists. */
export async function libraryUploadDir(store: Store, libraryId: number | undefined, pathId: number | undefined, fallback: string): Promise<string> {
  if (libraryId === undefined || pathId === undefined) return fallback;
  const row = await store.db.selectFrom('library_path').select('path').where('id', '=', pathId).where('library_id', '=', libraryId).executeTakeFirst();
  return row?.path ?? fallback;
}

/**
 * An upload into a library folder: read, named by the library's pattern (else the upload pattern), placed (409 when
 * the name is taken) and recorded as a new book.
 */
export async function placeLibraryUpload(env: { store: Store; dataDir: string }, received: ReceivedFile, upload: LibraryUpload, fs: ImportFs = nodeImportFs): Promise<{ bookId: number; path: string }> {
  const coversRoot = join(env.dataDir, 'covers');
  let staging: string | undefined;
  try {
    const name = uploadFileName(upload.fileName);
    if (received.size === 0) throw new UploadError('EMPTY', 'Uploaded file is missing.');
    let library;
    try {
      library = await findLibrary(env.store.db, upload.libraryId);
    } catch (error) {
      if (error instanceof LibraryError) throw new UploadError('LIBRARY_NOT_FOUND', `Library not found with ID: ${upload.libraryId}`);
      throw error;
    }
    const root = library.paths.find((p) => p.id === upload.pathId);
    if (!root) throw new UploadError('INVALID_PATH', 'Invalid library path');
    const format = formatOf(name);
    if (format && library.allowedFormats && library.allowedFormats.length > 0 && !library.allowedFormats.includes(format.bookType)) {
      throw new UploadError('FORMAT_NOT_ALLOWED', `File format '${format.bookType}' is not allowed in library '${library.name}'`);
    }

    staging = await createStagingDir(coversRoot, env.store.liveness);
    // The partial file has a hidden name that says nothing about the format; parse it under its real name.
    const named = join(staging, name);
    await fs.link(received.path, named).catch(async () => {
      const { copyFile } = await import('node:fs/promises');
      await copyFile(received.path, named);
    });
    const runner = createTaskRunner(0);
    const parsed = await runner.parse({ absolutePath: named, cropping: DEFAULT_COVER_CROPPING, stagingDir: staging });
    if (parsed.kind !== 'parsed') throw new UploadError('UNREADABLE', `Invalid file format: ${parsed.kind === 'failed' ? parsed.reason : 'unreadable'}`);

    const where = splitRelativePath(renderPath(await movePattern(env.store.db, library), namingFacts(parsed.extraction.metadata, name)));
    if (!where) throw new UploadError('BAD_NAME', 'Invalid upload target path');
    if (await catalogHasFile(env.store, root.id, where.subPath, where.fileName)) throw new UploadError('EXISTS', 'File already exists');
    const dir = join(root.path, where.subPath);
    const path = await placeReceived(fs, received, dir, where.fileName, async () => parsed.contentHash);
    try {
      const { bookId } = await recordImportedFile(env.store, {
        library,
        root,
        subPath: where.subPath,
        fileName: where.fileName,
        path,
        parsed,
        metadata: parsed.extraction.metadata,
        given: null,
        coversRoot,
      });
      return { bookId, path };
    } catch (error) {
      if (!(await catalogHasFile(env.store, root.id, where.subPath, where.fileName))) await fs.unlink(path).catch(() => undefined);
      throw new ImportStepError('record', (error as Error).message, { cause: error });
    }
  } finally {
    await unlink(received.path).catch(() => undefined);
    if (staging) await rm(staging, { recursive: true, force: true });
  }
}
