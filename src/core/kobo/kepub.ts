// EPUB → KEPUB: the archive is read entry by entry and written anew (yauzl in, yazl out). Content documents and the
// package document are rewritten in memory (each is small); every other entry streams through untouched. Junk files
// left by other tools are dropped, and `mimetype` comes first and uncompressed, as EPUB requires.
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { FormatError } from '../formats/errors.ts';
import { LIMITS } from '../formats/limits.ts';
import { checkBomb } from '../formats/zip.ts';
import { kepubifyContent, type ChapterSpans, type KepubContentOptions } from './kepub-content.ts';
import { contentDocuments, markCoverImage, rootfilePath } from './kepub-package.ts';

/** Files other tools leave in EPUBs that have no business on a device. */
const JUNK = new Set(['calibre_bookmarks.txt', 'itunesmetadata.plist', 'itunesartwork.plist', '.ds_store', 'thumbs.db']);
const isJunk = (name: string): boolean => name.split('/').some((part, i, all) => part === '__MACOSX' || (i === all.length - 1 && JUNK.has(part.toLowerCase())));

/** Spans of each converted chapter, by archive entry name. */
export type SpanMap = Record<string, ChapterSpans>;

function openZip(path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true }, (err, zip) => (err || !zip ? reject(err ?? new Error('cannot open zip')) : resolve(zip)));
  });
}

async function entriesOf(zip: yauzl.ZipFile): Promise<yauzl.Entry[]> {
  if (zip.entryCount > LIMITS.maxEntries) throw new FormatError('TOO_LARGE', `archive has ${zip.entryCount} entries`);
  return new Promise((resolve, reject) => {
    const list: yauzl.Entry[] = [];
    let total = 0;
    zip.on('entry', (entry: yauzl.Entry) => {
      total += entry.uncompressedSize;
      const bomb = checkBomb(entry.fileName, entry.uncompressedSize, entry.compressedSize, total);
      if (bomb) return reject(bomb);
      list.push(entry);
      zip.readEntry();
    });
    zip.on('end', () => resolve(list));
    zip.on('error', reject);
    zip.readEntry();
  });
}

function streamOf(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<NodeJS.ReadableStream> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (err, stream) => (err || !stream ? reject(err ?? new Error('no stream')) : resolve(stream))));
}

async function readEntry(zip: yauzl.ZipFile, entry: yauzl.Entry, maxBytes: number): Promise<Buffer> {
  if (entry.uncompressedSize > maxBytes) throw new FormatError('TOO_LARGE', `${entry.fileName} is too large to convert`);
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of (await streamOf(zip, entry)) as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > maxBytes) throw new FormatError('TOO_LARGE', `${entry.fileName} inflates past ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, length);
}

/** Text of a document, decoded as UTF-8 (a UTF-8 BOM is kept out of the markup and restored on the way out). */
function decode(buffer: Buffer): { text: string; bom: boolean } {
  const bom = buffer.length >= 3 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf;
  return { text: buffer.subarray(bom ? 3 : 0).toString('utf8'), bom };
}

const encode = (text: string, bom: boolean): Buffer => Buffer.concat([bom ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0), Buffer.from(text, 'utf8')]);

/** Only UTF-8 documents are rewritten; others (rare UTF-16 or legacy-encoded books) are copied as they are. */
function isUtf8(buffer: Buffer): boolean {
  if ((buffer[0] === 0xff && buffer[1] === 0xfe) || (buffer[0] === 0xfe && buffer[1] === 0xff)) return false;
  const declared = /^(?:\ufeff)?<\?xml[^>]*\sencoding\s*=\s*["']([^"']+)["']/i.exec(buffer.subarray(0, 200).toString('latin1'))?.[1];
  return declared === undefined || /^utf-?8$/i.test(declared);
}

/**
 * Converts `input` into a KEPUB at `output` (written to a temporary name, then renamed). Throws FormatError for an
 * archive that is not an EPUB (no container, no package document) or that breaks the archive limits.
 */
export async function convertToKepub(input: string, output: string, options: KepubContentOptions = {}): Promise<SpanMap> {
  const zip = await openZip(input);
  const partial = `${output}.${process.pid}.${Date.now()}.part`;
  try {
    const entries = await entriesOf(zip);
    const byName = new Map(entries.map((e) => [e.fileName, e]));
    const container = byName.get('META-INF/container.xml');
    if (!container) throw new FormatError('CORRUPT', 'not an EPUB: META-INF/container.xml is missing');
    const opfPath = rootfilePath((await readEntry(zip, container, LIMITS.maxXmlBytes)).toString('utf8'));
    const opfEntry = opfPath === undefined ? undefined : byName.get(opfPath);
    if (!opfPath || !opfEntry) throw new FormatError('CORRUPT', 'not an EPUB: the package document is missing');
    const opfBytes = await readEntry(zip, opfEntry, LIMITS.maxXmlBytes);
    const opf = decode(opfBytes);
    const documents = contentDocuments(opf.text, opfPath);

    // Every rewritten document is ready before the output starts: a failure leaves no half-written archive behind.
    const rewritten = new Map<string, Buffer>();
    const spans: SpanMap = {};
    if (isUtf8(opfBytes)) rewritten.set(opfPath, encode(markCoverImage(opf.text), opf.bom));
    for (const entry of entries) {
      if (!documents.has(entry.fileName) || entry.fileName === opfPath) continue;
      const raw = await readEntry(zip, entry, LIMITS.maxXmlBytes);
      if (!isUtf8(raw)) continue;
      const doc = decode(raw);
      const converted = kepubifyContent(doc.text, options);
      spans[entry.fileName] = converted.spans;
      rewritten.set(entry.fileName, encode(converted.html, doc.bom));
    }

    const out = new yazl.ZipFile();
    const written = pipeline(out.outputStream, createWriteStream(partial));
    out.addBuffer(Buffer.from('application/epub+zip'), 'mimetype', { compress: false });
    for (const entry of entries) {
      const name = entry.fileName;
      if (name === 'mimetype' || isJunk(name)) continue;
      const mtime = entry.getLastModDate();
      const replacement = rewritten.get(name);
      if (name.endsWith('/')) out.addEmptyDirectory(name, { mtime });
      else if (replacement) out.addBuffer(replacement, name, { mtime, compress: true });
      else {
        out.addReadStreamLazy(name, { mtime, compress: entry.compressionMethod !== 0, size: entry.uncompressedSize }, (cb) => {
          zip.openReadStream(entry, (err, stream) => cb(err, stream as NodeJS.ReadableStream));
        });
      }
    }
    out.end();
    await written;
    await rename(partial, output);
    return spans;
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  } finally {
    zip.close();
  }
}
