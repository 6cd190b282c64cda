// The book entries of one feed page: the catalog bundles of those books (one set query per table), turned into the
// feed model with their downloads, cover and, for comics, the page stream and the reader's last page.
import { loadBundles } from '../books/book-bundles.ts';
import { parseFormatPriority, type BookBundle, type BookFileRow } from '../books/book-json.ts';
import { pickPrimary } from '../books/primary-file.ts';
import type { Store } from '../store/store.ts';
import type { BookEntry, PageStream } from './feed.ts';
import { acquisitionType, formatTitle } from './mime.ts';

type Row = Record<string, unknown>;

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value : undefined);
const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/** An instant as Atom and OPDS 2 want it (`…Z`); stored values from other tools may lack the zone or be unreadable. */
export function instant(value: unknown, fallback: string): string {
  if (typeof value !== 'string' || value === '') return fallback;
  const zoned = /[zZ]|[+-]\d{2}:?\d{2}$/.test(value) ? value : `${value.replace(' ', 'T')}Z`;
  const ms = Date.parse(zoned);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : fallback;
}

function titleOf(bundle: BookBundle, primary: BookFileRow | undefined): string {
  const title = text(bundle.metadata?.title);
  if (title) return title;
  const name = primary?.file_name;
  if (name) {
    const dot = name.lastIndexOf('.');
    return dot > 0 ? name.slice(0, dot) : name;
  }
  return `Book ${bundle.book.id}`;
}

/** The primary file first (by the library's format priority), then the other book files by age. */
function orderedFiles(bundle: BookBundle): BookFileRow[] {
  const files = bundle.files.filter((f) => f.is_book === 1);
  const primary = pickPrimary(files, parseFormatPriority(bundle.book.format_priority));
  return primary ? [primary, ...files.filter((f) => f !== primary)] : files;
}

interface ComicProgress {
  page: number;
  at: string | null;
}

/** The reader's last comic page per file and per book (the per-book column when no per-file row exists). */
async function comicProgress(store: Store, userId: number, bookIds: number[], fileIds: number[]): Promise<{ byFile: Map<number, ComicProgress>; byBook: Map<number, ComicProgress> }> {
  const ids = store.dialect.jsonValues('integer');
  const byFile = new Map<number, ComicProgress>();
  const byBook = new Map<number, ComicProgress>();
  if (fileIds.length > 0) {
    const rows = (await store.exec.all(`SELECT book_file_id AS id, position_data AS page, last_read_time AS at FROM user_book_file_progress WHERE user_id = ? AND book_file_id IN (${ids})`, [
      userId,
      JSON.stringify(fileIds),
    ])) as { id: number; page: string | null; at: string | null }[];
    for (const r of rows) {
      const page = r.page !== null && /^\s*\d+\s*$/.test(r.page) ? Number(r.page) : undefined;
      if (page !== undefined && page > 0) byFile.set(r.id, { page, at: r.at });
    }
  }
  if (bookIds.length > 0) {
    const rows = (await store.exec.all(`SELECT book_id AS id, cbx_progress AS page, last_read_time AS at FROM user_book_progress WHERE user_id = ? AND cbx_progress > 0 AND book_id IN (${ids})`, [
      userId,
      JSON.stringify(bookIds),
    ])) as { id: number; page: number; at: string | null }[];
    for (const r of rows) byBook.set(r.id, { page: r.page, at: r.at });
  }
  return { byFile, byBook };
}

/** Feed entries for the given books that exist, in the order given. */
export async function bookEntries(store: Store, ids: readonly number[], userId: number, now: string): Promise<BookEntry[]> {
  if (ids.length === 0) return [];
  const bundles = await loadBundles(store, ids, { listView: false, withDescription: true });
  const comicFiles = bundles.flatMap((b) => orderedFiles(b).filter((f) => f.book_type === 'CBX' && f.is_folder_based !== 1));
  const pageCounts = new Map<number, number>();
  if (comicFiles.length > 0) {
    const rows = (await store.exec.all(`SELECT id, page_count FROM book_file WHERE page_count > 0 AND id IN (${store.dialect.jsonValues('integer')})`, [
      JSON.stringify(comicFiles.map((f) => f.id)),
    ])) as { id: number; page_count: number }[];
    for (const r of rows) pageCounts.set(r.id, r.page_count);
  }
  const progress = await comicProgress(store, userId, bundles.map((b) => b.book.id), [...pageCounts.keys()]);

  const byId = new Map<number, BookEntry>();
  for (const bundle of bundles) {
    const meta: Row = bundle.metadata ?? {};
    const files = orderedFiles(bundle);
    const primary = files[0];
    const seriesName = text(meta.series_name);
    const entry: BookEntry = {
      type: 'book',
      bookId: bundle.book.id,
      title: titleOf(bundle, primary),
      subtitle: text(meta.subtitle),
      updated: instant(bundle.book.added_on, now),
      published: text(meta.published_date),
      authors: bundle.authors,
      publisher: text(meta.publisher),
      language: text(meta.language),
      categories: bundle.categories,
      description: text(meta.description),
      isbn13: text(meta.isbn_13),
      isbn10: text(meta.isbn_10),
      series: seriesName ? { name: seriesName, position: num(meta.series_number) } : undefined,
      pageCount: num(meta.page_count),
      durationSeconds: files.find((f) => f.book_type === 'AUDIOBOOK')?.duration_seconds ?? undefined,
      audiobook: primary?.book_type === 'AUDIOBOOK',
      files: files.map((f) => ({ id: f.id, type: acquisitionType(f), title: formatTitle(f) })),
      coverStamp: text(meta.cover_updated_on) ?? text(meta.audiobook_cover_updated_on),
    };
    const comic = files.find((f) => pageCounts.has(f.id));
    if (comic) {
      const stream: PageStream = { fileId: comic.id, count: pageCounts.get(comic.id) as number };
      const last = progress.byFile.get(comic.id) ?? (comic === primary ? progress.byBook.get(bundle.book.id) : undefined);
      if (last) {
        stream.lastRead = Math.min(last.page, stream.count);
        if (last.at) stream.lastReadUpdate = instant(last.at, now);
      }
      entry.stream = stream;
    }
    byId.set(entry.bookId, entry);
  }
  return ids.map((id) => byId.get(id)).filter((e): e is BookEntry => e !== undefined);
}
