// Write-back for a catalog book: the metadata persistence settings decide whether its primary file gets the
// catalog's metadata; after a write the file's catalog row gets the new size, time and hashes, so the next scan sees
// the file as unchanged instead of reading the metadata back in.
import { stat } from 'node:fs/promises';
import { bookJson } from '../../books/book-view.ts';
import { bookFiles } from '../../books/file-locations.ts';
import { fileFingerprints } from '../../formats/hash.ts';
import { readSetting } from '../../settings/app-settings.ts';
import type { Db } from '../../store/store.ts';
import { writeMetadataToFile, WriteBackError } from './index.ts';
import type { FileComicMetadata, FileMetadata, WriteBackFormat, WriteBackOptions } from './types.ts';

export interface FormatPersistence {
  enabled: boolean;
  maxFileSizeInMb: number;
}

export type PersistenceSettings = Record<'epub' | 'pdf' | 'cbx' | 'audiobook', FormatPersistence>;

/** `saveToOriginalFile` of METADATA_PERSISTENCE_SETTINGS (behaviors §7), with its defaults. */
export async function persistenceSettings(db: Db): Promise<PersistenceSettings> {
  const value = (await readSetting(db, 'METADATA_PERSISTENCE_SETTINGS')) as { saveToOriginalFile?: Record<string, Partial<FormatPersistence> | null> } | null;
  const format = (name: string): FormatPersistence => {
    const f = value?.saveToOriginalFile?.[name];
    return { enabled: f?.enabled === true, maxFileSizeInMb: typeof f?.maxFileSizeInMb === 'number' && f.maxFileSizeInMb > 0 ? f.maxFileSizeInMb : 250 };
  };
  return { epub: format('epub'), pdf: format('pdf'), cbx: format('cbx'), audiobook: format('audiobook') };
}

export function anyFormatEnabled(settings: PersistenceSettings): boolean {
  return settings.epub.enabled || settings.pdf.enabled || settings.cbx.enabled;
}

type Json = Record<string, unknown>;

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const names = (v: unknown): string[] => (Array.isArray(v) ? v.filter((n): n is string => typeof n === 'string' && n.trim() !== '') : []);

function comicOf(c: Json | undefined): FileComicMetadata | undefined {
  if (!c) return undefined;
  const out: FileComicMetadata = {
    pencillers: names(c.pencillers), inkers: names(c.inkers), colorists: names(c.colorists), letterers: names(c.letterers),
    coverArtists: names(c.coverArtists), editors: names(c.editors), characters: names(c.characters), teams: names(c.teams), locations: names(c.locations),
  };
  const assign = <K extends keyof FileComicMetadata>(key: K, value: FileComicMetadata[K] | undefined): void => {
    if (value !== undefined) out[key] = value;
  };
  assign('issueNumber', text(c.issueNumber));
  assign('volumeNumber', num(c.volumeNumber));
  assign('storyArc', text(c.storyArc));
  assign('storyArcNumber', num(c.storyArcNumber));
  assign('alternateSeries', text(c.alternateSeries));
  assign('alternateIssue', text(c.alternateIssue));
  assign('imprint', text(c.imprint));
  assign('format', text(c.format));
  assign('blackAndWhite', typeof c.blackAndWhite === 'boolean' ? c.blackAndWhite : undefined);
  assign('manga', typeof c.manga === 'boolean' ? c.manga : undefined);
  assign('readingDirection', text(c.readingDirection));
  assign('webLink', text(c.webLink));
  assign('notes', text(c.notes));
  return out;
}

/** The catalog's metadata of a book (its BookMetadata JSON) in the writers' shape. */
export function fileMetadataFrom(m: Json): FileMetadata {
  const out: FileMetadata = { authors: names(m.authors), categories: names(m.categories), tags: names(m.tags) };
  const strings = ['title', 'subtitle', 'publisher', 'description', 'language', 'asin', 'goodreadsId', 'googleId', 'hardcoverId', 'hardcoverBookId', 'comicvineId', 'lubimyczytacId', 'ranobedbId', 'seriesName'] as const;
  for (const key of strings) {
    const value = text(m[key]);
    if (value !== undefined) out[key] = value;
  }
  const isbn13 = text(m.isbn13);
  if (isbn13) out.isbn13 = isbn13;
  const isbn10 = text(m.isbn10);
  if (isbn10) out.isbn10 = isbn10;
  const date = text(m.publishedDate);
  if (date && /^\d{4}-\d{2}-\d{2}$/.test(date)) out.publishedDate = date;
  const seriesNumber = num(m.seriesNumber);
  if (seriesNumber !== undefined) out.seriesNumber = seriesNumber;
  const seriesTotal = num(m.seriesTotal);
  if (seriesTotal !== undefined) out.seriesTotal = Math.trunc(seriesTotal);
  const ageRating = num(m.ageRating);
  if (ageRating !== undefined) out.ageRating = ageRating;
  const comic = comicOf(m.comicMetadata as Json | undefined);
  if (comic) out.comic = comic;
  return out;
}

export type BookWriteBack =
  | { status: 'written' | 'unchanged' }
  | { status: 'skipped'; reason: string }
  | { status: 'failed'; code: string; reason: string };

const FORMATS: Record<string, { format: WriteBackFormat; setting: 'epub' | 'pdf' | 'cbx' }> = {
  EPUB: { format: 'epub', setting: 'epub' },
  PDF: { format: 'pdf', setting: 'pdf' },
  CBX: { format: 'cbz', setting: 'cbx' },
};

/** Writes the catalog's metadata into the book's primary file when the settings say so. Never throws for the file. */
export async function writeBackBook(db: Db, bookId: number, options: Pick<WriteBackOptions, 'hooks'> & { settings?: PersistenceSettings } = {}): Promise<BookWriteBack> {
  const settings = options.settings ?? (await persistenceSettings(db));
  const located = await bookFiles(db, bookId);
  const primary = located?.primary;
  if (!located || !primary) return { status: 'skipped', reason: 'the book has no file' };
  const row = await db.selectFrom('book_file').select(['book_type', 'archive_type', 'is_folder_based', 'missing_at']).where('id', '=', primary.id).executeTakeFirst();
  const kind = FORMATS[row?.book_type ?? ''];
  if (!row || !kind || row.is_folder_based === 1) return { status: 'skipped', reason: `metadata is not written into ${row?.book_type ?? 'these'} files` };
  if (kind.format === 'cbz' && row.archive_type !== 'ZIP') return { status: 'skipped', reason: 'metadata is written into CBZ comics only, not RAR or 7z ones' };
  if (!settings[kind.setting].enabled) return { status: 'skipped', reason: `writing metadata into ${kind.setting.toUpperCase()} files is switched off` };
  if (row.missing_at || !primary.path) return { status: 'skipped', reason: 'the file is missing' };
  const book = await bookJson(db, bookId);
  if (!book) return { status: 'skipped', reason: 'the book is gone' };
  const path = primary.path;
  try {
    const result = await writeMetadataToFile(path, kind.format, fileMetadataFrom(book.metadata as Json), {
      maxFileBytes: settings[kind.setting].maxFileSizeInMb * 1024 * 1024,
      ...(options.hooks ? { hooks: options.hooks } : {}),
    });
    if (result.status !== 'written') return result;
    const info = await stat(path);
    const prints = await fileFingerprints(path);
    // The KOReader hash follows the file (a fresh download has the new one); initial_hash keeps the first one seen.
    await db
      .updateTable('book_file')
      .set({ size_bytes: info.size, file_size_kb: Math.round(info.size / 1024), mtime_ms: Math.trunc(info.mtimeMs), current_hash: prints.partialMd5, content_hash: prints.contentHash })
      .where('id', '=', primary.id)
      .execute();
    return result;
  } catch (error) {
    if (error instanceof WriteBackError) return { status: 'failed', code: error.code, reason: error.message };
    return { status: 'failed', code: 'IO', reason: error instanceof Error ? error.message : String(error) };
  }
}
