// An image's size in pixels from the first bytes of its file, without decoding the picture: JPEG, PNG, GIF, WebP and
// BMP headers. 'more' when the header runs past the bytes given (a JPEG with a large EXIF or ICC block before its
// frame header) or is one the quick readers do not fully understand; undefined for anything else.
import { readJpegHeader } from '../covers/jpeg-header.ts';

export interface ImageSize {
  width: number;
  height: number;
  /** EXIF orientation (1–8) when the header has one. */
  orientation?: number;
}

export type HeaderSize = ImageSize | 'more' | undefined;

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function png(head: Buffer): HeaderSize {
  if (head.length < 24) return 'more';
  if (head.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return { width: head.readUInt32BE(16), height: head.readUInt32BE(20) };
}

function gif(head: Buffer): HeaderSize {
  if (head.length < 10) return 'more';
  return { width: head.readUInt16LE(6), height: head.readUInt16LE(8) };
}

function bmp(head: Buffer): HeaderSize {
  if (head.length < 26) return 'more';
  return { width: Math.abs(head.readInt32LE(18)), height: Math.abs(head.readInt32LE(22)) };
}

function webp(head: Buffer): HeaderSize {
  if (head.length < 30) return 'more';
  const chunk = head.toString('latin1', 12, 16);
  if (chunk === 'VP8 ') return { width: head.readUInt16LE(26) & 0x3fff, height: head.readUInt16LE(28) & 0x3fff };
  if (chunk === 'VP8L') {
    const bits = head.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X') return { width: head.readUIntLE(24, 3) + 1, height: head.readUIntLE(27, 3) + 1 };
  return undefined;
}

/** JPEG through the cover code's marker reader; one it cannot fully read (a header past these bytes) wants more. */
function jpeg(head: Buffer): HeaderSize {
  const header = readJpegHeader(head);
  if (!header) return 'more';
  return { width: header.width, height: header.height, ...(header.orientation !== undefined ? { orientation: header.orientation } : {}) };
}

export function imageSizeFromHeader(head: Buffer): HeaderSize {
  if (head.length < 4) return head.length === 0 ? undefined : 'more';
  if (head[0] === 0xff && head[1] === 0xd8) return jpeg(head);
  if (head.subarray(0, 8).equals(PNG)) return png(head);
  const start = head.toString('latin1', 0, 6);
  if (start === 'GIF87a' || start === 'GIF89a') return gif(head);
  if (start.startsWith('BM')) return bmp(head);
  if (head.toString('latin1', 0, 4) === 'RIFF') {
    if (head.length < 16) return 'more';
    return head.toString('latin1', 8, 12) === 'WEBP' ? webp(head) : undefined;
  }
  return undefined;
}
