// An image's size in pixels from the first bytes of its file, without decoding the picture: JPEG, PNG, GIF, WebP and
// BMP headers. 'more' when the header runs past the bytes given (a JPEG with a large EXIF or ICC block before its
// frame header); undefined for anything else.

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

/** The orientation tag (0x0112) of an EXIF block's first IFD, if it is there. */
function exifOrientation(exif: Buffer): number | undefined {
  if (exif.length < 14 || exif.toString('latin1', 0, 6) !== 'Exif\0\0') return undefined;
  const tiff = exif.subarray(6);
  const little = tiff.toString('latin1', 0, 2) === 'II';
  if (!little && tiff.toString('latin1', 0, 2) !== 'MM') return undefined;
  const u16 = (at: number): number => (little ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const u32 = (at: number): number => (little ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at));
  const ifd = u32(4);
  if (ifd + 2 > tiff.length) return undefined;
  const count = u16(ifd);
  for (let i = 0; i < count; i++) {
    const at = ifd + 2 + i * 12;
    if (at + 12 > tiff.length) return undefined;
    if (u16(at) === 0x0112) {
      const value = u16(at + 8);
      return value >= 1 && value <= 8 ? value : undefined;
    }
  }
  return undefined;
}

/** Start-of-frame markers carry the size; C4 (Huffman tables), C8 (reserved) and CC (arithmetic tables) do not. */
const isStartOfFrame = (marker: number): boolean => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

function jpeg(head: Buffer): HeaderSize {
  let orientation: number | undefined;
  let at = 2;
  for (;;) {
    if (at + 4 > head.length) return 'more';
    if (head[at] !== 0xff) return undefined;
    const marker = head[at + 1] as number;
    // Fill bytes, and markers without a length (TEM, RSTn).
    if (marker === 0xff) {
      at++;
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return undefined;
    const length = head.readUInt16BE(at + 2);
    if (length < 2) return undefined;
    if (isStartOfFrame(marker)) {
      if (at + 9 > head.length) return 'more';
      const size = { height: head.readUInt16BE(at + 5), width: head.readUInt16BE(at + 7) };
      return orientation === undefined ? size : { ...size, orientation };
    }
    if (marker === 0xe1 && orientation === undefined) {
      if (at + 2 + length > head.length) return 'more';
      orientation = exifOrientation(head.subarray(at + 4, at + 2 + length));
    }
    at += 2 + length;
  }
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
