// Locating one base64 <binary> of an FB2 document by a windowed byte scan, without parsing the book.
import { imageMime } from './epub-image.ts';
import { decodeNumericReferences } from './epub-html.ts';
import { findBytes, type ByteSource } from './fb2-source.ts';
import { LIMITS } from './limits.ts';
import type { ExtractedCover } from './types.ts';

const BINARY_START = Buffer.from('<binary');
const BINARY_END = Buffer.from('</binary>');
/** Longest start tag we accept: `<binary id="…" content-type="…">`. */
const MAX_START_TAG = 4096;
/** Real books hold at most a few hundred binaries; a flood of `<binary` markers is hostile and not worth scanning. */
const MAX_BINARIES_EXAMINED = 10_000;
/** Base64 of the largest image we inflate, with slack for line breaks. */
const MAX_BASE64_BYTES = Math.ceil((LIMITS.maxEntryBytes * 4) / 3 * 1.05);

interface BinaryTag {
  id: string;
  contentType: string;
  /** First byte of the base64 content. */
  contentStart: number;
}

function attribute(tag: string, name: string): string {
  const found = tag.match(new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`));
  const raw = found?.[1] ?? found?.[2] ?? '';
  return decodeNumericReferences(raw.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')).trim();
}

async function readTag(source: ByteSource, at: number): Promise<BinaryTag | undefined> {
  const window = await source.read(at, MAX_START_TAG);
  const close = window.indexOf(0x3e); // '>'
  if (close === -1) return undefined;
  const tag = window.subarray(0, close).toString('utf8');
  // `<binaryfoo` is some other element.
  if (!/^<binary\s/.test(tag)) return undefined;
  return { id: attribute(tag, 'id'), contentType: attribute(tag, 'content-type').toLowerCase(), contentStart: at + close + 1 };
}

async function readImage(source: ByteSource, tag: BinaryTag): Promise<ExtractedCover | undefined> {
  const end = await findBytes(source, BINARY_END, tag.contentStart, tag.contentStart + MAX_BASE64_BYTES);
  if (end === -1) return undefined;
  const base64 = (await source.read(tag.contentStart, end - tag.contentStart)).toString('latin1');
  const data = Buffer.from(base64, 'base64');
  const mime = imageMime(data);
  return mime ? { data, mime } : undefined;
}

/**
 * The cover image: the binary whose id the coverpage names, else the first image binary whose id mentions "cover".
 * Anything unreadable (missing, truncated, not an image, too large) gives undefined rather than failing the book.
 */
export async function findCoverBinary(source: ByteSource, from: number, coverId: string | undefined): Promise<ExtractedCover | undefined> {
  let fallback: BinaryTag | undefined;
  let position = from;
  for (let examined = 0; examined < MAX_BINARIES_EXAMINED; examined++) {
    const at = await findBytes(source, BINARY_START, position);
    if (at === -1) break;
    const tag = await readTag(source, at);
    position = at + BINARY_START.length;
    if (!tag) continue;
    position = tag.contentStart;
    if (coverId !== undefined && tag.id === coverId) {
      const cover = await readImage(source, tag);
      if (cover) return cover;
    }
    if (!fallback && /cover/i.test(tag.id) && tag.contentType.startsWith('image/')) {
      if (coverId === undefined) return readImage(source, tag);
      fallback = tag;
    }
  }
  return fallback ? readImage(source, fallback) : undefined;
}
