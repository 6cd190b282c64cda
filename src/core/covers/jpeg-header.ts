// What a JPEG's markers say about it (size, colour, orientation, ICC profile), read without decoding anything.

export interface JpegHeader {
  width: number;
  height: number;
  /** As libvips names it: 'b-w' for one component, 'srgb' for three, 'cmyk' for four. */
  space: 'b-w' | 'srgb' | 'cmyk';
  /** EXIF orientation, when an EXIF block gives one. */
  orientation?: number;
  /** The embedded ICC profile, its chunks joined in order. */
  icc?: Buffer;
}

const SPACES: Record<number, JpegHeader['space']> = { 1: 'b-w', 3: 'srgb', 4: 'cmyk' };
/** Start-of-frame markers (baseline, extended, progressive, lossless…), not DHT (C4), JPG (C8) or DAC (CC). */
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);
const EXIF = Buffer.from('Exif\0\0', 'latin1');
const ICC = Buffer.from('ICC_PROFILE\0', 'latin1');

/** EXIF orientation (tag 0x0112 of IFD0) from an APP1 segment's body, if it is there and sane. */
function exifOrientation(body: Buffer): number | undefined {
  const tiff = body.subarray(EXIF.length);
  if (tiff.length < 8) return undefined;
  const order = tiff.toString('latin1', 0, 2);
  if (order !== 'II' && order !== 'MM') return undefined;
  const le = order === 'II';
  const u16 = (at: number): number => (le ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const u32 = (at: number): number => (le ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at));
  if (u16(2) !== 42) return undefined;
  const ifd = u32(4);
  if (ifd + 2 > tiff.length) return undefined;
  const count = u16(ifd);
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > tiff.length) return undefined;
    if (u16(entry) !== 0x0112) continue;
    // SHORT, one value, stored in the first two bytes of the value field.
    if (u16(entry + 2) !== 3) return undefined;
    const value = u16(entry + 8);
    return value >= 1 && value <= 8 ? value : undefined;
  }
  return undefined;
}

/**
 * Reads the markers up to the first start-of-frame. Undefined for anything it does not fully understand (not a
 * JPEG, a truncated or odd header): the caller then asks libvips, which is slower but knows every case.
 */
export function readJpegHeader(data: Buffer): JpegHeader | undefined {
  if (data.length < 4 || data[0] !== 0xff || data[1] !== 0xd8) return undefined;
  let orientation: number | undefined;
  let exifSeen = false;
  const iccChunks: { seq: number; bytes: Buffer }[] = [];
  let at = 2;
  while (at + 4 <= data.length) {
    if (data[at] !== 0xff) return undefined;
    const marker = data[at + 1] as number;
    // Fill bytes before a marker.
    if (marker === 0xff) {
      at++;
      continue;
    }
    // Markers without a length: TEM and RSTn should not appear before a frame; anything else ends the header.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd9)) return undefined;
    const length = data.readUInt16BE(at + 2);
    if (length < 2 || at + 2 + length > data.length) return undefined;
    const body = data.subarray(at + 4, at + 2 + length);
    if (SOF.has(marker)) {
      if (body.length < 6 || body[0] !== 8) return undefined;
      const space = SPACES[body[5] as number];
      const height = body.readUInt16BE(1);
      const width = body.readUInt16BE(3);
      if (!space || width === 0 || height === 0) return undefined;
      const header: JpegHeader = { width, height, space };
      if (orientation !== undefined) header.orientation = orientation;
      if (iccChunks.length > 0) {
        // A profile must arrive whole: chunks 1..n, each once.
        iccChunks.sort((a, b) => a.seq - b.seq);
        if (iccChunks.some((c, i) => c.seq !== i + 1)) return undefined;
        header.icc = Buffer.concat(iccChunks.map((c) => c.bytes));
      }
      return header;
    }
    if (marker === 0xe1 && !exifSeen && body.subarray(0, EXIF.length).equals(EXIF)) {
      exifSeen = true;
      orientation = exifOrientation(body);
    } else if (marker === 0xe2 && body.subarray(0, ICC.length).equals(ICC) && body.length >= ICC.length + 2) {
      iccChunks.push({ seq: body[ICC.length] as number, bytes: body.subarray(ICC.length + 2) });
    }
    at += 2 + length;
  }
  return undefined;
}
