// Image sizes from headers only, checked against what sharp reports for real files, and the cases that need more bytes.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { imageSizeFromHeader } from '../../src/core/readers/image-size.ts';

const image = (width: number, height: number) => sharp({ create: { width, height, channels: 4, background: '#3a6c' } });

function bmp(width: number, height: number): Buffer {
  const header = Buffer.alloc(54);
  header.write('BM', 0, 'latin1');
  header.writeUInt32LE(54 + width * height * 4, 2);
  header.writeUInt32LE(54, 10);
  header.writeUInt32LE(40, 14);
  header.writeInt32LE(width, 18);
  header.writeInt32LE(-height, 22);
  return Buffer.concat([header, Buffer.alloc(width * height * 4)]);
}

describe('imageSizeFromHeader', () => {
  it.each([
    ['JPEG', () => image(123, 45).jpeg().toBuffer()],
    ['progressive JPEG', () => image(77, 301).jpeg({ progressive: true }).toBuffer()],
    ['PNG', () => image(640, 33).png().toBuffer()],
    ['GIF', () => image(17, 19).gif().toBuffer()],
    ['lossy WebP', () => image(300, 200).flatten().webp().toBuffer()],
    ['lossless WebP', () => image(301, 199).webp({ lossless: true }).toBuffer()],
    ['WebP with alpha (VP8X)', () => image(257, 129).webp({ alphaQuality: 50 }).toBuffer()],
  ])('reads %s sizes as sharp does', async (_name, make) => {
    const data = await make();
    const meta = await sharp(data).metadata();
    expect(imageSizeFromHeader(data)).toEqual({ width: meta.width, height: meta.height });
  });

  it('reads BMP sizes, top-down or bottom-up', () => {
    expect(imageSizeFromHeader(bmp(5, 7))).toEqual({ width: 5, height: 7 });
  });

  it('reads the EXIF orientation of a JPEG', async () => {
    const data = await image(40, 20).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    expect(imageSizeFromHeader(data)).toEqual({ width: 40, height: 20, orientation: 6 });
  });

  it('asks for more when the frame header lies past the bytes given, and knows nothing of other data', async () => {
    // A JPEG whose large ICC profile comes before the frame header.
    const data = await image(64, 48).jpeg().withIccProfile('p3').toBuffer();
    const sof = data.indexOf(Buffer.from([0xff, 0xc0]));
    expect(imageSizeFromHeader(data.subarray(0, sof))).toBe('more');
    expect(imageSizeFromHeader(data)).toEqual({ width: 64, height: 48 });
    expect(imageSizeFromHeader(Buffer.from('not an image at all'))).toBeUndefined();
    expect(imageSizeFromHeader(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00]))).toBe('more');
    expect(imageSizeFromHeader(Buffer.alloc(0))).toBeUndefined();
  });
});
