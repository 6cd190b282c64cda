// One book's sidecar: where it is, what it says, whether it agrees with the catalog, and export and import.
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { bookJson } from '../books/book-view.ts';
import { bookFiles } from '../books/file-locations.ts';
import { writeMetadataPatch, type PatchOutcome } from '../books/metadata-writer.ts';
import { coverFile } from '../covers/cover-store.ts';
import type { Db, Store } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { patchFromSidecar, sameSidecarMetadata, sidecarFromBookMetadata } from './catalog-mapping.ts';
import { SidecarError } from './errors.ts';
import { readSidecarFile, writeFileAtomically } from './files.ts';
import { GENERATED_BY, serializeSidecar, SIDECAR_VERSION, type SidecarMetadata } from './format.ts';
import { sidecarCoverPathFor, sidecarPathFor } from './paths.ts';
import { sidecarSettings } from './settings.ts';

/** Grimmory's SidecarSyncStatus. */
export const SIDECAR_SYNC_STATUSES = ['IN_SYNC', 'OUTDATED', 'MISSING', 'CONFLICT', 'NOT_APPLICABLE'] as const;
export type SidecarSyncStatus = (typeof SIDECAR_SYNC_STATUSES)[number];

export interface SidecarLocation {
  bookId: number;
  title: string | null;
  /** The primary file (or folder, for a folder audiobook). */
  bookPath: string;
  sidecarPath: string;
  coverPath: string;
}

/**
 * Where the book's sidecar belongs, or undefined when it has none (a physical book, no book file, or a library
 * folder that is gone). BOOK_NOT_FOUND when there is no such book.
 */
export async function locateSidecar(db: Db, bookId: number): Promise<SidecarLocation | undefined> {
  const files = await bookFiles(db, bookId);
  if (!files) throw new SidecarError('BOOK_NOT_FOUND', `Book not found with ID: ${bookId}`);
  const bookPath = files.primary?.path;
  if (bookPath === undefined) return undefined;
  return { bookId, title: files.title, bookPath, sidecarPath: sidecarPathFor(bookPath), coverPath: sidecarCoverPathFor(bookPath) };
}

async function requireLocation(db: Db, bookId: number): Promise<SidecarLocation> {
  const location = await locateSidecar(db, bookId);
  if (!location) throw new SidecarError('NO_BOOK_FILE', `File not found: book ${bookId} has no file to keep a sidecar beside`);
  return location;
}

/** The book's sidecar content, or undefined when it has no sidecar file. A bad file is SIDECAR_INVALID. */
export async function readBookSidecar(db: Db, bookId: number): Promise<SidecarMetadata | undefined> {
  const location = await locateSidecar(db, bookId);
  return location ? readSidecarFile(location.sidecarPath) : undefined;
}

/** The catalog's metadata of a book as sidecar content, and when it last changed. */
async function catalogSide(db: Db, bookId: number): Promise<{ metadata: SidecarMetadata['metadata']; updatedAt: string | null } | undefined> {
  const book = await bookJson(db, bookId);
  if (!book) return undefined;
  const row = await db.selectFrom('book').select('metadata_updated_at').where('id', '=', bookId).executeTakeFirst();
  return { metadata: sidecarFromBookMetadata((book.metadata ?? {}) as Record<string, unknown>), updatedAt: row?.metadata_updated_at ?? null };
}

/**
 * How the sidecar stands against the catalog: MISSING without a file; IN_SYNC when it says what the catalog says;
 * otherwise OUTDATED when the catalog changed after the file was written, else CONFLICT (the file is newer, has no
 * date, or cannot be read at all).
 */
export async function bookSidecarStatus(db: Db, bookId: number): Promise<SidecarSyncStatus> {
  const location = await locateSidecar(db, bookId);
  if (!location) return 'NOT_APPLICABLE';
  let sidecar: SidecarMetadata | undefined;
  try {
    sidecar = await readSidecarFile(location.sidecarPath);
  } catch (error) {
    // A file that is there but unreadable disagrees with the catalog; exporting over it is the user's call.
    if (error instanceof SidecarError && error.code === 'SIDECAR_INVALID') return 'CONFLICT';
    throw error;
  }
  if (!sidecar) return 'MISSING';
  const catalog = await catalogSide(db, bookId);
  if (!catalog) return 'CONFLICT';
  if (sidecar.metadata && sameSidecarMetadata(sidecar.metadata, catalog.metadata)) return 'IN_SYNC';
  const generated = sidecar.generatedAt ? Date.parse(sidecar.generatedAt) : Number.NaN;
  const updated = catalog.updatedAt ? Date.parse(catalog.updatedAt) : Number.NaN;
  return updated > generated ? 'OUTDATED' : 'CONFLICT';
}

export interface ExportOptions {
  /** Write even though sidecars are turned off in the settings (the CLI's `--force`). */
  force?: boolean;
  /** Whether to write `<book>.cover.jpg` too; default: the `includeCoverFile` setting. */
  includeCover?: boolean;
}

export interface ExportResult {
  sidecarPath: string;
  /** Set when the cover image was written too. */
  coverPath?: string;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Writes the sidecar (and cover) of a located book; the book's file must be on disk. */
async function writeSidecar(db: Db, coversRoot: string, location: SidecarLocation, includeCover: boolean): Promise<ExportResult> {
  if (!(await exists(location.bookPath))) throw new SidecarError('NO_BOOK_FILE', `File not found: the file of book ${location.bookId} is not on disk`);
  const catalog = await catalogSide(db, location.bookId);
  if (!catalog) throw new SidecarError('BOOK_NOT_FOUND', `Book not found with ID: ${location.bookId}`);
  const result: ExportResult = { sidecarPath: location.sidecarPath };
  if (includeCover) {
    let cover: Buffer | undefined;
    try {
      cover = await readFile(coverFile(coversRoot, location.bookId, 'book', 'cover'));
    } catch {
      // No cover in the catalog: the sidecar goes out without one.
    }
    if (cover) {
      await writeFileAtomically(location.coverPath, cover);
      result.coverPath = location.coverPath;
    }
  }
  const sidecar: SidecarMetadata = { version: SIDECAR_VERSION, generatedAt: nowIso(), generatedBy: GENERATED_BY, metadata: catalog.metadata };
  if (result.coverPath) sidecar.cover = { source: 'external', path: basename(location.coverPath) };
  await writeFileAtomically(location.sidecarPath, serializeSidecar(sidecar));
  return result;
}

/** Writes the book's catalog metadata to its sidecar file, replacing what was there. */
export async function exportBookSidecar(store: Pick<Store, 'db'>, coversRoot: string, bookId: number, options: ExportOptions = {}): Promise<ExportResult> {
  const location = await requireLocation(store.db, bookId);
  // Library runs pass both options and read the settings once for all their books.
  const settings = options.force && options.includeCover !== undefined ? undefined : await sidecarSettings(store.db);
  if (settings && !settings.enabled && !options.force) throw disabled();
  return writeSidecar(store.db, coversRoot, location, options.includeCover ?? settings?.includeCoverFile ?? false);
}

export function disabled(): SidecarError {
  return new SidecarError('SIDECARS_DISABLED', 'Sidecar files are turned off (metadata persistence settings, sidecarSettings.enabled)');
}

export interface ImportResult extends PatchOutcome {
  sidecarPath: string;
}

/**
 * Merges the book's sidecar into the catalog: the fields it gives replace the catalog's, except locked ones; the
 * ones it leaves out stay. The cover file is not imported (as in Grimmory).
 */
export async function importBookSidecar(store: Pick<Store, 'db'>, coversRoot: string, bookId: number): Promise<ImportResult> {
  const location = await requireLocation(store.db, bookId);
  const sidecar = await readSidecarFile(location.sidecarPath);
  if (!sidecar) throw new SidecarError('SIDECAR_NOT_FOUND', 'File not found: No sidecar file found for book');
  const outcome: PatchOutcome = sidecar.metadata
    ? await store.db.transaction().execute(async (trx) => {
        const result = await writeMetadataPatch(trx, bookId, patchFromSidecar(sidecar.metadata ?? {}));
        if (result.changed.length > 0) await trx.updateTable('book').set({ metadata_updated_at: nowIso() }).where('id', '=', bookId).execute();
        return result;
      })
    : { changed: [], locked: [] };
  if (outcome.changed.length > 0) await sidecarAfterMetadataChange(store, coversRoot, bookId);
  return { sidecarPath: location.sidecarPath, ...outcome };
}

/**
 * What follows any change to a book's metadata: with `writeOnUpdate` on, its sidecar is rewritten. Failures are
 * returned, not thrown: the metadata change itself has happened.
 */
export async function sidecarAfterMetadataChange(store: Pick<Store, 'db'>, coversRoot: string, bookId: number): Promise<SidecarError | undefined> {
  const settings = await sidecarSettings(store.db);
  if (!settings.enabled || !settings.writeOnUpdate) return undefined;
  try {
    const location = await locateSidecar(store.db, bookId);
    if (location) await writeSidecar(store.db, coversRoot, location, settings.includeCoverFile);
    return undefined;
  } catch (error) {
    if (error instanceof SidecarError) return error;
    throw error;
  }
}
