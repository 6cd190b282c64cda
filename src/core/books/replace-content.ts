// Replacing a book file's bytes (BookController.replaceBookContent; the PDF reader saves annotations into the file
// this way). Grimmory copies the request over the file; here the new bytes go to a hidden file beside it, are flushed
// and must read as a book of the same format before one rename puts them in place. The old bytes stay in the
// library's trash, and the catalog gets the new size, time and hashes so the next scan does not re-read the file.
import { randomBytes } from 'node:crypto';
import { chmod, lstat, open, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { CodedError } from '../coded-error.ts';
import { oneWriteAtATime, syncDirectory } from '../file-writes.ts';
import { FormatError } from '../formats/errors.ts';
import { fileFingerprints } from '../formats/hash.ts';
import { formatOf } from '../formats/index.ts';
import type { Extraction } from '../formats/types.ts';
import type { Store } from '../store/store.ts';
import { formatSuffix } from './additional-files.ts';
import { pathWithin } from './file-locations.ts';
import { keepCopyInTrash, trashStamp } from './trash.ts';
import { emitEvent } from '../events/live-events.ts';

export type ReplaceContentErrorCode = 'NOT_FOUND' | 'NOT_A_FILE' | 'UNSUPPORTED' | 'EMPTY' | 'TOO_LARGE' | 'UNREADABLE' | 'CONFLICT';

export class ReplaceContentError extends CodedError<ReplaceContentErrorCode> {}

export interface ReplaceOptions {
  /** The smallest size limit; a file may always be replaced by up to twice its current size. */
  minLimitBytes: number;
  /** The request's Content-Length, when it declared one: refused at once when over the limit. */
  declaredBytes?: number;
}

export interface ReplaceResult {
  sizeBytes: number;
  /** Where the old bytes are kept. */
  keptAt: string;
}

/**
 * Streams `body` into a new file at `path` (which must not exist), at most `maxBytes`, flushed; returns its size. The
 * request is never destroyed here (that would take the connection, and the error answer, with it): reading stops.
 */
async function receive(body: Readable, path: string, maxBytes: number, limitMb: number): Promise<number> {
  let size = 0;
  const handle = await open(path, 'wx');
  try {
    for await (const chunk of body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer | string>) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += bytes.length;
      if (size > maxBytes) throw new ReplaceContentError('TOO_LARGE', `File size exceeds the limit: ${limitMb} MB`);
      await handle.write(bytes);
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  return size;
}

/** The file-level columns a replacement changes: size, time, hashes, and what the format reports about the file. */
function fileColumns(info: { size: number; mtimeMs: number }, prints: { partialMd5: string; contentHash: string }, extraction: Extraction) {
  return {
    size_bytes: info.size,
    file_size_kb: Math.round(info.size / 1024),
    mtime_ms: Math.trunc(info.mtimeMs),
    current_hash: prints.partialMd5,
    content_hash: prints.contentHash,
    archive_type: extraction.archiveType ?? null,
    is_fixed_layout: extraction.fixedLayout ? 1 : 0,
    page_count: extraction.metadata.pageCount ?? null,
  };
}

/** Replaces the content of one book file (not a folder audiobook) with `body`. */
export async function replaceBookFileContent(store: Store, fileId: number, body: Readable, options: ReplaceOptions): Promise<ReplaceResult> {
  const row = await store.db
    .selectFrom('book_file')
    .leftJoin('library_path', 'library_path.id', 'book_file.library_path_id')
    .select(['book_file.book_id', 'book_file.file_sub_path', 'book_file.file_name', 'book_file.book_type', 'book_file.is_folder_based', 'library_path.path as root'])
    .where('book_file.id', '=', fileId)
    .executeTakeFirst();
  const path = row?.root ? pathWithin(row.root, row.file_sub_path, row.file_name) : undefined;
  if (!row || !row.root || !path) throw new ReplaceContentError('NOT_FOUND', `File not found: ${row?.file_name ?? fileId}`);
  const { root, file_sub_path: subPath, file_name: fileName } = row;
  const before = await lstat(path).catch(() => undefined);
  if (!before) throw new ReplaceContentError('NOT_FOUND', `File not found: ${fileName}`);
  if (row.is_folder_based === 1 || !before.isFile()) throw new ReplaceContentError('NOT_A_FILE', 'The content of a folder audiobook cannot be replaced');
  const format = formatOf(fileName);
  if (!format) throw new ReplaceContentError('UNSUPPORTED', `Invalid file format: ${fileName} is not a book file`);
  const maxBytes = Math.max(options.minLimitBytes, before.size * 2);
  const limitMb = Math.ceil(maxBytes / (1024 * 1024));
  if (options.declaredBytes !== undefined && options.declaredBytes > maxBytes) throw new ReplaceContentError('TOO_LARGE', `File size exceeds the limit: ${limitMb} MB`);

  return oneWriteAtATime(path, async () => {
    // Hidden (scans skip it), in the same folder (the rename is atomic), with the extension extractors go by.
    const temp = join(dirname(path), `.bindery-replace-${randomBytes(6).toString('hex')}.${formatSuffix(fileName)}`);
    let keptAt: string | undefined;
    let renamed = false;
    try {
      const size = await receive(body, temp, maxBytes, limitMb);
      if (size === 0) throw new ReplaceContentError('EMPTY', 'The new content is empty');
      let extraction: Extraction;
      try {
        extraction = await format.extract(temp, { skipCover: true });
      } catch (error) {
        if (error instanceof FormatError) throw new ReplaceContentError('UNREADABLE', `Invalid file format: the new content is not a readable ${format.bookType} file (${error.message})`);
        throw error;
      }
      if (row.book_type && extraction.bookType !== row.book_type) throw new ReplaceContentError('UNREADABLE', `Invalid file format: the new content is ${extraction.bookType}, not ${row.book_type}`);
      await chmod(temp, before.mode & 0o7777);
      const prints = await fileFingerprints(temp);
      const now = await stat(path);
      if (now.size !== before.size || now.mtimeMs !== before.mtimeMs || now.ino !== before.ino) {
        throw new ReplaceContentError('CONFLICT', 'The file changed on disk while its new content was being received; nothing was replaced');
      }
      keptAt = await keepCopyInTrash(root, subPath, fileName, trashStamp());
      await rename(temp, path);
      renamed = true;
      await syncDirectory(dirname(path));
      const info = await stat(path);
      await store.db.updateTable('book_file').set(fileColumns(info, prints, extraction)).where('id', '=', fileId).execute();
      await emitEvent(store.db, { kind: 'books-changed', bookIds: [row.book_id] });
      return { sizeBytes: info.size, keptAt };
    } catch (error) {
      if (!renamed) {
        await unlink(temp).catch(() => undefined);
        // The kept copy is the file as it still is: not needed when nothing was replaced.
        if (keptAt) await unlink(keptAt).catch(() => undefined);
      }
      body.resume();
      throw error;
    }
  });
}
