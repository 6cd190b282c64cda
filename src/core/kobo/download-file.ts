// What a Kobo receives when it downloads a book: the KEPUB conversion of the primary EPUB (made once, then cached) or
// the EPUB itself, and its exact size, which the sync announces as `DownloadUrls[].Size` before the device asks.
import { stat } from 'node:fs/promises';
import { sql } from 'kysely';
import { pathWithin } from '../books/file-locations.ts';
import { idsSubquery } from '../store/dialect-forms.ts';
import { dialectOf } from '../store/dialect.ts';
import type { Db } from '../store/store.ts';
import { convertsToKepub } from './compatibility.ts';
import type { Json } from './entitlements.ts';
import { kepubFor } from './kepub-cache.ts';
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
    libraryPriorities(db),
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
    if (outcome.kind === 'converted') {
      const converted = await stat(outcome.path);
      return { kind: 'file', path: outcome.path, fileName: `${source.fileName.replace(/\.epub$/i, '')}.kepub.epub`, size: converted.size };
    }
    return { kind: 'file', path, fileName: source.fileName, size: info.size, conversionFailure: outcome.reason };
  }
  return { kind: 'file', path, fileName: source.fileName, size: info.size };
}

/** Conversions run side by side at most this many at a time (they are CPU work; small servers have 2–4 cores). */
const PARALLEL_CONVERSIONS = 2;

/**
 * Sets `Size` of every download entry in `metadata` (BookMetadata objects, keyed by their `EntitlementId`) to the size
 * of what the download will send. Books not converted yet are converted now, so the figure is exact.
 */
export async function settleDownloadSizes(db: Db, cacheRoot: string, server: KoboServerSettings, metadata: readonly Json[]): Promise<void> {
  const queue = metadata.filter((m) => Array.isArray(m.DownloadUrls) && m.DownloadUrls.length > 0);
  const sources = await downloadSources(db, queue.map((m) => Number(m.EntitlementId)));
  const work = async (): Promise<void> => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      // A book whose size cannot be worked out now (its file just went away) keeps the catalog's figure.
      const download = await downloadOf(sources.get(Number(next.EntitlementId)), cacheRoot, server).catch(() => undefined);
      if (download?.kind !== 'file') continue;
      for (const entry of next.DownloadUrls as Json[]) entry.Size = download.size;
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_CONVERSIONS }, work));
}

/** The BookMetadata objects of sync items (new entitlements and changed metadata). */
export function syncedMetadata(items: readonly Json[]): Json[] {
  const out: Json[] = [];
  for (const item of items) {
    const holder = (item.NewEntitlement ?? item.ChangedProductMetadata) as Json | undefined;
    if (holder?.BookMetadata) out.push(holder.BookMetadata as Json);
  }
  return out;
}
