// Libraries and their root folders.
import { CodedError } from '../coded-error.ts';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { removeCovers } from '../covers/cover-store.ts';
import type { BookFileType } from '../formats/types.ts';
import { BOOK_FILE_TYPES } from '../formats/types.ts';
import type { Db } from '../store/store.ts';
import { emitEvent } from '../events/live-events.ts';
import { removedBooks } from '../events/removed-books.ts';

export const ORGANIZATION_MODES = ['BOOK_PER_FILE', 'BOOK_PER_FOLDER', 'AUTO_DETECT'] as const;
export type OrganizationMode = (typeof ORGANIZATION_MODES)[number];

export interface LibraryPath {
  id: number;
  libraryId: number;
  path: string;
}

export interface Library {
  id: number;
  name: string;
  watch: boolean;
  organizationMode: OrganizationMode;
  formatPriority: BookFileType[] | null;
  allowedFormats: BookFileType[] | null;
  fileNamingPattern: string | null;
  icon: string | null;
  iconType: string | null;
  sort: string | null;
  metadataSource: string;
  lastScannedAt: string | null;
  paths: LibraryPath[];
}

export class LibraryError extends CodedError<'NOT_FOUND' | 'CONFLICT' | 'INVALID'> {}

/** EPUB > PDF > AZW3 > MOBI > FB2 > CBX > AUDIOBOOK unless the library says otherwise. */
export const DEFAULT_FORMAT_PRIORITY: readonly BookFileType[] = ['EPUB', 'PDF', 'AZW3', 'MOBI', 'FB2', 'CBX', 'AUDIOBOOK'];

function parseFormats(json: string | null): BookFileType[] | null {
  if (!json) return null;
  try {
    const list = JSON.parse(json) as unknown;
    return Array.isArray(list) ? list.filter((f): f is BookFileType => (BOOK_FILE_TYPES as readonly string[]).includes(f)) : null;
  } catch {
    return null;
  }
}

export async function listLibraries(db: Db): Promise<Library[]> {
  const rows = await db.selectFrom('library').selectAll().orderBy('id').execute();
  const paths = await db.selectFrom('library_path').selectAll().orderBy('id').execute();
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    watch: r.watch === 1,
    organizationMode: r.organization_mode as OrganizationMode,
    formatPriority: parseFormats(r.format_priority),
    allowedFormats: parseFormats(r.allowed_formats),
    fileNamingPattern: r.file_naming_pattern,
    icon: r.icon,
    iconType: r.icon_type,
    sort: r.sort,
    metadataSource: r.metadata_source,
    lastScannedAt: r.last_scanned_at,
    paths: paths.filter((p) => p.library_id === r.id).map((p) => ({ id: p.id, libraryId: p.library_id, path: p.path })),
  }));
}

/** Finds a library by id (all digits) or by name (case-insensitive). */
export async function findLibrary(db: Db, idOrName: string | number): Promise<Library> {
  const all = await listLibraries(db);
  const key = String(idOrName);
  const hit = /^\d+$/.test(key) ? all.find((l) => l.id === Number(key)) : all.find((l) => l.name.toLowerCase() === key.toLowerCase());
  if (!hit) throw new LibraryError('NOT_FOUND', `no library "${key}"`);
  return hit;
}

export interface NewLibrary {
  name: string;
  paths: string[];
  organizationMode?: OrganizationMode;
  watch?: boolean;
  formatPriority?: BookFileType[];
  allowedFormats?: BookFileType[];
  icon?: string;
  iconType?: string;
  fileNamingPattern?: string;
  metadataSource?: string;
  /** A user who gets the new library assigned (Grimmory assigns it to its creator). */
  assignTo?: number;
}

async function checkFolder(path: string): Promise<string> {
  const absolute = resolve(path);
  const info = await stat(absolute).catch(() => undefined);
  if (!info?.isDirectory()) throw new LibraryError('INVALID', `not a folder: ${absolute}`);
  return absolute;
}

export async function createLibrary(db: Db, input: NewLibrary): Promise<Library> {
  const name = input.name.trim();
  if (!name) throw new LibraryError('INVALID', 'a library needs a name');
  if (input.paths.length === 0) throw new LibraryError('INVALID', 'a library needs at least one folder');
  const folders = [...new Set(await Promise.all(input.paths.map(checkFolder)))];
  const clash = await db.selectFrom('library').select('id').where('name', '=', name).executeTakeFirst();
  if (clash) throw new LibraryError('CONFLICT', `a library named "${name}" already exists`);
  const id = await db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('library')
      .values({
        name,
        organization_mode: input.organizationMode ?? 'BOOK_PER_FILE',
        watch: input.watch ? 1 : 0,
        format_priority: input.formatPriority ? JSON.stringify(input.formatPriority) : null,
        allowed_formats: input.allowedFormats ? JSON.stringify(input.allowedFormats) : null,
        icon: input.icon ?? null,
        icon_type: input.iconType ?? null,
        file_naming_pattern: input.fileNamingPattern ?? null,
        ...(input.metadataSource ? { metadata_source: input.metadataSource } : {}),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await trx.insertInto('library_path').values(folders.map((path) => ({ library_id: row.id, path }))).execute();
    if (input.assignTo !== undefined) {
      await trx.insertInto('user_library_mapping').values({ user_id: input.assignTo, library_id: row.id }).onConflict((oc) => oc.doNothing()).execute();
    }
    await emitEvent(trx, { kind: 'library-changed', libraryId: row.id, change: 'added' });
    return row.id;
  });
  return findLibrary(db, id);
}

/**
 * Removes a library from the catalog with its books and their reading data; the files on disk stay. Given the covers
 * folder, the books' covers go too.
 */
export async function removeLibrary(db: Db, idOrName: string | number, coversRoot?: string): Promise<{ library: Library; books: number }> {
  const library = await findLibrary(db, idOrName);
  const bookIds = (await db.selectFrom('book').select('id').where('library_id', '=', library.id).execute()).map((b) => b.id);
  await db.transaction().execute(async (trx) => {
    await emitEvent(trx, { kind: 'books-removed', books: await removedBooks(trx, bookIds) });
    await trx.deleteFrom('library').where('id', '=', library.id).execute();
    await emitEvent(trx, { kind: 'library-changed', libraryId: library.id, change: 'deleted' });
  });
  if (coversRoot !== undefined) for (const id of bookIds) await removeCovers(coversRoot, id);
  return { library, books: bookIds.length };
}

export interface LibraryChanges {
  name: string;
  paths: string[];
  icon: string | null;
  iconType: string | null;
  watch: boolean;
  formatPriority: BookFileType[] | null;
  allowedFormats: BookFileType[] | null;
  /** Left as they are when undefined. */
  metadataSource?: string;
  organizationMode?: OrganizationMode;
}

export interface LibraryUpdate {
  library: Library;
  /** Folders that were not part of the library before (they need a scan). */
  addedPaths: string[];
  /** Books that left the catalog with the folders taken out of the library. */
  removedBookIds: number[];
}

/**
 * Grimmory's library update: every setting is replaced (sort and naming pattern excepted), folders are compared by path.
 * Books whose files all sat in a removed folder leave the catalog; their files stay on disk.
 */
export async function updateLibrary(db: Db, id: number, changes: LibraryChanges, coversRoot: string): Promise<LibraryUpdate> {
  const current = await findLibrary(db, id);
  const name = changes.name.trim();
  if (!name) throw new LibraryError('INVALID', 'a library needs a name');
  if (changes.paths.length === 0) throw new LibraryError('INVALID', 'a library needs at least one folder');
  const clash = await db.selectFrom('library').select('id').where('name', '=', name).where('id', '!=', id).executeTakeFirst();
  if (clash) throw new LibraryError('CONFLICT', `a library named "${name}" already exists`);
  const wanted = [...new Set(changes.paths.map((p) => resolve(p)))];
  const known = new Set(current.paths.map((p) => p.path));
  const addedPaths = wanted.filter((p) => !known.has(p));
  await Promise.all(addedPaths.map(checkFolder));
  const removedPathIds = current.paths.filter((p) => !wanted.includes(p.path)).map((p) => p.id);

  const removedBookIds = await db.transaction().execute(async (trx) => {
    await emitEvent(trx, { kind: 'library-changed', libraryId: id, change: 'changed' });
    await trx
      .updateTable('library')
      .set({
        name,
        icon: changes.icon,
        icon_type: changes.iconType,
        watch: changes.watch ? 1 : 0,
        format_priority: changes.formatPriority ? JSON.stringify(changes.formatPriority) : null,
        allowed_formats: changes.allowedFormats ? JSON.stringify(changes.allowedFormats) : null,
        ...(changes.metadataSource !== undefined ? { metadata_source: changes.metadataSource } : {}),
        ...(changes.organizationMode !== undefined ? { organization_mode: changes.organizationMode } : {}),
      })
      .where('id', '=', id)
      .execute();
    if (addedPaths.length > 0) await trx.insertInto('library_path').values(addedPaths.map((path) => ({ library_id: id, path }))).execute();
    if (removedPathIds.length === 0) return [];
    const touched = await trx
      .selectFrom('book')
      .select('id')
      .where('library_id', '=', id)
      .where((eb) => eb.or([eb('library_path_id', 'in', removedPathIds), eb('id', 'in', eb.selectFrom('book_file').select('book_id').where('library_path_id', 'in', removedPathIds))]))
      .execute();
    await trx.deleteFrom('book_file').where('library_path_id', 'in', removedPathIds).execute();
    const removed: number[] = [];
    for (const { id: bookId } of touched) {
      const remaining = await trx.selectFrom('book_file').select(['library_path_id']).where('book_id', '=', bookId).where('library_path_id', 'is not', null).executeTakeFirst();
      if (remaining) await trx.updateTable('book').set({ library_path_id: remaining.library_path_id }).where('id', '=', bookId).execute();
      else removed.push(bookId);
    }
    await emitEvent(trx, { kind: 'books-removed', books: await removedBooks(trx, removed) });
    await emitEvent(trx, { kind: 'books-changed', bookIds: touched.map((t) => t.id).filter((bookId) => !removed.includes(bookId)) });
    if (removed.length > 0) await trx.deleteFrom('book').where('id', 'in', removed).execute();
    await trx.deleteFrom('library_path').where('id', 'in', removedPathIds).execute();
    return removed;
  });
  for (const bookId of removedBookIds) await removeCovers(coversRoot, bookId);
  return { library: await findLibrary(db, id), addedPaths, removedBookIds };
}

export async function setFileNamingPattern(db: Db, id: number, pattern: string | null): Promise<Library> {
  await findLibrary(db, id);
  await db.updateTable('library').set({ file_naming_pattern: pattern }).where('id', '=', id).execute();
  return findLibrary(db, id);
}

/** How many books of the library have a book file of each type (types with none are left out). */
export async function formatCounts(db: Db, id: number): Promise<Record<string, number>> {
  await findLibrary(db, id);
  const rows = await db
    .selectFrom('book_file')
    .innerJoin('book', 'book.id', 'book_file.book_id')
    .select(['book_file.book_type', (eb) => eb.fn.count<number>('book_file.book_id').distinct().as('books')])
    .where('book.library_id', '=', id)
    .where('book_file.is_book', '=', 1)
    .where('book_file.book_type', 'is not', null)
    .groupBy('book_file.book_type')
    .execute();
  return Object.fromEntries(rows.filter((r) => Number(r.books) > 0).map((r) => [r.book_type as string, Number(r.books)]));
}

export async function addLibraryPath(db: Db, idOrName: string | number, path: string): Promise<Library> {
  const library = await findLibrary(db, idOrName);
  const folder = await checkFolder(path);
  await db.insertInto('library_path').values({ library_id: library.id, path: folder }).onConflict((oc) => oc.doNothing()).execute();
  await emitEvent(db, { kind: 'library-changed', libraryId: library.id, change: 'changed' });
  return findLibrary(db, library.id);
}
