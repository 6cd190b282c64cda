// Libraries and their root folders.
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { BookFileType } from '../formats/types.ts';
import { BOOK_FILE_TYPES } from '../formats/types.ts';
import type { Db } from '../store/store.ts';

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

export class LibraryError extends Error {
  override name = 'LibraryError';
  readonly code: 'NOT_FOUND' | 'CONFLICT' | 'INVALID';
  constructor(code: 'NOT_FOUND' | 'CONFLICT' | 'INVALID', message: string) {
    super(message);
    this.code = code;
  }
}

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
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await trx.insertInto('library_path').values(folders.map((path) => ({ library_id: row.id, path }))).execute();
    return row.id;
  });
  return findLibrary(db, id);
}

/** Removes a library from the catalog with its books and their reading data; the files on disk stay. */
export async function removeLibrary(db: Db, idOrName: string | number): Promise<{ library: Library; books: number }> {
  const library = await findLibrary(db, idOrName);
  const { count } = await db.selectFrom('book').select((eb) => eb.fn.countAll<number>().as('count')).where('library_id', '=', library.id).executeTakeFirstOrThrow();
  await db.deleteFrom('library').where('id', '=', library.id).execute();
  return { library, books: Number(count) };
}

export async function addLibraryPath(db: Db, idOrName: string | number, path: string): Promise<Library> {
  const library = await findLibrary(db, idOrName);
  const folder = await checkFolder(path);
  await db.insertInto('library_path').values({ library_id: library.id, path: folder }).onConflict((oc) => oc.doNothing()).execute();
  return findLibrary(db, library.id);
}
