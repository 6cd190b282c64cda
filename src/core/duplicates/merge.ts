// Merging duplicates (a source book's files become alternative formats of the target) and the reverse (a file
// becomes a book of its own). Catalog rows move; files on disk are never deleted.
import type { Transaction } from 'kysely';
import { sql } from 'kysely';
import { constants } from 'node:fs';
import { access, copyFile, link, unlink } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import type { Principal } from '../auth/principal.ts';
import { bookAccess } from '../auth/visibility.ts';
import { absoluteFilePath, bookFileJson, type BookFileRow } from '../books/book-view.ts';
import { pickPrimary } from '../books/primary-file.ts';
import type { BookFileType } from '../formats/types.ts';
import type { DB } from '../store/db-types.ts';
import type { Db, Store } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { bookSearchText } from '../text/search-key.ts';
import { emitEvent } from '../events/live-events.ts';
import { removedBooks } from '../events/removed-books.ts';

export type MergeErrorCode = 'NOT_FOUND' | 'HIDDEN' | 'INVALID';

export class MergeError extends Error {
  override name = 'MergeError';
  readonly code: MergeErrorCode;
  readonly bookId: number | undefined;
  constructor(code: MergeErrorCode, message: string, bookId?: number) {
    super(message);
    this.code = code;
    this.bookId = bookId;
  }
}

interface BookRow {
  id: number;
  library_id: number;
  library_path_id: number | null;
  missing_at: string | null;
  format_priority: string | null;
}

interface LoadedBook {
  book: BookRow;
  files: BookFileRow[];
  roots: Map<number, string>;
}

async function requireBook(db: Db, principal: Principal | undefined, bookId: number): Promise<void> {
  if (!principal) {
    const row = await db.selectFrom('book').select('id').where('id', '=', bookId).executeTakeFirst();
    if (!row) throw new MergeError('NOT_FOUND', `Book not found with ID: ${bookId}`, bookId);
    return;
  }
  const seen = await bookAccess(db, principal, bookId);
  if (seen === 'missing') throw new MergeError('NOT_FOUND', `Book not found with ID: ${bookId}`, bookId);
  if (seen === 'hidden') throw new MergeError('HIDDEN', 'You are not authorized to access this book.', bookId);
}

async function loadBook(db: Db, bookId: number): Promise<LoadedBook> {
  const book = await db
    .selectFrom('book')
    .innerJoin('library', 'library.id', 'book.library_id')
    .select(['book.id', 'book.library_id', 'book.library_path_id', 'book.missing_at', 'library.format_priority'])
    .where('book.id', '=', bookId)
    .executeTakeFirst();
  if (!book) throw new MergeError('NOT_FOUND', `Book not found with ID: ${bookId}`, bookId);
  const files = (await db.selectFrom('book_file').selectAll().where('book_id', '=', bookId).orderBy('id').execute()) as unknown as BookFileRow[];
  const paths = await db.selectFrom('library_path').select(['id', 'path']).where('library_id', '=', book.library_id).execute();
  return { book, files, roots: new Map(paths.map((p) => [p.id, p.path])) };
}

function filePath(loaded: LoadedBook, file: BookFileRow): string | undefined {
  const rootId = file.library_path_id ?? loaded.book.library_path_id;
  return absoluteFilePath(rootId === null ? undefined : loaded.roots.get(rootId), file);
}

async function exists(path: string | undefined): Promise<boolean> {
  if (!path) return false;
  return access(path).then(
    () => true,
    () => false,
  );
}

function parsePriority(json: string | null): BookFileType[] | null {
  try {
    const list = json ? (JSON.parse(json) as unknown) : null;
    return Array.isArray(list) ? (list as BookFileType[]) : null;
  } catch {
    return null;
  }
}

/** Moves a file without ever replacing one: hard link + unlink, or an exclusive copy + unlink across devices. */
async function moveNoClobber(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOENT') throw error;
    await copyFile(from, to, constants.COPYFILE_EXCL);
  }
  await unlink(from);
}

interface PlannedMove {
  fileId: number;
  from: string;
  to: string;
  libraryPathId: number;
  subPath: string;
  fileName: string;
}

function splitName(name: string): { base: string; ext: string } {
  const dot = name.lastIndexOf('.');
  return dot > 0 && dot < name.length - 1 ? { base: name.slice(0, dot), ext: name.slice(dot + 1) } : { base: name, ext: '' };
}

/**
 * With `moveFiles`, each attached file goes next to the target's primary file and takes its name with its own
 * extension (`Dune.epub` + `x.pdf` → `Dune.pdf`; a second PDF → `Dune_1.pdf`); taken names get `_1`, `_2`, ...
 */
async function planMoves(target: LoadedBook, sources: LoadedBook[]): Promise<PlannedMove[]> {
  const primary = pickPrimary(target.files.filter((f) => f.is_book === 1), parsePriority(target.book.format_priority));
  const primaryPath = primary ? filePath(target, primary) : undefined;
  if (!primary || !primaryPath || !(await exists(primaryPath))) {
    throw new MergeError('INVALID', `Target book's primary file not found at expected location: ${primaryPath ?? '(unknown)'}. Please ensure the target book's files exist before attaching files.`, target.book.id);
  }
  const libraryPathId = (primary.library_path_id ?? target.book.library_path_id) as number;
  const root = target.roots.get(libraryPathId) as string;
  const dir = join(root, primary.file_sub_path);
  const { base } = splitName(primary.file_name);
  const extensionCounts = new Map<string, number>();
  for (const f of target.files) {
    if (f.is_book !== 1) continue;
    const ext = splitName(f.file_name).ext.toLowerCase();
    extensionCounts.set(ext, (extensionCounts.get(ext) ?? 0) + 1);
  }
  const taken = new Set<string>();
  const moves: PlannedMove[] = [];
  for (const source of sources) {
    for (const file of source.files) {
      if (file.is_book !== 1) continue;
      const from = filePath(source, file) as string;
      const ext = extname(file.file_name).slice(1).toLowerCase();
      const count = extensionCounts.get(ext) ?? 0;
      extensionCounts.set(ext, count + 1);
      const wanted = `${base}${count > 0 ? `_${count}` : ''}${ext ? `.${ext}` : ''}`;
      let name = wanted;
      if (resolve(join(dir, name)) !== resolve(from)) {
        const parts = splitName(wanted);
        for (let n = 1; taken.has(name) || (await exists(join(dir, name))); n++) {
          if (n >= 1000) throw new MergeError('INVALID', `Could not resolve filename conflict for: ${wanted}`, source.book.id);
          name = `${parts.base}_${n}${parts.ext ? `.${parts.ext}` : ''}`;
        }
      }
      taken.add(name);
      moves.push({ fileId: file.id, from, to: join(dir, name), libraryPathId, subPath: primary.file_sub_path, fileName: name });
    }
  }
  return moves;
}

export interface AttachResult {
  targetBookId: number;
  attachedFiles: { id: number; sourceBookId: number; path: string | undefined }[];
  /** Source books that left the catalog (they had no other file); the others keep their supplementary files. */
  deletedSourceBookIds: number[];
  keptSourceBookIds: number[];
}

export interface AttachOptions {
  /** Move the files on disk next to the target's primary file (Grimmory's `moveFiles`). Default: leave them where they are. */
  moveFiles?: boolean;
  /** Whose visibility applies; none = everything (the CLI). */
  principal?: Principal;
}

/**
 * `POST /api/v1/books/{targetBookId}/attach-file`: the book-format files of each source book become alternative formats
 * of the target. A source left with no file at all leaves the catalog, after its readers' progress and shelf
 * memberships were carried to the target; one that still has supplementary files stays.
 */
export async function attachBookFiles(store: Store, targetBookId: number, sourceBookIds: number[], options: AttachOptions = {}): Promise<AttachResult> {
  const { db } = store;
  await requireBook(db, options.principal, targetBookId);
  const uniqueSources = [...new Set(sourceBookIds)];
  if (uniqueSources.length === 0) throw new MergeError('INVALID', 'No source books given');
  if (uniqueSources.includes(targetBookId)) throw new MergeError('INVALID', 'Cannot attach a book to itself', targetBookId);
  for (const id of uniqueSources) await requireBook(db, options.principal, id);

  const target = await loadBook(db, targetBookId);
  const sources = await Promise.all(uniqueSources.map((id) => loadBook(db, id)));
  if (!target.files.some((f) => f.is_book === 1)) throw new MergeError('INVALID', 'Target book has no primary file', targetBookId);
  for (const source of sources) {
    const id = source.book.id;
    if (source.book.library_id !== target.book.library_id) throw new MergeError('INVALID', `Source book ${id} must be in the same library as target`, id);
    const bookFiles = source.files.filter((f) => f.is_book === 1);
    if (bookFiles.length === 0) throw new MergeError('INVALID', `Source book ${id} has no book format files to attach`, id);
    for (const file of bookFiles) {
      if (file.is_folder_based === 1) throw new MergeError('INVALID', `Source book ${id} contains a folder-based audiobook. Folder-based books cannot be attached.`, id);
      const path = filePath(source, file);
      if (!(await exists(path))) {
        throw new MergeError('INVALID', `Source file not found at expected location: ${path ?? file.file_name}. The file may have been moved, deleted, or the database record is out of sync.`, id);
      }
    }
  }

  const moves = options.moveFiles ? await planMoves(target, sources) : [];
  const done: PlannedMove[] = [];
  try {
    for (const move of moves) {
      if (move.from === move.to) continue;
      await moveNoClobber(move.from, move.to);
      done.push(move);
    }
    const result = await db.transaction().execute(async (trx) => {
      const deleted: number[] = [];
      const kept: number[] = [];
      const attached: AttachResult['attachedFiles'] = [];
      for (const source of sources) {
        const bookFiles = source.files.filter((f) => f.is_book === 1);
        await trx.updateTable('book_file').set({ book_id: targetBookId }).where('id', 'in', bookFiles.map((f) => f.id)).where('book_id', '=', source.book.id).execute();
        for (const file of bookFiles) {
          const move = moves.find((m) => m.fileId === file.id);
          if (move) await trx.updateTable('book_file').set({ library_path_id: move.libraryPathId, file_sub_path: move.subPath, file_name: move.fileName }).where('id', '=', file.id).execute();
          attached.push({ id: file.id, sourceBookId: source.book.id, path: move ? move.to : filePath(source, file) });
        }
        // Counted inside the transaction: a scan may have added a file to the source since it was read.
        const left = await trx.selectFrom('book_file').select('id').where('book_id', '=', source.book.id).executeTakeFirst();
        if (!left) {
          await carryReaderData(trx, source.book.id, targetBookId);
          await emitEvent(trx, { kind: 'books-removed', books: await removedBooks(trx, [source.book.id]) });
          await trx.deleteFrom('book').where('id', '=', source.book.id).execute();
          deleted.push(source.book.id);
        } else kept.push(source.book.id);
      }
      // The target has present files again when an attached one is present.
      if (target.book.missing_at !== null) {
        const present = await trx.selectFrom('book_file').select('id').where('book_id', '=', targetBookId).where('missing_at', 'is', null).executeTakeFirst();
        if (present) await trx.updateTable('book').set({ missing_at: null }).where('id', '=', targetBookId).execute();
      }
      await emitEvent(trx, { kind: 'books-changed', bookIds: [targetBookId, ...kept] });
      return { targetBookId, attachedFiles: attached, deletedSourceBookIds: deleted, keptSourceBookIds: kept };
    });
    return result;
  } catch (error) {
    // Put moved files back where the catalog still says they are.
    for (const move of done.reverse()) await moveNoClobber(move.to, move.from).catch(() => undefined);
    throw error;
  }
}

const EMPTY_STATUSES = new Set([null, 'UNREAD', 'UNSET']);
const PROGRESS_COLUMNS = [
  'last_read_time', 'pdf_progress', 'pdf_progress_percent', 'epub_progress', 'epub_progress_href', 'epub_progress_percent',
  'cbx_progress', 'cbx_progress_percent', 'koreader_progress', 'koreader_progress_percent', 'koreader_device', 'koreader_device_id',
  'koreader_last_sync_time', 'kobo_progress_percent', 'kobo_location', 'kobo_location_type', 'kobo_location_source',
  'kobo_progress_received_time', 'kobo_progress_sent_time', 'kobo_status_sent_time', 'personal_rating',
] as const;

/**
 * Reading data of a source book that is about to leave the catalog goes to the target: a reader without progress on
 * the target gets the source's row; a reader with both keeps the target's values and gains the ones it lacks, and the
 * source's read status when the target's is empty (unread/unset). Shelf memberships are added to the target.
 * Per-file progress follows its file (it is keyed by file).
 */
async function carryReaderData(trx: Transaction<DB>, sourceId: number, targetId: number): Promise<void> {
  const sourceRows = await trx.selectFrom('user_book_progress').selectAll().where('book_id', '=', sourceId).execute();
  for (const row of sourceRows) {
    const existing = await trx.selectFrom('user_book_progress').selectAll().where('book_id', '=', targetId).where('user_id', '=', row.user_id).executeTakeFirst();
    if (!existing) {
      await trx.updateTable('user_book_progress').set({ book_id: targetId }).where('id', '=', row.id).execute();
      continue;
    }
    const patch: Record<string, unknown> = {};
    for (const column of PROGRESS_COLUMNS) if (existing[column] === null && row[column] !== null) patch[column] = row[column];
    if (EMPTY_STATUSES.has(existing.read_status) && !EMPTY_STATUSES.has(row.read_status)) {
      patch.read_status = row.read_status;
      patch.read_status_modified_time = row.read_status_modified_time;
      patch.date_finished = row.date_finished;
    }
    if (row.last_read_time !== null && existing.last_read_time !== null && row.last_read_time > existing.last_read_time) patch.last_read_time = row.last_read_time;
    if (Object.keys(patch).length > 0) await trx.updateTable('user_book_progress').set(patch).where('id', '=', existing.id).execute();
  }
  await sql`insert into book_shelf_mapping (book_id, shelf_id) select ${targetId}, shelf_id from book_shelf_mapping where book_id = ${sourceId} on conflict do nothing`.execute(trx);
}

/** book_metadata columns a detached book takes over with `copyMetadata` (Grimmory's list; lock flags are not copied). */
const COPIED_METADATA = [
  'title', 'subtitle', 'publisher', 'published_date', 'description', 'series_name', 'series_number', 'series_total', 'isbn_13',
  'isbn_10', 'page_count', 'language', 'rating', 'review_count', 'amazon_rating', 'amazon_review_count', 'goodreads_rating',
  'goodreads_review_count', 'hardcover_rating', 'hardcover_review_count', 'lubimyczytac_rating', 'ranobedb_rating', 'audible_rating',
  'audible_review_count', 'asin', 'goodreads_id', 'hardcover_id', 'hardcover_book_id', 'google_id', 'comicvine_id', 'lubimyczytac_id',
  'ranobedb_id', 'audible_id', 'narrator', 'abridged', 'age_rating', 'content_rating', 'search_text', 'series_key',
] as const;

export interface DetachOptions {
  copyMetadata?: boolean;
  principal?: Principal;
  /** When given, the new book gets a cover read from its file (best effort). */
  coversRoot?: string;
}

export interface DetachResult {
  sourceBookId: number;
  newBookId: number;
  fileId: number;
}

function titleOf(fileName: string): string {
  if (fileName.trim() === '') return 'Untitled';
  const dot = fileName.lastIndexOf('.');
  return dot > 0 ? fileName.slice(0, dot) : fileName;
}

/**
 * `POST /api/v1/books/{bookId}/files/{fileId}/detach`: the file becomes a book of its own in the same library, with
 * a copy of the book's metadata or just a title from the file name. The file stays where it is.
 */
export async function detachBookFile(store: Store, bookId: number, fileId: number, options: DetachOptions = {}): Promise<DetachResult> {
  const { db } = store;
  await requireBook(db, options.principal, bookId);
  const source = await loadBook(db, bookId);
  const file = source.files.find((f) => f.id === fileId);
  if (!file) throw new MergeError('INVALID', 'File not found on this book', bookId);
  if (source.files.length <= 1) throw new MergeError('INVALID', 'Cannot detach the only file from a book', bookId);
  if (file.is_book === 1 && source.files.filter((f) => f.is_book === 1).length === 1) {
    throw new MergeError('INVALID', 'Cannot detach the only book format file. The book would be left with only supplementary files.', bookId);
  }

  const newBookId = await db.transaction().execute(async (trx) => {
    const created = await trx
      .insertInto('book')
      .values({ library_id: source.book.library_id, library_path_id: file.library_path_id ?? source.book.library_path_id, added_on: nowIso(), missing_at: file.missing_at })
      .returning('id')
      .executeTakeFirstOrThrow();
    const id = created.id;
    if (options.copyMetadata) {
      const columns = COPIED_METADATA.join(', ');
      await sql`insert into book_metadata (book_id, ${sql.raw(columns)}) select ${id}, ${sql.raw(columns)} from book_metadata where book_id = ${bookId}`.execute(trx);
      const exists = await trx.selectFrom('book_metadata').select('book_id').where('book_id', '=', id).executeTakeFirst();
      if (!exists) await trx.insertInto('book_metadata').values({ book_id: id }).execute();
      await sql`insert into book_metadata_author_mapping (book_id, author_id, sort_order) select ${id}, author_id, sort_order from book_metadata_author_mapping where book_id = ${bookId}`.execute(trx);
      for (const [mapping, column] of [['book_metadata_category_mapping', 'category_id'], ['book_metadata_tag_mapping', 'tag_id'], ['book_metadata_mood_mapping', 'mood_id']] as const) {
        await sql`insert into ${sql.table(mapping)} (book_id, ${sql.ref(column)}) select ${id}, ${sql.ref(column)} from ${sql.table(mapping)} where book_id = ${bookId}`.execute(trx);
      }
    } else {
      const title = titleOf(file.file_name);
      await trx.insertInto('book_metadata').values({ book_id: id, title, search_text: bookSearchText({ title, authors: [] }) }).execute();
    }
    await trx.updateTable('book_file').set({ book_id: id }).where('id', '=', fileId).execute();
    await emitEvent(trx, { kind: 'books-added', bookIds: [id] });
    await emitEvent(trx, { kind: 'books-changed', bookIds: [bookId] });
    return id;
  });

  if (options.coversRoot) await coverFromFile(store, newBookId, source, file, options.coversRoot).catch(() => undefined);
  return { sourceBookId: bookId, newBookId, fileId };
}

/** Reads the cover out of the detached file, as a scan would. Failures leave the book without a cover. */
async function coverFromFile(store: Store, bookId: number, source: LoadedBook, file: BookFileRow, coversRoot: string): Promise<void> {
  const path = filePath(source, file);
  if (!path || file.is_folder_based === 1) return;
  const [{ formatOf }, { makeCoverImages }, { storeCover }] = await Promise.all([
    import('../formats/index.ts'),
    import('../covers/cover-images.ts'),
    import('../scan/catalog-updates.ts'),
  ]);
  const format = formatOf(file.file_name);
  if (!format) return;
  const { cover } = await format.extract(path, { skipCover: false });
  if (!cover) return;
  const kind = format.bookType === 'AUDIOBOOK' ? 'audiobook' : 'book';
  const images = await makeCoverImages(cover.data, kind);
  await store.db.transaction().execute((trx) => storeCover(trx, { libraryId: source.book.library_id, formatPriority: null, coversRoot }, bookId, kind, images));
}

/** `GET /api/v1/books/{bookId}/files[?isBook=]`: the book's files as `BookFile` JSON, in id order. */
export async function listBookFiles(db: Db, bookId: number, isBook?: boolean): Promise<Record<string, unknown>[]> {
  const loaded = await loadBook(db, bookId);
  return loaded.files
    .filter((f) => isBook === undefined || (f.is_book === 1) === isBook)
    .map((f) => {
      const rootId = f.library_path_id ?? loaded.book.library_path_id;
      return bookFileJson(f, rootId === null ? undefined : loaded.roots.get(rootId));
    });
}
