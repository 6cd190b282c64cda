// Recording a file just placed in a library as a new book, with the scanner's own catalog writes.
import { stat } from 'node:fs/promises';
import { removeCovers } from '../covers/cover-store.ts';
import type { FileRecord } from '../books/file-record.ts';
import { nameIds } from '../books/names.ts';
import { lockKeyForTransaction, libraryPathKey } from '../store/key-locks.ts';
import type { SqlExec, SqlValue } from '../store/sql-exec.ts';
import type { Extraction, ExtractedMetadata } from '../formats/types.ts';
import type { Library, LibraryPath } from '../libraries/libraries.ts';
import { createBook, type BookContext } from '../scan/catalog-updates.ts';
import type { ParseResult } from '../scan/parse-task.ts';
import type { Store } from '../store/store.ts';
import { EXTRA_COLUMNS, type DropMetadata } from './bookdrop-metadata.ts';
import { emitEvent } from '../events/live-events.ts';

export type ParsedFile = Extract<ParseResult, { kind: 'parsed' }>;

export interface RecordInput {
  library: Pick<Library, 'id' | 'formatPriority'>;
  root: LibraryPath;
  subPath: string;
  fileName: string;
  /** Where the file is now (root/subPath/fileName). */
  path: string;
  parsed: ParsedFile;
  /** The metadata the book gets: the file's own with what the user gave laid over it. */
  metadata: ExtractedMetadata;
  /** What the user (or a provider) gave, for the columns the file cannot have (ratings, other ids, moods). */
  given: DropMetadata | null;
  coversRoot: string;
  /** Runs inside the transaction just before it commits; a throw rolls the whole record back (tests). */
  beforeCommit?: () => void | Promise<void>;
  /** Runs inside the transaction last of all: a throw rolls the record back (an import whose claim was taken over). */
  fence?: (exec: SqlExec) => Promise<void>;
}

async function writeGivenExtras(exec: SqlExec, bookId: number, given: DropMetadata | null): Promise<void> {
  if (!given) return;
  const sets: string[] = [];
  const values: SqlValue[] = [];
  for (const [column, field] of EXTRA_COLUMNS) {
    const value = given[field];
    if (value === undefined) continue;
    sets.push(`${column} = ?`);
    values.push(value as SqlValue);
  }
  if (sets.length > 0) await exec.run(`update book_metadata set ${sets.join(', ')} where book_id = ?`, [...values, bookId]);
  if (given.moods) {
    for (const moodId of await nameIds(exec, 'mood', given.moods)) await exec.run('insert into book_metadata_mood_mapping (book_id, mood_id) values (?, ?) on conflict do nothing', [bookId, moodId]);
  }
}

/** Whether the catalog has a file at this place (present or missing). */
export async function catalogHasFile(store: Store, rootId: number, subPath: string, fileName: string): Promise<boolean> {
  return (await store.exec.get('select 1 as hit from book_file where library_path_id = ? and file_sub_path = ? and file_name = ?', [rootId, subPath, fileName])) !== undefined;
}

/**
 * Creates the book in one transaction. When a library scan got there first and the catalog already has the file,
 * that book is the result. Returns the book id; on failure nothing of it is left (cover files included).
 */
export async function recordImportedFile(store: Store, input: RecordInput): Promise<{ bookId: number; created: boolean }> {
  const info = await stat(input.path);
  const { extraction, cover, partialMd5, contentHash } = input.parsed;
  const record: FileRecord = {
    libraryPathId: input.root.id,
    subPath: input.subPath,
    fileName: input.fileName,
    sizeBytes: info.size,
    mtimeMs: info.mtimeMs,
    partialMd5,
    contentHash,
    folderBased: false,
    extraction: { ...(extraction as Extraction), metadata: input.metadata },
  };
  const ctx: BookContext = { libraryId: input.library.id, formatPriority: input.library.formatPriority, coversRoot: input.coversRoot };
  let created: number | undefined;
  let existing: number | undefined;
  try {
    await store.write(async (scope) => {
      const { exec } = scope;
      // Taken before looking, so a scan of the library (or another replica's import) cannot catalogue the file in between.
      await lockKeyForTransaction(scope.db, libraryPathKey(input.root.id));
      const row = await exec.get('select book_id from book_file where library_path_id = ? and file_sub_path = ? and file_name = ?', [input.root.id, input.subPath, input.fileName]);
      if (row) {
        existing = row.book_id as number;
        return;
      }
      created = await createBook(exec, ctx, record, cover);
      await writeGivenExtras(exec, created, input.given);
      await emitEvent(exec, { kind: 'books-added', bookIds: [created] });
      await input.beforeCommit?.();
      await input.fence?.(exec);
    });
  } catch (error) {
    if (created !== undefined) await removeCovers(input.coversRoot, created).catch(() => undefined);
    throw error;
  }
  if (existing !== undefined) return { bookId: existing, created: false };
  return { bookId: created as number, created: true };
}
