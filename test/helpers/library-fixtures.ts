// Builds small real libraries on disk for scanner, CLI and store tests.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { jpeg, opfDocument, writeEpub } from './epub-fixtures.ts';

export interface SimpleBook {
  title: string;
  authors?: string[];
  series?: string;
  seriesIndex?: number;
  isbn?: string;
  language?: string;
  /** Cover colour; no cover when undefined. */
  cover?: string;
  /** Extra text to make the content (and hash) unique. */
  body?: string;
}

function escape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

/** Writes a valid EPUB 3 with the given metadata (and a JPEG cover when asked). */
export async function writeSimpleEpub(path: string, book: SimpleBook): Promise<string> {
  mkdirSync(dirname(path), { recursive: true });
  const meta = [
    `<dc:identifier id="bookid">urn:uuid:${Math.random().toString(16).slice(2)}</dc:identifier>`,
    `<dc:title>${escape(book.title)}</dc:title>`,
    ...(book.authors ?? []).map((a) => `<dc:creator>${escape(a)}</dc:creator>`),
    `<dc:language>${book.language ?? 'en'}</dc:language>`,
    book.isbn ? `<dc:identifier>urn:isbn:${book.isbn}</dc:identifier>` : '',
    book.series ? `<meta name="calibre:series" content="${escape(book.series)}"/>` : '',
    book.seriesIndex !== undefined ? `<meta name="calibre:series_index" content="${book.seriesIndex}"/>` : '',
    book.cover ? '<meta name="cover" content="cover-img"/>' : '',
  ].join('\n');
  const manifest = [
    '<item id="ch1" href="ch1.xhtml" media-type="application/xhtml+xml"/>',
    book.cover ? '<item id="cover-img" href="cover.jpg" media-type="image/jpeg" properties="cover-image"/>' : '',
  ].join('\n');
  const files: Record<string, Buffer | string> = {
    'OEBPS/ch1.xhtml': `<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>c</title></head><body><p>${escape(book.body ?? book.title)}</p></body></html>`,
  };
  if (book.cover) files['OEBPS/cover.jpg'] = await jpeg(300, 450, book.cover);
  await writeEpub(path, { opf: opfDocument({ metadata: meta, manifest, spine: '<itemref idref="ch1"/>' }), files });
  return path;
}

export interface TempLibrary {
  root: string;
  dataDir: string;
  path(...parts: string[]): string;
  cleanup(): void;
}

export function makeTempLibrary(): TempLibrary {
  const base = mkdtempSync(join(tmpdir(), 'bindery-lib-'));
  const root = join(base, 'books');
  const dataDir = join(base, 'data');
  mkdirSync(root, { recursive: true });
  return {
    root,
    dataDir,
    path: (...parts) => join(root, ...parts),
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}
