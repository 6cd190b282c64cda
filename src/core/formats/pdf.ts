// PDF books: page count, Info dictionary and XMP metadata, and page one rendered as the cover.
import { statSync, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { FormatError, asFormatError } from './errors.ts';
import { openFileRanges, type FileRanges } from './file-ranges.ts';
import { renderCover } from './pdf-cover.ts';
import { readPdfDirectly, type DirectPdf } from './pdf-direct.ts';
import type { CoverRenderLimits } from './pdf-cover.ts';
import { openPdf, withTimeout } from './pdf-loader.ts';
import { buildPdfMetadata } from './pdf-metadata.ts';
import type { PdfInfo } from './pdf-metadata.ts';
import { parseXmp } from './pdf-xmp.ts';
import type { XmpFields } from './pdf-xmp.ts';
import type { ExtractedCover, ExtractOptions, Extraction } from './types.ts';

export interface PdfLimits {
  /**
   * Largest PDF we open. pdf.js reads only the ranges it needs, but it reserves address space for the whole file, so
   * there is a ceiling.
   */
  maxFileBytes: number;
  /**
   * Largest damaged PDF (its trailer does not lead to a cross-reference table) read whole into memory so pdf.js can
   * rebuild its index, and largest single read pdf.js may ask for. pdf.js holds about four copies while repairing, so
   * this stays modest.
   */
  maxInMemoryBytes: number;
  /** Opening plus reading metadata; a stalled parse becomes CORRUPT. */
  openTimeoutMs: number;
  cover: CoverRenderLimits;
}

export const PDF_LIMITS: PdfLimits = {
  maxFileBytes: 2 * 1024 * 1024 * 1024,
  maxInMemoryBytes: 64 * 1024 * 1024,
  openTimeoutMs: 60_000,
  cover: { longSide: 1000, maxPixels: 25_000_000, timeoutMs: 30_000 },
};

/** pdf.js accepts a header anywhere in the first KiB, so do we. */
const HEADER_WINDOW = 1024;

export async function extractPdf(path: string, options: ExtractOptions = {}, limits: PdfLimits = PDF_LIMITS): Promise<Extraction> {
  try {
    // One open file for the header check and the direct read, which most PDFs need and nothing more: no pdf.js at all.
    // pdf.js opens the file itself to render page one, or when the direct read cannot follow it (encrypted, damaged,
    // unusual).
    // Opening has one time limit, whichever reader does it.
    const opening = performance.now();
    const blocking = options.blocking ?? false;
    const size = checkedSize(blocking ? statSync(path) : await stat(path), limits);
    const ranges = await openFileRanges(path, blocking);
    let direct: DirectPdf | undefined;
    try {
      checkHeader(await ranges.read(0, Math.min(HEADER_WINDOW, size)));
      direct = await withTimeout(readDirectly(ranges, options.skipCover !== true), limits.openTimeoutMs, 'Opening the PDF');
    } finally {
      ranges.close();
    }
    if (direct && (options.skipCover || direct.cover)) {
      const extraction: Extraction = { bookType: 'PDF', metadata: buildPdfMetadata(direct.info, readXmpQuietly(direct.xmp), direct.pageCount) };
      if (direct.cover) extraction.cover = { data: direct.cover, mime: 'image/jpeg' };
      return extraction;
    }
    // Whole milliseconds: the time left is named in the error when it runs out.
    const pdf = await openPdf(path, size, { timeoutMs: Math.max(1, Math.ceil(limits.openTimeoutMs - (performance.now() - opening))), maxInMemoryBytes: limits.maxInMemoryBytes });
    try {
      const document = pdf.document;
      const pageCount = document.numPages;
      if (!(pageCount > 0)) throw new FormatError('CORRUPT', 'the PDF has no pages');
      const { info, metadata } = await pdf.guard(document.getMetadata(), limits.openTimeoutMs, 'Reading PDF metadata');
      const xmp = readXmpQuietly(metadata?.getRaw());
      const extraction: Extraction = { bookType: 'PDF', metadata: buildPdfMetadata(info as PdfInfo, xmp, pageCount) };
      if (!options.skipCover) {
        const cover = await coverOrNothing(() => pdf.guard(renderCover(document, limits.cover), limits.cover.timeoutMs, 'Rendering page one'));
        if (cover) extraction.cover = cover;
      }
      return extraction;
    } finally {
      await pdf.close();
    }
  } catch (error) {
    throw pdfError(error);
  }
}

/** The direct read (pdf-direct.ts), or undefined when pdf.js must open the file. */
async function readDirectly(ranges: FileRanges, cover: boolean): Promise<DirectPdf | undefined> {
  try {
    return await readPdfDirectly(ranges.read, ranges.size, { cover });
  } catch {
    return undefined;
  }
}

/** Checked before the file is opened: opening a FIFO would wait for a writer. */
function checkedSize(info: Stats, limits: PdfLimits): number {
  if (!info.isFile()) throw new FormatError('IO', 'not a regular file');
  if (info.size === 0) throw new FormatError('EMPTY', 'the PDF is an empty file');
  if (info.size > limits.maxFileBytes) {
    throw new FormatError('TOO_LARGE', `the PDF is ${info.size} bytes, more than the ${limits.maxFileBytes} we open`);
  }
  return info.size;
}

function checkHeader(head: Buffer): void {
  if (!head.includes('%PDF-')) throw new FormatError('CORRUPT', 'not a PDF: no %PDF- header');
}

/** The XMP packet is a second opinion on the Info dictionary: if it is malformed or unsafe, the Info still stands. */
function readXmpQuietly(raw: string | undefined): XmpFields | undefined {
  if (!raw) return undefined;
  try {
    return parseXmp(raw);
  } catch {
    return undefined;
  }
}

/** A page that will not render costs the book its cover, not its metadata. */
async function coverOrNothing(render: () => Promise<ExtractedCover | undefined>): Promise<ExtractedCover | undefined> {
  try {
    return await render();
  } catch {
    return undefined;
  }
}

function pdfError(error: unknown): FormatError {
  if (error instanceof FormatError) return error;
  const name = error instanceof Error ? error.name : '';
  const message = error instanceof Error ? error.message : String(error);
  switch (name) {
    case 'PasswordException':
      return new FormatError('UNSUPPORTED', 'the PDF is password protected', { cause: error });
    case 'InvalidPDFException':
      return new FormatError('CORRUPT', `not a readable PDF: ${message}`, { cause: error });
    default:
      if (name === 'RangeError' && /alloc|memory|buffer/i.test(message)) {
        return new FormatError('TOO_LARGE', `the PDF needs more memory than is available: ${message}`, { cause: error });
      }
      return asFormatError(error, 'CORRUPT');
  }
}
