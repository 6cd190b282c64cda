// What a Kobo receives when it downloads a book: the KEPUB conversion of the primary EPUB (made once, then cached) or
// the EPUB itself, and its exact size, which the sync announces as `DownloadUrls[].Size` before the device asks.
import { stat } from 'node:fs/promises';
import { sql } from 'kysely';
import { pathWithin } from '../books/file-locations.ts';
import { idsSubquery } from '../store/dialect-forms.ts';
import { dialectOf } from '../store/dialect.ts';
import { kyselyExec } from '../store/sql-exec.ts';
import type { Db } from '../store/store.ts';
import { convertsToKepub } from './compatibility.ts';
import type { Json } from './entitlements.ts';
import { kepubFor, knownKepub } from './kepub-cache.ts';
import { FILE_COLUMNS, kepubFingerprint, libraryPriorities, primaryFiles, type KoboPrimaryFile } from './kobo-books.ts';
import type { KoboServerSettings } from './server-settings.ts';

export type KoboDownload =
  | { kind: 'file'; path: string; fileName: string; size: number; conversionFailure?: string }
  | { kind: 'not-epub' }
  | { kind: 'missing' };

/** A book's primary file as the download needs it: where it is, and what the Kobo code knows of it. */
export interface DownloadSource {
  fileName: string;
  /** Absolute path, or undefined when its library folder is gone or the stored path leaves it. */
  path: string | undefined;
  primary: KoboPrimaryFile;
}

/** The primary files of `ids` with their places on disk, by book id: one query for any number of books. */
export async function downloadSources(db: Db, ids: readonly number[]): Promise<Map<number, DownloadSource>> {
  if (ids.length === 0) return new Map();
  const [rows, priorities] = await Promise.all([
    db
      .selectFrom('book_file')
      .innerJoin('book', 'book.id', 'book_file.book_id')
      .innerJoin('library', 'library.id', 'book.library_id')
      .leftJoin('library_path', 'library_path.id', 'book_file.library_path_id')
      .select([...FILE_COLUMNS, 'book_file.file_name', 'book_file.file_sub_path', 'library_path.path as root', 'book.library_id'])
      .where('book_file.is_book', '=', 1)
      .where(sql<boolean>`book_file.book_id in ${idsSubquery(dialectOf(db), ids)}`)
      .execute(),
    libraryPriorities(kyselyExec(db)),
  ]);
  const primaries = primaryFiles(rows, priorities, new Map(rows.map((r) => [r.book_id, r.library_id])));
  const byId = new Map(rows.map((r) => [r.id, r]));
  const out = new Map<number, DownloadSource>();
  for (const [bookId, primary] of primaries) {
    const row = byId.get(primary.id);
    if (row) out.set(bookId, { fileName: row.file_name, path: row.root === null ? undefined : pathWithin(row.root, row.file_sub_path, row.file_name), primary });
  }
  return out;
}

/** The bytes a download of the book sends: converting to KEPUB first when the settings say so. */
export async function koboDownload(db: Db, cacheRoot: string, bookId: number, server: KoboServerSettings): Promise<KoboDownload> {
  return downloadOf((await downloadSources(db, [bookId])).get(bookId), cacheRoot, server);
}

/** What a download of a book with this primary file sends (see koboDownload). */
export async function downloadOf(source: DownloadSource | undefined, cacheRoot: string, server: KoboServerSettings): Promise<KoboDownload> {
  if (!source) return { kind: 'missing' };
  const { primary, path } = source;
  if (primary.bookType !== 'EPUB') return { kind: 'not-epub' };
  const info = path ? await stat(path).catch(() => undefined) : undefined;
  if (!path || !info?.isFile()) return { kind: 'missing' };
  if (convertsToKepub(primary, server)) {
    const fingerprint = kepubFingerprint(primary.hash, primary.id, info.size, info.mtimeMs);
    const outcome = await kepubFor(cacheRoot, { path, fingerprint, hyphenate: server.forceEnableHyphenation });
    if (outcome.kind === 'converted') return { kind: 'file', path: outcome.path, fileName: `${source.fileName.replace(/\.epub$/i, '')}.kepub.epub`, size: outcome.size };
    return { kind: 'file', path, fileName: source.fileName, size: info.size, conversionFailure: outcome.reason };
  }
  return { kind: 'file', path, fileName: source.fileName, size: info.size };
}

/** Conversions run side by side at most this many at a time (they are CPU work; small servers have 2–4 cores). */
const PARALLEL_CONVERSIONS = 2;

/**
 * The size a download of this file sends, from what the catalog and this process already know, without touching the
 * disk: the file's size as last scanned, or the size of its conversion once made (or found made). Undefined when that
 * is not known yet (never converted in this process, a catalog without the file's size) and the disk must tell.
 */
export function knownDownloadSize(primary: KoboPrimaryFile, server: KoboServerSettings): number | undefined {
  if (primary.sizeBytes === null) return undefined;
  if (!convertsToKepub(primary, server)) return primary.sizeBytes;
  if (primary.fingerprint === undefined) return undefined;
  const known = knownKepub({ fingerprint: primary.fingerprint, hyphenate: server.forceEnableHyphenation });
  if (known === undefined) return undefined;
  return known.kind === 'converted' ? known.size : primary.sizeBytes;
}

/** A BookMetadata object about to be sent, with the primary file its download sends. */
export interface AnnouncedDownload {
  metadata: Json;
  primary: KoboPrimaryFile;
}

/**
 * Sets `Size` of every download entry of the metadata to the size of what the download will send: sizes already known
 * are taken as they are (knownDownloadSize); the others, and files the catalog holds as missing, are looked at on
 * disk, converting books not converted yet, so the figure is exact.
 */
export async function settleDownloadSizes(db: Db, cacheRoot: string, server: KoboServerSettings, announced: readonly AnnouncedDownload[]): Promise<void> {
  const queue: AnnouncedDownload[] = [];
  for (const entry of announced) {
    if (!Array.isArray(entry.metadata.DownloadUrls) || entry.metadata.DownloadUrls.length === 0) continue;
    const size = entry.primary.missing ? undefined : knownDownloadSize(entry.primary, server);
    if (size === undefined) queue.push(entry);
    else setSize(entry.metadata, size);
  }
  if (queue.length === 0) return;
  const sources = await downloadSources(db, queue.map((entry) => Number(entry.metadata.EntitlementId)));
  const work = async (): Promise<void> => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      // A book whose size cannot be worked out now (its file just went away) keeps the catalog's figure.
      const download = await downloadOf(sources.get(Number(next.metadata.EntitlementId)), cacheRoot, server).catch(() => undefined);
      if (download?.kind === 'file') setSize(next.metadata, download.size);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_CONVERSIONS }, work));
}

function setSize(metadata: Json, size: number): void {
  for (const entry of metadata.DownloadUrls as Json[]) entry.Size = size;
}
