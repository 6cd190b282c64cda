// Per-user, per-book reader preferences (font, layout, zoom...), one table per reader as in Grimmory.
import type { Db } from '../store/store.ts';
import { loadBookFiles, readerKind } from './book-files.ts';
import { ReadingError } from './reading-error.ts';

export interface EbookViewerPreferences {
  bookId?: number | null;
  userId?: number | null;
  fontFamily?: string | null;
  fontSize?: number | null;
  gap?: number | null;
  hyphenate?: boolean | null;
  isDark?: boolean | null;
  justify?: boolean | null;
  lineHeight?: number | null;
  maxBlockSize?: number | null;
  maxColumnCount?: number | null;
  maxInlineSize?: number | null;
  theme?: string | null;
  flow?: string | null;
}

export interface PdfViewerPreferences {
  bookId?: number | null;
  zoom?: string | null;
  spread?: string | null;
  isDarkTheme?: boolean | null;
}

/** The newer PDF reader and the comic reader share this shape (their enum values differ slightly). */
export interface PagedViewerPreferences {
  bookId?: number | null;
  pageSpread?: string | null;
  pageViewMode?: string | null;
  fitMode?: string | null;
  scrollMode?: string | null;
  backgroundColor?: string | null;
}

export interface BookViewerSettings {
  pdfSettings?: PdfViewerPreferences | null;
  newPdfSettings?: PagedViewerPreferences | null;
  ebookSettings?: EbookViewerPreferences | null;
  cbxSettings?: PagedViewerPreferences | null;
}

const flag = (v: number | null): boolean | null => (v === null ? null : v === 1);
const bit = (v: boolean | null | undefined): number | null => (v === null || v === undefined ? null : v ? 1 : 0);

async function pagedPreferences(db: Db, table: 'new_pdf_viewer_preference' | 'cbx_viewer_preference', userId: number, bookId: number): Promise<PagedViewerPreferences | null> {
  const row = await db.selectFrom(table).selectAll().where('user_id', '=', userId).where('book_id', '=', bookId).executeTakeFirst();
  if (!row) return null;
  return { bookId, pageSpread: row.spread, pageViewMode: row.view_mode, fitMode: row.fit_mode, scrollMode: row.scroll_mode, backgroundColor: row.background_color };
}

/** The caller's preferences for the reader that opens `bookFileId`; only that reader's block is filled. */
export async function getViewerSettings(db: Db, userId: number, bookId: number, bookFileId: number): Promise<Required<BookViewerSettings>> {
  const settings: Required<BookViewerSettings> = { pdfSettings: null, newPdfSettings: null, ebookSettings: null, cbxSettings: null };
  const file = await db.selectFrom('book_file').select(['id', 'book_type']).where('book_id', '=', bookId).where('id', '=', bookFileId).executeTakeFirst();
  if (!file) throw new ReadingError('FILE_NOT_FOUND', `File not found: Book file not found: ${bookFileId}`);
  const kind = readerKind(file.book_type);
  if (kind === 'ebook') {
    const row = await db.selectFrom('ebook_viewer_preference').selectAll().where('user_id', '=', userId).where('book_id', '=', bookId).executeTakeFirst();
    if (row) {
      settings.ebookSettings = {
        bookId,
        userId,
        fontFamily: row.font_family,
        fontSize: row.font_size,
        gap: row.gap,
        hyphenate: flag(row.hyphenate),
        isDark: flag(row.is_dark),
        justify: flag(row.justify),
        lineHeight: row.line_height,
        maxBlockSize: row.max_block_size,
        maxColumnCount: row.max_column_count,
        maxInlineSize: row.max_inline_size,
        theme: row.theme,
        flow: row.flow,
      };
    }
  } else if (kind === 'pdf') {
    const row = await db.selectFrom('pdf_viewer_preference').selectAll().where('user_id', '=', userId).where('book_id', '=', bookId).executeTakeFirst();
    if (row) settings.pdfSettings = { bookId, zoom: row.zoom, spread: row.spread, isDarkTheme: flag(row.is_dark_theme) };
    settings.newPdfSettings = await pagedPreferences(db, 'new_pdf_viewer_preference', userId, bookId);
  } else if (kind === 'cbx') {
    settings.cbxSettings = await pagedPreferences(db, 'cbx_viewer_preference', userId, bookId);
  } else {
    throw new ReadingError('UNSUPPORTED_BOOK_TYPE', 'Unsupported book type for viewer settings');
  }
  return settings;
}

function pagedRow(p: PagedViewerPreferences): { spread: string | null; view_mode: string | null; fit_mode: string | null; scroll_mode: string | null; background_color: string | null } {
  return { spread: p.pageSpread ?? null, view_mode: p.pageViewMode ?? null, fit_mode: p.fitMode ?? null, scroll_mode: p.scrollMode ?? null, background_color: p.backgroundColor ?? null };
}

/**
 * Stores the block matching the book's primary file (ebook, PDF — both PDF blocks — or comic); other blocks are ignored.
 * Each stored block replaces the previous one whole, as Grimmory does.
 */
export async function saveViewerSettings(db: Db, userId: number, bookId: number, settings: BookViewerSettings): Promise<void> {
  const book = await loadBookFiles(db, bookId);
  if (!book) throw new ReadingError('BOOK_NOT_FOUND', `Book not found with ID: ${bookId}`);
  const kind = readerKind(book.primary?.book_type ?? null);
  if (kind !== 'ebook' && kind !== 'pdf' && kind !== 'cbx') throw new ReadingError('UNSUPPORTED_BOOK_TYPE', 'Unsupported book type for viewer settings');
  const key = { user_id: userId, book_id: bookId };
  await db.transaction().execute(async (trx) => {
    if (kind === 'ebook') {
      const e = settings.ebookSettings;
      if (!e) return;
      const values = {
        font_family: e.fontFamily ?? null,
        font_size: e.fontSize ?? null,
        gap: e.gap ?? null,
        hyphenate: bit(e.hyphenate),
        is_dark: bit(e.isDark),
        justify: bit(e.justify),
        line_height: e.lineHeight ?? null,
        max_block_size: e.maxBlockSize ?? null,
        max_column_count: e.maxColumnCount ?? null,
        max_inline_size: e.maxInlineSize ?? null,
        theme: e.theme ?? null,
        flow: e.flow ?? null,
      };
      await trx.insertInto('ebook_viewer_preference').values({ ...key, ...values }).onConflict((oc) => oc.columns(['user_id', 'book_id']).doUpdateSet(values)).execute();
    } else if (kind === 'pdf') {
      if (settings.pdfSettings) {
        const p = settings.pdfSettings;
        const values = { zoom: p.zoom ?? null, spread: p.spread ?? null, is_dark_theme: bit(p.isDarkTheme) };
        await trx.insertInto('pdf_viewer_preference').values({ ...key, ...values }).onConflict((oc) => oc.columns(['user_id', 'book_id']).doUpdateSet(values)).execute();
      }
      if (settings.newPdfSettings) {
        const values = pagedRow(settings.newPdfSettings);
        await trx.insertInto('new_pdf_viewer_preference').values({ ...key, ...values }).onConflict((oc) => oc.columns(['user_id', 'book_id']).doUpdateSet(values)).execute();
      }
    } else if (settings.cbxSettings) {
      const values = pagedRow(settings.cbxSettings);
      await trx.insertInto('cbx_viewer_preference').values({ ...key, ...values }).onConflict((oc) => oc.columns(['user_id', 'book_id']).doUpdateSet(values)).execute();
    }
  });
}
