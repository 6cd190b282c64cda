// A book's additional files (AdditionalFileController): an uploaded file joins the book, as another format of it
// (`isBook`) or as a companion file (a map, a cover scan), in the book's folder; deleting one moves it to the library's
// trash. The book's primary file is never touched here.
import { randomBytes } from 'node:crypto';
import { link, lstat, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CodedError } from '../coded-error.ts';
import { placeReceived, UploadError, type ReceivedFile } from '../bookdrop/upload.ts';
import { nodeImportFs, splitRelativePath } from '../bookdrop/safe-copy.ts';
import { FormatError } from '../formats/errors.ts';
import { fileFingerprints } from '../formats/hash.ts';
import { formatOf } from '../formats/index.ts';
import type { BookFileType, Extraction } from '../formats/types.ts';
import { findLibrary } from '../libraries/libraries.ts';
import { bookFacts, movePattern } from '../moves/plan.ts';
import { renderPath, truncateFileName } from '../naming/render.ts';
import type { Db, Store } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { bookFiles, pathWithin } from './file-locations.ts';
import { fileRowValues } from './file-record.ts';
import { moveToTrash } from './trash.ts';
import { emitEvent } from '../events/live-events.ts';

export type AdditionalFileErrorCode =
  | 'BOOK_NOT_FOUND'
  | 'FILE_NOT_FOUND'
  | 'PRIMARY'
  | 'BAD_NAME'
  | 'EMPTY'
  | 'UNSUPPORTED'
  | 'UNREADABLE'
  | 'DUPLICATE'
  | 'EXISTS'
  | 'INVALID_PATH'
  | 'NO_LIBRARY_PATH'
  | 'ROOT_UNAVAILABLE'
  | 'TRASH_FAILED';

export class AdditionalFileError extends CodedError<AdditionalFileErrorCode> {}

export interface LibraryRoot {
  id: number;
  path: string;
}

interface BookPlace {
  libraryId: number;
  /** The book has no file to stand beside (a physical book, or one whose files are all gone from the catalog). */
  fileless: boolean;
  root: LibraryRoot;
  /** Folder of the primary file, when there is one. */
  subPath: string;
  bookLibraryPathId: number | null;
}

/** Where the book's files live: beside its primary file, or (fileless) in its own library folder, else the library's first. */
async function bookPlace(db: Db, bookId: number): Promise<BookPlace> {
  const book = await db.selectFrom('book').select(['library_id', 'library_path_id', 'is_physical']).where('id', '=', bookId).executeTakeFirst();
  if (!book) throw new AdditionalFileError('BOOK_NOT_FOUND', `Book not found with id: ${bookId}`);
  const files = await bookFiles(db, bookId);
  const primary = files?.primary;
  const primaryRow = primary ? await db.selectFrom('book_file').select(['library_path_id', 'file_sub_path']).where('id', '=', primary.id).executeTakeFirst() : undefined;
  const fileless = book.is_physical === 1 || !primaryRow;
  const rootId = fileless ? book.library_path_id : (primaryRow?.library_path_id ?? book.library_path_id);
  let root = rootId === null ? undefined : await db.selectFrom('library_path').select(['id', 'path']).where('id', '=', rootId).where('library_id', '=', book.library_id).executeTakeFirst();
  root ??= await db.selectFrom('library_path').select(['id', 'path']).where('library_id', '=', book.library_id).orderBy('id').executeTakeFirst();
  if (!root) throw new AdditionalFileError('NO_LIBRARY_PATH', 'A conflict occurred.');
  return { libraryId: book.library_id, fileless, root, subPath: fileless ? '' : (primaryRow?.file_sub_path ?? ''), bookLibraryPathId: book.library_path_id };
}

/** The folder an upload for this book is streamed into: its library folder, the file system it ends up on. */
export async function uploadRootOf(db: Db, bookId: number): Promise<LibraryRoot> {
  const { root } = await bookPlace(db, bookId);
  // An unmounted share must not get a new, empty folder in its place.
  if (!(await stat(root.path).catch(() => undefined))?.isDirectory()) throw new AdditionalFileError('ROOT_UNAVAILABLE', `Library path is not accessible: ${root.path}`);
  return root;
}

/** The name a client gave, as a plain visible file name (never a path), cut to 245 bytes with its extension kept. */
export function additionalFileName(given: string | undefined): string {
  const name = (given ?? '').replace(/\\/g, '/').split('/').pop() ?? '';
  if (name.trim() === '' || name === '.' || name === '..' || name.startsWith('.') || name.includes('\0')) throw new AdditionalFileError('BAD_NAME', 'Invalid filename');
  return truncateFileName(name);
}

/** The part of a file name an extractor recognises its format by (`fb2.zip` stays whole). */
export function formatSuffix(fileName: string): string {
  const lower = fileName.toLowerCase();
  if (lower.endsWith('.fb2.zip')) return 'fb2.zip';
  const dot = lower.lastIndexOf('.');
  return dot > 0 ? lower.slice(dot + 1) : '';
}

/**
 * Reads a book file that has a meaningless (hidden, temporary) name as the format `fileName` says: through a second,
 * hidden name with the right extension in the same folder, removed afterwards. FormatError when it does not parse.
 */
export async function extractAs(path: string, fileName: string): Promise<Extraction> {
  const format = formatOf(fileName);
  if (!format) throw new FormatError('UNSUPPORTED', `unsupported file extension: ${formatSuffix(fileName)}`);
  const named = join(dirname(path), `.bindery-check-${randomBytes(6).toString('hex')}.${formatSuffix(fileName)}`);
  await link(path, named);
  try {
    return await format.extract(named, { skipCover: true });
  } finally {
    await unlink(named).catch(() => undefined);
  }
}

export interface AdditionalUpload {
  /** The name the client gave the file. */
  fileName: string;
  isBook: boolean;
  /** For a companion file: what it is, if the client said. A book format's type comes from its extension. */
  bookType: BookFileType | null;
  description: string | null;
}

interface Placement {
  root: LibraryRoot;
  subPath: string;
  fileName: string;
  bookType: BookFileType | null;
}

/** Grimmory's naming: a book format is named by the library's pattern; a companion file keeps its own name. */
async function placementOf(db: Db, bookId: number, place: BookPlace, name: string, upload: AdditionalUpload): Promise<Placement> {
  const format = formatOf(name);
  if (!place.fileless && !upload.isBook) return { root: place.root, subPath: place.subPath, fileName: name, bookType: upload.bookType };
  if (!format) throw new AdditionalFileError('UNSUPPORTED', `Invalid file format: Unsupported book file extension: ${formatSuffix(name)}`);
  const library = await findLibrary(db, place.libraryId);
  const rendered = renderPath(await movePattern(db, library), { ...(await bookFacts(db, bookId)), fileName: name });
  const where = splitRelativePath(rendered);
  if (!where) throw new AdditionalFileError('INVALID_PATH', 'Invalid upload target path');
  // Beside the primary file: only the pattern's file name counts; a fileless book gets the pattern's whole path.
  return place.fileless ? { root: place.root, ...where, bookType: format.bookType } : { root: place.root, subPath: place.subPath, fileName: where.fileName, bookType: format.bookType };
}

function catalogHas(db: Db, rootId: number, subPath: string, fileName: string): Promise<boolean> {
  return db
    .selectFrom('book_file')
    .select('id')
    .where('library_path_id', '=', rootId)
    .where('file_sub_path', '=', subPath)
    .where('file_name', '=', fileName)
    .executeTakeFirst()
    .then((row) => row !== undefined);
}

/**
 * Adds an uploaded file (already streamed to `received`, in the book's library folder) to the book: named, checked
 * (a book format must parse and must not duplicate another book file's content), placed without replacing anything,
 * and recorded. Returns the new book_file id. The received file is gone afterwards, whatever happened.
 */
export async function addAdditionalFile(store: Store, bookId: number, received: ReceivedFile, upload: AdditionalUpload): Promise<number> {
  const { db } = store;
  let placedPath: string | undefined;
  try {
    const name = additionalFileName(upload.fileName);
    if (received.size === 0) throw new AdditionalFileError('EMPTY', 'Uploaded file is missing.');
    const place = await bookPlace(db, bookId);
    const target = await placementOf(db, bookId, place, name, upload);
    const prints = await fileFingerprints(received.path);
    if (upload.isBook) {
      const twin = await db.selectFrom('book_file').select('id').where('is_book', '=', 1).where('current_hash', '=', prints.partialMd5).executeTakeFirst();
      if (twin) throw new AdditionalFileError('DUPLICATE', 'Alternative format file already exists with same content');
    }
    let extraction: Extraction | undefined;
    if (upload.isBook) {
      try {
        extraction = await extractAs(received.path, target.fileName);
      } catch (error) {
        if (error instanceof FormatError) throw new AdditionalFileError('UNREADABLE', `Invalid file format: ${error.message}`);
        throw error;
      }
    }
    if (await catalogHas(db, target.root.id, target.subPath, target.fileName)) throw new AdditionalFileError('EXISTS', 'File already exists');
    const full = pathWithin(target.root.path, target.subPath, target.fileName);
    if (!full) throw new AdditionalFileError('INVALID_PATH', 'Invalid upload target path');
    try {
      placedPath = await placeReceived(nodeImportFs, received, dirname(full), target.fileName, async () => prints.contentHash);
    } catch (error) {
      if (error instanceof UploadError && error.code === 'EXISTS') throw new AdditionalFileError('EXISTS', 'File already exists');
      throw error;
    }
    const info = await stat(placedPath);
    const fingerprint = { sizeBytes: info.size, mtimeMs: info.mtimeMs, partialMd5: prints.partialMd5, contentHash: prints.contentHash };
    const location = { library_path_id: target.root.id, file_sub_path: target.subPath, file_name: target.fileName };
    const values = extraction
      ? { ...fileRowValues({ libraryPathId: target.root.id, subPath: target.subPath, fileName: target.fileName, folderBased: false, extraction, ...fingerprint }), book_type: target.bookType }
      : {
          ...location,
          size_bytes: info.size,
          file_size_kb: Math.round(info.size / 1024),
          mtime_ms: Math.trunc(info.mtimeMs),
          current_hash: prints.partialMd5,
          content_hash: prints.contentHash,
          is_book: 0,
          book_type: target.bookType,
        };
    const fileId = await db.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('book_file')
        .values({ ...values, book_id: bookId, is_book: upload.isBook ? 1 : 0, initial_hash: prints.partialMd5, description: upload.description, added_on: nowIso() })
        .returning('id')
        .executeTakeFirstOrThrow();
      if (place.bookLibraryPathId === null) await trx.updateTable('book').set({ library_path_id: target.root.id }).where('id', '=', bookId).execute();
      await emitEvent(trx, { kind: 'books-changed', bookIds: [bookId] });
      return row.id;
    });
    placedPath = undefined;
    return fileId;
  } finally {
    await unlink(received.path).catch(() => undefined);
    // Placed but not recorded: the file is ours (the name was free), so it goes again.
    if (placedPath) await unlink(placedPath).catch(() => undefined);
  }
}

/**
 * Deletes one of the book's files that is not its primary file: the file (or audiobook folder) moves to the
 * library's trash, then its catalog row goes. When the move fails nothing is changed.
 */
export async function removeAdditionalFile(db: Db, bookId: number, fileId: number): Promise<{ trashedTo: string | undefined }> {
  const row = await db
    .selectFrom('book_file')
    .leftJoin('library_path', 'library_path.id', 'book_file.library_path_id')
    .select(['book_file.id', 'book_file.file_sub_path', 'book_file.file_name', 'library_path.path as root'])
    .where('book_file.id', '=', fileId)
    .where('book_file.book_id', '=', bookId)
    .executeTakeFirst();
  if (!row) throw new AdditionalFileError('FILE_NOT_FOUND', `Additional file not found with id: ${fileId}`);
  const files = await bookFiles(db, bookId);
  if (files?.primary?.id === fileId) throw new AdditionalFileError('PRIMARY', `Primary book file cannot be processed as an additional file: ${fileId}`);
  let trashedTo: string | undefined;
  const source = row.root === null ? undefined : pathWithin(row.root, row.file_sub_path, row.file_name);
  if (row.root !== null && source && (await lstat(source).catch(() => undefined))) {
    try {
      trashedTo = await moveToTrash(row.root, row.file_sub_path, row.file_name);
    } catch (error) {
      throw new AdditionalFileError('TRASH_FAILED', `Failed to move ${row.file_name} to the library trash: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }
  await db.deleteFrom('book_file').where('id', '=', fileId).execute();
  await emitEvent(db, { kind: 'books-changed', bookIds: [bookId] });
  return { trashedTo };
}
