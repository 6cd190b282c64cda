// Taking new files of the bookdrop folder into the review queue: read what each says about itself and its cover,
// optionally ask the metadata providers, and hold it as PENDING_REVIEW. Nothing here changes the files themselves.
import { mkdir, readdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { asFormatError } from '../formats/errors.ts';
import { emptyMetadata } from '../formats/types.ts';
import { readSetting } from '../settings/app-settings.ts';
import type { Store } from '../store/store.ts';
import { forEachLimited } from '../scan/task-runner.ts';
import { nowIso } from '../time.ts';
import { ORIGINAL_LEFT_NOTE, recoverInterruptedImports, removeVanished } from './bookdrop-cleanup.ts';
import { PENDING } from './bookdrop-files.ts';
import { baseName, dropMetadata, metadataFromExtraction, type DropMetadata } from './bookdrop-metadata.ts';
import { bookdropCoversDir, isBookdropCandidate, isInsideDir, saveBookdropCover } from './bookdrop-paths.ts';
import { emitEvent } from '../events/live-events.ts';

/**
 * Proposes provider metadata for a dropped file from what the file says; null when nothing matched. Injected so the
 * bookdrop does not depend on which providers exist (the daemon wires the real ones, tests a fake).
 */
export type BookdropMetadataFetcher = (extracted: DropMetadata, file: { fileName: string; filePath: string }) => Promise<DropMetadata | null>;

export type BookdropLog = (level: 'info' | 'warn' | 'error', message: string, detail?: Record<string, unknown>) => void;

/** What the bookdrop works with, for the daemon and the CLI alike. */
export interface BookdropEnv {
  store: Store;
  bookdropDir: string;
  dataDir: string;
  fetcher?: BookdropMetadataFetcher;
  log?: BookdropLog;
}

export type IntakeOutcome =
  | { kind: 'added'; id: number; path: string; warning?: string }
  | { kind: 'known'; path: string }
  /** Empty, or changed less than `settleMs` ago: probably still being written. Picked up later. */
  | { kind: 'unsettled'; path: string }
  | { kind: 'ignored'; path: string; reason: string };

export interface IntakeOptions {
  /**
   * A file whose content changed (mtime or ctime) less than this long ago is left for later. The watcher passes 0:
   * it only reports a file once its size has stopped changing.
   */
  settleMs?: number;
  /** Ask the providers (default: the METADATA_DOWNLOAD_ON_BOOKDROP setting). */
  fetchMetadata?: boolean;
}

export const DEFAULT_SETTLE_MS = 2_000;

/** Grimmory asks providers only when the file gives something to search by: an identifier, or a real title. */
export function isSearchable(meta: DropMetadata, fileName: string): boolean {
  const ids = [meta.isbn13, meta.isbn10, meta.asin, meta.goodreadsId, meta.googleId, meta.hardcoverId, meta.hardcoverBookId, meta.comicvineId, meta.doubanId, meta.lubimyczytacId, meta.ranobedbId, meta.audibleId];
  if (ids.some((id) => id !== undefined && id.trim() !== '')) return true;
  const title = meta.title?.trim() ?? '';
  return title !== '' && title.toLowerCase() !== baseName(fileName).trim().toLowerCase();
}

/** The same path taken in twice at once by one process (the watcher and a rescan) is read only once. */
const inFlight = new Map<string, Promise<IntakeOutcome>>();

export function intakeFile(env: BookdropEnv, path: string, options: IntakeOptions = {}): Promise<IntakeOutcome> {
  const absolute = resolve(path);
  const running = inFlight.get(absolute);
  if (running) return running;
  const work = intakeUnlocked(env, absolute, options).finally(() => inFlight.delete(absolute));
  inFlight.set(absolute, work);
  return work;
}

async function fetchingWanted(env: BookdropEnv, options: IntakeOptions): Promise<boolean> {
  if (!env.fetcher) return false;
  if (options.fetchMetadata !== undefined) return options.fetchMetadata;
  return (await readSetting(env.store.db, 'METADATA_DOWNLOAD_ON_BOOKDROP')) === true;
}

async function intakeUnlocked(env: BookdropEnv, path: string, options: IntakeOptions): Promise<IntakeOutcome> {
  const fileName = basename(path);
  if (!isInsideDir(resolve(env.bookdropDir), path)) return { kind: 'ignored', path, reason: 'not inside the bookdrop folder' };
  if (!isBookdropCandidate(fileName)) return { kind: 'ignored', path, reason: 'not a book file' };
  const info = await stat(path).catch(() => undefined);
  if (!info) return { kind: 'ignored', path, reason: 'gone' };
  if (!info.isFile()) return { kind: 'ignored', path, reason: 'not a file' };
  const settleMs = options.settleMs ?? DEFAULT_SETTLE_MS;
  if (info.size === 0 || Date.now() - Math.max(info.mtimeMs, info.ctimeMs) < settleMs) return { kind: 'unsettled', path };

  const { db } = env.store;
  const known = await db.selectFrom('bookdrop_file').select(['id', 'file_size', 'status']).where('file_path', '=', path).executeTakeFirst();
  // A file replaced or still growing when it was first read is read again; anything else about it stays.
  if (known && (known.status !== PENDING || known.file_size === info.size)) return { kind: 'known', path };

  // The readers and the image code load with the first file to read: an empty bookdrop never needs them.
  const { formatOf } = await import('../formats/index.ts');
  const format = formatOf(fileName);
  let extracted = emptyMetadata();
  let cover: { data: Buffer; kind: 'book' | 'audiobook' } | undefined;
  let warning: string | undefined;
  try {
    const extraction = await (format as NonNullable<typeof format>).extract(path);
    extracted = extraction.metadata;
    if (extraction.cover) cover = { data: extraction.cover.data, kind: extraction.bookType === 'AUDIOBOOK' ? 'audiobook' : 'book' };
  } catch (error) {
    // Still held for review (the file is there and may be a book Bindery cannot read): under its file name.
    warning = `cannot read the file's metadata: ${asFormatError(error).message}`;
  }
  const original = metadataFromExtraction(extracted, fileName);
  const now = nowIso();
  if (known) {
    await db.updateTable('bookdrop_file').set({ file_size: info.size, original_metadata: JSON.stringify(original), updated_at: now }).where('id', '=', known.id).execute();
    await emitEvent(db, { kind: 'bookdrop-changed' });
    if (cover) await saveCover(env, known.id, cover).catch(() => undefined);
    env.log?.('info', `bookdrop: ${fileName} changed and was read again`, { id: known.id, path });
    return { kind: 'known', path };
  }
  const inserted = await db
    .insertInto('bookdrop_file')
    .values({ file_path: path, file_name: fileName, file_size: info.size, status: PENDING, original_metadata: JSON.stringify(original), fetched_metadata: null, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('file_path').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!inserted) return { kind: 'known', path };
  const id = inserted.id;
  await emitEvent(db, { kind: 'bookdrop-changed' });

  if (cover) {
    try {
      await saveCover(env, id, cover);
    } catch (error) {
      warning = `no cover: ${asFormatError(error).message}`;
    }
  }

  if ((await fetchingWanted(env, options)) && isSearchable(original, fileName)) {
    try {
      const fetched = await env.fetcher?.(original, { fileName, filePath: path });
      if (fetched) {
        await db.updateTable('bookdrop_file').set({ fetched_metadata: JSON.stringify(dropMetadata(fetched)), updated_at: nowIso() }).where('id', '=', id).execute();
      }
    } catch (error) {
      env.log?.('warn', `metadata lookup failed for ${fileName}: ${(error as Error).message}`, { path });
    }
  }
  if (warning) env.log?.('warn', `${fileName}: ${warning}`, { path });
  env.log?.('info', `bookdrop: ${fileName} is waiting for review`, { id, path });
  return { kind: 'added', id, path, ...(warning ? { warning } : {}) };
}

async function saveCover(env: BookdropEnv, id: number, cover: { data: Buffer; kind: 'book' | 'audiobook' }): Promise<void> {
  const { makeCoverImages } = await import('../covers/cover-images.ts');
  const images = await makeCoverImages(cover.data, cover.kind);
  await mkdir(bookdropCoversDir(env.dataDir), { recursive: true });
  await saveBookdropCover(env.dataDir, id, images.cover);
}

/** Every file under the folder that could be a book, hidden folders (and Bindery's partial files) left out. */
export async function bookdropCandidates(dir: string): Promise<string[]> {
  const out: string[] = [];
  const visit = async (folder: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const full = join(folder, entry.name);
      if (entry.isDirectory()) await visit(full);
      else if (entry.isFile() && isBookdropCandidate(entry.name)) out.push(full);
    }
  };
  await visit(dir);
  return out.sort();
}

export interface SyncSummary {
  added: number[];
  known: number;
  unsettled: string[];
  /** Rows dropped because their file is no longer in the folder. */
  removed: number;
  warnings: { path: string; reason: string }[];
}

/** Creates the bookdrop folder when it is missing (Grimmory does the same on start). */
export async function ensureBookdropDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
}

/**
 * Brings the queue in line with the folder: new files are taken in, rows whose file has gone are dropped (unless
 * the folder looks unmounted: empty while rows point into it). What `POST /api/v1/bookdrop/rescan` does.
 */
export async function syncBookdrop(env: BookdropEnv, options: IntakeOptions & { concurrency?: number } = {}): Promise<SyncSummary> {
  await ensureBookdropDir(env.bookdropDir);
  const dir = resolve(env.bookdropDir);
  const summary: SyncSummary = { added: [], known: 0, unsettled: [], removed: 0, warnings: [] };
  const candidates = await bookdropCandidates(dir);
  const recovery = await recoverInterruptedImports(env);
  for (const left of recovery.originalsLeft) summary.warnings.push({ path: left.path, reason: `imported, but ${ORIGINAL_LEFT_NOTE}: ${left.reason}` });
  summary.removed = await removeVanished(env, candidates.length === 0);
  await forEachLimited(candidates, options.concurrency ?? 4, (path) => intakeFile(env, path, options), (_path, outcome) => {
    if (outcome.kind === 'added') {
      summary.added.push(outcome.id);
      if (outcome.warning) summary.warnings.push({ path: outcome.path, reason: outcome.warning });
    } else if (outcome.kind === 'known') summary.known++;
    else if (outcome.kind === 'unsettled') summary.unsettled.push(outcome.path);
  });
  return summary;
}
