// What a Kobo receives when it downloads a book: the KEPUB conversion of the primary EPUB (made once, then cached) or
// the EPUB itself, and its exact size, which the sync announces as `DownloadUrls[].Size` before the device asks.
import { stat } from 'node:fs/promises';
import { bookFiles } from '../books/file-locations.ts';
import type { Db } from '../store/store.ts';
import { convertsToKepub } from './compatibility.ts';
import type { Json } from './entitlements.ts';
import { kepubFor } from './kepub-cache.ts';
import { kepubFingerprint, loadKoboBooks } from './kobo-books.ts';
import type { KoboServerSettings } from './server-settings.ts';

export type KoboDownload =
  | { kind: 'file'; path: string; fileName: string; size: number; conversionFailure?: string }
  | { kind: 'not-epub' }
  | { kind: 'missing' };

/** The bytes a download of the book sends: converting to KEPUB first when the settings say so. */
export async function koboDownload(db: Db, cacheRoot: string, bookId: number, server: KoboServerSettings): Promise<KoboDownload> {
  const primary = (await bookFiles(db, bookId))?.primary;
  if (!primary) return { kind: 'missing' };
  if (primary.bookType !== 'EPUB') return { kind: 'not-epub' };
  const info = primary.path ? await stat(primary.path).catch(() => undefined) : undefined;
  if (!primary.path || !info?.isFile()) return { kind: 'missing' };
  const [book] = await loadKoboBooks(db, [bookId]);
  if (book?.primary?.id === primary.id && convertsToKepub(book.primary, server)) {
    const fingerprint = kepubFingerprint(book.primary.hash, primary.id, info.size, info.mtimeMs);
    const outcome = await kepubFor(cacheRoot, { path: primary.path, fingerprint, hyphenate: server.forceEnableHyphenation });
    if (outcome.kind === 'converted') {
      const converted = await stat(outcome.path);
      return { kind: 'file', path: outcome.path, fileName: `${primary.fileName.replace(/\.epub$/i, '')}.kepub.epub`, size: converted.size };
    }
    return { kind: 'file', path: primary.path, fileName: primary.fileName, size: info.size, conversionFailure: outcome.reason };
  }
  return { kind: 'file', path: primary.path, fileName: primary.fileName, size: info.size };
}

/** Conversions run side by side at most this many at a time (they are CPU work; small servers have 2–4 cores). */
const PARALLEL_CONVERSIONS = 2;

/**
 * Sets `Size` of every download entry in `metadata` (BookMetadata objects, keyed by their `EntitlementId`) to the size
 * of what the download will send. Books not converted yet are converted now, so the figure is exact.
 */
export async function settleDownloadSizes(db: Db, cacheRoot: string, server: KoboServerSettings, metadata: readonly Json[]): Promise<void> {
  const queue = metadata.filter((m) => Array.isArray(m.DownloadUrls) && m.DownloadUrls.length > 0);
  const work = async (): Promise<void> => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      // A book whose size cannot be worked out now (its file just went away) keeps the catalog's figure.
      const download = await koboDownload(db, cacheRoot, Number(next.EntitlementId), server).catch(() => undefined);
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
