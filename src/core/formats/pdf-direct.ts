// What a scan needs from most PDFs, read without pdf.js: the page count, the Info dictionary, the XMP packet and, when
// page one is a full-page JPEG, that JPEG as the cover. pdf.js costs ~10 ms of CPU and a few MB per PDF to open and
// far more to render; this is a few small reads. Encrypted files and anything this reader cannot follow are left to
// pdf.js (the caller catches and falls back), so it never decides that a PDF is broken.
import { pageOneJpeg } from './pdf-page-image.ts';
import { PdfName, PdfObjects, PdfRef, isDict, type PdfValue, type ReadAt } from './pdf-objects.ts';
import type { PdfInfo } from './pdf-metadata.ts';

export interface DirectPdf {
  pageCount: number;
  info: PdfInfo;
  xmp: string | undefined;
  /** Page one's JPEG when it is all the page shows; undefined when the page must be rendered (or was not asked for). */
  cover: Buffer | undefined;
}

const STANDARD_KEYS = new Set(['Title', 'Author', 'Subject', 'Keywords', 'Creator', 'Producer', 'CreationDate', 'ModDate', 'Trapped']);
const MAX_XMP_BYTES = 4 * 1024 * 1024;

/** PDFDocEncoding where it differs from Latin-1 (0x18-0x1F, 0x80-0xA0, 0xAD). */
const PDF_DOC: Record<number, string> = {
  0x18: '\u02d8', 0x19: '\u02c7', 0x1a: '\u02c6', 0x1b: '\u02d9', 0x1c: '\u02dd', 0x1d: '\u02db', 0x1e: '\u02da', 0x1f: '\u02dc',
  0x80: '\u2022', 0x81: '\u2020', 0x82: '\u2021', 0x83: '\u2026', 0x84: '\u2014', 0x85: '\u2013', 0x86: '\u0192', 0x87: '\u2044',
  0x88: '\u2039', 0x89: '\u203a', 0x8a: '\u2212', 0x8b: '\u2030', 0x8c: '\u201e', 0x8d: '\u201c', 0x8e: '\u201d', 0x8f: '\u2018',
  0x90: '\u2019', 0x91: '\u201a', 0x92: '\u2122', 0x93: '\ufb01', 0x94: '\ufb02', 0x95: '\u0141', 0x96: '\u0152', 0x97: '\u0160',
  0x98: '\u0178', 0x99: '\u017d', 0x9a: '\u0131', 0x9b: '\u0142', 0x9c: '\u0153', 0x9d: '\u0161', 0x9e: '\u017e', 0x9f: '',
  0xa0: '\u20ac', 0xad: '',
};

/** A PDF text string (as the lexer gives it, one char per byte) decoded the way pdf.js decodes Info values. */
export function pdfText(bytes: string): string {
  const raw = Buffer.from(bytes, 'latin1');
  let text: string;
  if (raw[0] === 0xfe && raw[1] === 0xff) text = Buffer.from(raw.subarray(2, 2 + ((raw.length - 2) & ~1))).swap16().toString('utf16le');
  else if (raw[0] === 0xff && raw[1] === 0xfe) text = raw.subarray(2, 2 + ((raw.length - 2) & ~1)).toString('utf16le');
  else if (raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf) text = raw.subarray(3).toString('utf8');
  else text = Array.from(raw, (b) => PDF_DOC[b] ?? String.fromCharCode(b)).join('');
  // Language tags in UTF-16 text (ESC lang ESC) are not part of the value.
  return withoutLanguageTags(text).replace(/\0+$/, '');
}

const ESC = '\u001b';

function withoutLanguageTags(text: string): string {
  let out = '';
  for (let at = 0; at < text.length; ) {
    const open = text.indexOf(ESC, at);
    const close = open < 0 ? -1 : text.indexOf(ESC, open + 1);
    if (close < 0) return out + text.slice(at);
    out += text.slice(at, open);
    at = close + 1;
  }
  return out;
}

function infoValue(value: PdfValue | undefined): unknown {
  if (typeof value === 'string') return pdfText(value);
  if (value instanceof PdfName) return { name: value.name };
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  return undefined;
}

/** Reads the PDF through `readAt`; throws when pdf.js should open it instead. */
export async function readPdfDirectly(readAt: ReadAt, size: number, options: { cover: boolean }): Promise<DirectPdf> {
  const objects = await PdfObjects.open(readAt, size);
  if (objects.trailer.Encrypt !== undefined) throw new Error('encrypted');
  const root = await objects.resolve(objects.trailer.Root);
  if (!isDict(root)) throw new Error('no document catalog');
  const pages = await objects.resolve(root.Pages);
  const pageCount = isDict(pages) ? await objects.resolve(pages.Count) : undefined;
  if (typeof pageCount !== 'number' || !Number.isInteger(pageCount) || pageCount <= 0) throw new Error('no page count');

  const info: PdfInfo = {};
  const custom: Record<string, unknown> = {};
  const dict = await objects.resolve(objects.trailer.Info);
  if (isDict(dict)) {
    for (const [key, raw] of Object.entries(dict)) {
      const value = infoValue(await objects.resolve(raw));
      if (value === undefined) continue;
      if (STANDARD_KEYS.has(key)) {
        if (typeof value === 'string') (info as Record<string, unknown>)[key] = value;
      } else custom[key] = value;
    }
  }
  if (Object.keys(custom).length > 0) info.Custom = custom;
  const lang = await objects.resolve(root.Lang);
  if (typeof lang === 'string') info.Language = pdfText(lang);

  let xmp: string | undefined;
  if (root.Metadata instanceof PdfRef) {
    const stream = await objects.getStream(root.Metadata.num);
    // pdf.js only reads a stream that says it is XML metadata; so do we.
    if (stream.dict.Subtype instanceof PdfName && stream.dict.Subtype.name === 'XML') {
      const bytes = await objects.decode(stream);
      if (bytes.length > MAX_XMP_BYTES) throw new Error('XMP packet too large');
      xmp = bytes.toString('utf8');
    }
  }
  const cover = options.cover ? await pageOneJpeg(objects).catch(() => undefined) : undefined;
  return { pageCount, info, xmp, cover };
}
