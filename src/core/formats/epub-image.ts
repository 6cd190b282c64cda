// Recognising cover images by their first bytes, whatever the book claims their type is.

const SIGNATURES: ReadonlyArray<{ mime: string; matches: (b: Buffer) => boolean }> = [
  { mime: 'image/jpeg', matches: (b) => b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { mime: 'image/png', matches: (b) => b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { mime: 'image/gif', matches: (b) => b.length >= 6 && /^GIF8[79]a$/.test(b.toString('latin1', 0, 6)) },
  { mime: 'image/webp', matches: (b) => b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP' },
];

/** The MIME type of a raster image from its magic bytes; undefined when the bytes are not an image we know. */
export function imageMime(data: Buffer): string | undefined {
  return SIGNATURES.find((s) => s.matches(data))?.mime;
}
