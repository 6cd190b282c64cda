// The catalog writes a scan makes, each inside the caller's transaction.
import type { Transaction } from 'kysely';
import { newCoverHash, saveCoverImages } from '../covers/cover-store.ts';
import type { CoverImages } from '../covers/cover-images.ts';
import { fileRowValues, type FileRecord } from '../books/file-record.ts';
import { writeBookMetadata, writeComicMetadata } from '../books/metadata-writer.ts';
import { pickPrimary } from '../books/primary-file.ts';
import type { BookFileType } from '../formats/types.ts';
import type { DB } from '../store/db-types.ts';
import { nowIso } from '../time.ts';

export interface BookContext {
  libraryId: number;
  formatPriority: BookFileType[] | null;
  coversRoot: string;
}

/** Stores metadata and cover of the file that now speaks for the book. */
async function applyPrimary(trx: Transaction<DB>, ctx: BookContext, bookId: number, record: FileRecord, cover: CoverImages | undefined): Promise<void> {
  await writeBookMetadata(trx, bookId, record.extraction.metadata, record.fileName);
  if (record.extraction.comic) {
    const locks = await trx.selectFrom('book_metadata').select('all_fields_locked').where('book_id', '=', bookId).executeTakeFirst();
    await writeComicMetadata(trx, bookId, record.extraction.comic, locks);
  }
  if (cover) await storeCover(trx, ctx, bookId, record.extraction.bookType === 'AUDIOBOOK' ? 'audiobook' : 'book', cover);
  await trx.updateTable('book').set({ metadata_updated_at: nowIso(), scanned_on: nowIso() }).where('id', '=', bookId).execute();
}

/** Saves cover files and bumps the cover token, unless the cover is locked. An audiobook-only book also shows its square cover as the book cover. */
export async function storeCover(trx: Transaction<DB>, ctx: BookContext, bookId: number, kind: 'book' | 'audiobook', cover: CoverImages): Promise<void> {
  const meta = await trx.selectFrom('book_metadata').select(['cover_locked', 'audiobook_cover_locked', 'all_fields_locked', 'cover_updated_on']).where('book_id', '=', bookId).executeTakeFirst();
  if (meta?.all_fields_locked === 1) return;
  const now = nowIso();
  if (kind === 'audiobook' && meta?.audiobook_cover_locked !== 1) {
    await saveCoverImages(ctx.coversRoot, bookId, 'audiobook', cover);
    await trx.updateTable('book').set({ audiobook_cover_hash: newCoverHash() }).where('id', '=', bookId).execute();
    await trx.updateTable('book_metadata').set({ audiobook_cover_updated_on: now }).where('book_id', '=', bookId).execute();
  }
  const bookCoverFree = meta?.cover_locked !== 1 && (kind === 'book' || !meta?.cover_updated_on);
  if (bookCoverFree) {
    await saveCoverImages(ctx.coversRoot, bookId, 'book', cover);
    await trx.updateTable('book').set({ book_cover_hash: newCoverHash() }).where('id', '=', bookId).execute();
    await trx.updateTable('book_metadata').set({ cover_updated_on: now }).where('book_id', '=', bookId).execute();
  }
}

export async function createBook(trx: Transaction<DB>, ctx: BookContext, record: FileRecord, cover: CoverImages | undefined): Promise<number> {
  const now = nowIso();
  const book = await trx
    .insertInto('book')
    .values({ library_id: ctx.libraryId, library_path_id: record.libraryPathId, added_on: now, scanned_on: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  await trx.insertInto('book_file').values({ book_id: book.id, ...fileRowValues(record), initial_hash: record.partialMd5, added_on: now }).execute();
  await applyPrimary(trx, ctx, book.id, record, cover);
  return book.id;
}

/** Adds another format to an existing book; it takes over the metadata when it outranks the current primary. */
export async function attachFile(trx: Transaction<DB>, ctx: BookContext, bookId: number, record: FileRecord, cover: CoverImages | undefined): Promise<void> {
  const inserted = await trx
    .insertInto('book_file')
    .values({ book_id: bookId, ...fileRowValues(record), initial_hash: record.partialMd5, added_on: nowIso() })
    .returning('id')
    .executeTakeFirstOrThrow();
  await refreshIfPrimary(trx, ctx, bookId, inserted.id, record, cover);
}

/** Re-reads a changed file into its row, and into the book when it is the primary file. */
export async function updateFile(trx: Transaction<DB>, ctx: BookContext, fileId: number, bookId: number, record: FileRecord, cover: CoverImages | undefined): Promise<void> {
  await trx.updateTable('book_file').set(fileRowValues(record)).where('id', '=', fileId).execute();
  await trx.updateTable('book').set({ missing_at: null }).where('id', '=', bookId).execute();
  await refreshIfPrimary(trx, ctx, bookId, fileId, record, cover);
}

async function refreshIfPrimary(trx: Transaction<DB>, ctx: BookContext, bookId: number, fileId: number, record: FileRecord, cover: CoverImages | undefined): Promise<void> {
  const files = await trx.selectFrom('book_file').select(['id', 'book_type', 'missing_at']).where('book_id', '=', bookId).where('is_book', '=', 1).execute();
  if (pickPrimary(files, ctx.formatPriority)?.id === fileId) await applyPrimary(trx, ctx, bookId, record, cover);
  else if (cover && record.extraction.bookType === 'AUDIOBOOK') await storeCover(trx, ctx, bookId, 'audiobook', cover);
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
