// The catalog writes a scan makes, each inside the caller's transaction.
import type { Transaction } from 'kysely';
import { isStaged, newCoverHash, saveCoverImages, type StagedCoverImages } from '../covers/cover-store.ts';
import { queueThumbnail } from '../covers/thumbnail-backlog.ts';
import type { CoverImages } from '../covers/cover-images.ts';
import { fileRowValues, type FileRecord } from '../books/file-record.ts';
import { writeBookMetadata, writeComicMetadata } from '../books/metadata-writer.ts';
import { pickPrimary } from '../books/primary-file.ts';
import { isSqlExec, kyselyExec, type SqlExec, type SqlValue } from '../store/sql-exec.ts';
import type { BookFileType } from '../formats/types.ts';
import type { DB } from '../store/db-types.ts';
import { nowIso } from '../time.ts';

export interface BookContext {
  libraryId: number;
  formatPriority: BookFileType[] | null;
  coversRoot: string;
}

/** Stores metadata and cover of the file that now speaks for the book. */
async function applyPrimary(exec: SqlExec, ctx: BookContext, bookId: number, record: FileRecord, cover: CoverImages | StagedCoverImages | undefined): Promise<void> {
  await writeBookMetadata(exec, bookId, record.extraction.metadata, record.fileName);
  if (record.extraction.comic) {
    const locks = exec.get('select all_fields_locked from book_metadata where book_id = ?', [bookId]);
    await writeComicMetadata(exec, bookId, record.extraction.comic, await locks);
  }
  if (cover) await storeCover(exec, ctx, bookId, record.extraction.bookType === 'AUDIOBOOK' ? 'audiobook' : 'book', cover);
  const now = nowIso();
  await exec.run('update book set metadata_updated_at = ?, scanned_on = ? where id = ?', [now, now, bookId]);
}

/** Saves cover files and bumps the cover token, unless the cover is locked. An audiobook-only book also shows its square cover as the book cover. */
export async function storeCover(db: Transaction<DB> | SqlExec, ctx: BookContext, bookId: number, kind: 'book' | 'audiobook', cover: CoverImages | StagedCoverImages): Promise<void> {
  const exec = isSqlExec(db) ? db : kyselyExec(db);
  const meta = await exec.get('select cover_locked, audiobook_cover_locked, all_fields_locked, cover_updated_on from book_metadata where book_id = ?', [bookId]);
  if (meta?.all_fields_locked === 1) return;
  const now = nowIso();
  const audiobookCoverFree = kind === 'audiobook' && meta?.audiobook_cover_locked !== 1;
  const bookCoverFree = meta?.cover_locked !== 1 && (kind === 'book' || !meta?.cover_updated_on);
  const thumbnailLater = isStaged(cover) && cover.thumbnailPath === undefined;
  if (audiobookCoverFree) {
    // Staged images are moved into place by their last use, copied by any earlier one.
    await saveCoverImages(ctx.coversRoot, bookId, 'audiobook', cover, bookCoverFree);
    await exec.run('update book set audiobook_cover_hash = ? where id = ?', [newCoverHash(), bookId]);
    await exec.run('update book_metadata set audiobook_cover_updated_on = ? where book_id = ?', [now, bookId]);
    if (thumbnailLater) await queueThumbnail(exec, bookId, 'audiobook');
  }
  if (bookCoverFree) {
    await saveCoverImages(ctx.coversRoot, bookId, 'book', cover);
    await exec.run('update book set book_cover_hash = ? where id = ?', [newCoverHash(), bookId]);
    await exec.run('update book_metadata set cover_updated_on = ? where book_id = ?', [now, bookId]);
    if (thumbnailLater) await queueThumbnail(exec, bookId, 'book');
  }
}

const insertFileSql = new Map<string, string>();

/** Inserts a book_file row for the record; returns its id. */
async function insertFile(exec: SqlExec, bookId: number, record: FileRecord): Promise<number> {
  const values: Record<string, SqlValue> = { book_id: bookId, ...(fileRowValues(record) as Record<string, SqlValue>), initial_hash: record.partialMd5, added_on: nowIso() };
  const columns = Object.keys(values).join(', ');
  let sql = insertFileSql.get(columns);
  if (!sql) {
    sql = `insert into book_file (${columns}) values (${Object.keys(values).map(() => '?').join(', ')}) returning id`;
    insertFileSql.set(columns, sql);
  }
  const row = await exec.get(sql, Object.values(values));
  return row?.id as number;
}

export async function createBook(exec: SqlExec, ctx: BookContext, record: FileRecord, cover: CoverImages | StagedCoverImages | undefined): Promise<number> {
  const now = nowIso();
  const book = await exec.get('insert into book (library_id, library_path_id, added_on, scanned_on) values (?, ?, ?, ?) returning id', [ctx.libraryId, record.libraryPathId, now, now]);
  const bookId = book?.id as number;
  await insertFile(exec, bookId, record);
  await applyPrimary(exec, ctx, bookId, record, cover);
  return bookId;
}

/** Adds another format to an existing book; it takes over the metadata when it outranks the current primary. */
export async function attachFile(exec: SqlExec, ctx: BookContext, bookId: number, record: FileRecord, cover: CoverImages | StagedCoverImages | undefined): Promise<void> {
  const fileId = await insertFile(exec, bookId, record);
  await refreshIfPrimary(exec, ctx, bookId, fileId, record, cover);
}

/** Re-reads a changed file into its row, and into the book when it is the primary file. */
export async function updateFile(exec: SqlExec, ctx: BookContext, fileId: number, bookId: number, record: FileRecord, cover: CoverImages | StagedCoverImages | undefined): Promise<void> {
  const values = fileRowValues(record) as Record<string, SqlValue>;
  await exec.run(`update book_file set ${Object.keys(values).map((c) => `${c} = ?`).join(', ')} where id = ?`, [...Object.values(values), fileId]);
  await exec.run('update book set missing_at = null where id = ?', [bookId]);
  await refreshIfPrimary(exec, ctx, bookId, fileId, record, cover);
}

async function refreshIfPrimary(exec: SqlExec, ctx: BookContext, bookId: number, fileId: number, record: FileRecord, cover: CoverImages | StagedCoverImages | undefined): Promise<void> {
  const files = (await exec.all('select id, book_type, missing_at from book_file where book_id = ? and is_book = 1', [bookId])) as { id: number; book_type: BookFileType | null; missing_at: string | null }[];
  if (pickPrimary(files, ctx.formatPriority)?.id === fileId) await applyPrimary(exec, ctx, bookId, record, cover);
  else if (cover && record.extraction.bookType === 'AUDIOBOOK') await storeCover(exec, ctx, bookId, 'audiobook', cover);
}

/** A file found elsewhere with the same content: same row, same book, same reading data — new place. */
export async function relocateFile(trx: Transaction<DB>, fileId: number, record: Omit<FileRecord, 'extraction' | 'folderBased'>): Promise<void> {
  const row = await trx
    .updateTable('book_file')
    .set({
      library_path_id: record.libraryPathId,
      file_sub_path: record.subPath,
      file_name: record.fileName,
      size_bytes: record.sizeBytes,
      mtime_ms: Math.trunc(record.mtimeMs),
      missing_at: null,
    })
    .where('id', '=', fileId)
    .returning('book_id')
    .executeTakeFirstOrThrow();
  await trx.updateTable('book').set({ missing_at: null }).where('id', '=', row.book_id).execute();
}

/** Marks files missing (never deletes them), and their books when no file of the book is left. */
export async function markMissing(trx: Transaction<DB>, fileIds: number[]): Promise<void> {
  if (fileIds.length === 0) return;
  const now = nowIso();
  for (let i = 0; i < fileIds.length; i += 500) {
    const chunk = fileIds.slice(i, i + 500);
    await trx.updateTable('book_file').set({ missing_at: now }).where('id', 'in', chunk).where('missing_at', 'is', null).execute();
    await trx
      .updateTable('book')
      .set({ missing_at: now })
      .where('missing_at', 'is', null)
      .where('id', 'in', (eb) => eb.selectFrom('book_file').select('book_id').where('id', 'in', chunk))
      .where((eb) => eb.not(eb.exists(eb.selectFrom('book_file as present').select('present.id').whereRef('present.book_id', '=', 'book.id').where('present.missing_at', 'is', null))))
      .execute();
  }
}

/** A file that is back where it was. */
export async function markPresent(trx: Transaction<DB>, fileIds: number[]): Promise<void> {
  for (let i = 0; i < fileIds.length; i += 500) {
    const chunk = fileIds.slice(i, i + 500);
    await trx.updateTable('book_file').set({ missing_at: null }).where('id', 'in', chunk).execute();
    await trx
      .updateTable('book')
      .set({ missing_at: null })
      .where('id', 'in', (eb) => eb.selectFrom('book_file').select('book_id').where('id', 'in', chunk))
      .execute();
  }
}
