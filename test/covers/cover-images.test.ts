import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeShrink, makeCoverImages } from '../../src/core/covers/cover-images.ts';
import { coverStaging } from '../../src/core/covers/cover-store.ts';
import { readJpegHeader } from '../../src/core/covers/jpeg-header.ts';
import { makeTempDir } from '../helpers/temp-dir.ts';

const tmp = makeTempDir('bindery-covers-');
afterAll(() => tmp.remove());

const solid = (width: number, height: number, colour = '#3a6'): Sharp => sharp({ create: { width, height, channels: 3, background: colour } });

describe('readJpegHeader', () => {
  const cases: [string, () => Promise<Buffer>][] = [
    ['baseline sRGB', () => solid(600, 900).jpeg().toBuffer()],
    ['progressive', () => solid(320, 200).jpeg({ progressive: true }).toBuffer()],
    ['greyscale', () => solid(64, 48).greyscale().jpeg().toBuffer()],
    ['CMYK', () => solid(40, 60).toColourspace('cmyk').jpeg().toBuffer()],
    ['EXIF orientation 6', () => solid(300, 200).withMetadata({ orientation: 6 }).jpeg().toBuffer()],
    ['EXIF orientation 3 with other tags', () => solid(30, 20).withExif({ IFD0: { Copyright: 'x', Artist: 'y' } }).withMetadata({ orientation: 3 }).jpeg().toBuffer()],
    ['sRGB ICC profile', () => solid(100, 150).withIccProfile('srgb').jpeg().toBuffer()],
    ['P3 ICC profile', () => solid(100, 150).withIccProfile('p3').jpeg().toBuffer()],
  ];
  for (const [name, make] of cases) {
    it(`agrees with libvips on a ${name} JPEG`, async () => {
      const data = await make();
      const header = readJpegHeader(data);
      const meta = await sharp(data).metadata();
      expect(header).toBeDefined();
      expect(header?.width).toBe(meta.width);
      expect(header?.height).toBe(meta.height);
      expect(header?.space).toBe(meta.space);
      expect(header?.orientation).toBe(meta.orientation);
      expect(header?.icc?.equals(meta.icc as Buffer) ?? meta.icc === undefined).toBe(true);
    });
  }

  it('leaves anything it does not fully understand to libvips', async () => {
    const jpeg = await solid(50, 50).jpeg().toBuffer();
    expect(readJpegHeader(await solid(50, 50).png().toBuffer())).toBeUndefined();
    expect(readJpegHeader(jpeg.subarray(0, 12))).toBeUndefined();
    expect(readJpegHeader(Buffer.from([0xff, 0xd8, 0x00, 0x00, 0x00]))).toBeUndefined();
    // An ICC profile with a chunk missing.
    const icc = await solid(20, 20).withIccProfile('p3').jpeg().toBuffer();
    const at = icc.indexOf('ICC_PROFILE\0', 0, 'latin1');
    const broken = Buffer.from(icc);
    broken[at + 12] = 2;
    expect(readJpegHeader(broken)).toBeUndefined();
  });
});

describe('makeCoverImages', () => {
  it('keeps a JPEG that already fits and makes the thumbnail from it', async () => {
    const input = await solid(600, 900).jpeg().toBuffer();
    const images = await makeCoverImages(input, 'book');
    expect(images.cover).toBe(input);
    expect([images.width, images.height]).toEqual([600, 900]);
    const thumb = await sharp(images.thumbnail).metadata();
    expect([thumb.format, thumb.width, thumb.height]).toEqual(['jpeg', 233, 350]);
  });

  it('resizes a large cover and makes the thumbnail from the resized one', async () => {
    const input = await solid(2000, 3000).png().toBuffer();
    const images = await makeCoverImages(input, 'book');
    const cover = await sharp(images.cover).metadata();
    const thumb = await sharp(images.thumbnail).metadata();
    expect([cover.format, cover.width, cover.height, images.width, images.height]).toEqual(['jpeg', 1000, 1500, 1000, 1500]);
    expect([thumb.format, thumb.width, thumb.height]).toEqual(['jpeg', 233, 350]);
  });

  it('keeps a JPEG of up to twice the cover box as it is, and resizes one past that', async () => {
    const page = await solid(1600, 2464).jpeg().toBuffer();
    const kept = await makeCoverImages(page, 'book');
    expect(kept.cover).toBe(page);
    expect([kept.width, kept.height]).toEqual([1600, 2464]);
    const thumb = await sharp(kept.thumbnail).metadata();
    expect([thumb.width, thumb.height]).toEqual([227, 350]);

    const poster = await makeCoverImages(await solid(2001, 3000).jpeg().toBuffer(), 'book');
    expect([poster.width, poster.height]).toEqual([1000, 1499]);
    const square = await solid(2000, 2000).jpeg().toBuffer();
    expect((await makeCoverImages(square, 'audiobook')).cover).toBe(square);
  });

  it('resizes a JPEG within twice the box that weighs more than 1 MiB', async () => {
    // Noise at quality 100 does not compress: a print-quality scan, far heavier than a cover needs to be.
    const noise = Buffer.alloc(1500 * 2200 * 3);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
    const heavy = await sharp(noise, { raw: { width: 1500, height: 2200, channels: 3 } }).jpeg({ quality: 100 }).toBuffer();
    expect(heavy.length).toBeGreaterThan(1 << 20);
    const images = await makeCoverImages(heavy, 'book');
    expect([images.width, images.height]).toEqual([1000, 1467]);
  });

  it('turns a sideways (EXIF 6) JPEG upright in both images', async () => {
    const input = await solid(900, 600).withMetadata({ orientation: 6 }).jpeg().toBuffer();
    const images = await makeCoverImages(input, 'book');
    expect([images.width, images.height]).toEqual([600, 900]);
    const thumb = await sharp(images.thumbnail).metadata();
    expect([thumb.width, thumb.height, thumb.orientation]).toEqual([233, 350, undefined]);
  });

  it('converts a CMYK JPEG to sRGB', async () => {
    const input = await solid(300, 450).toColourspace('cmyk').jpeg().toBuffer();
    const images = await makeCoverImages(input, 'book');
    expect((await sharp(images.cover).metadata()).space).toBe('srgb');
    expect((await sharp(images.thumbnail).metadata()).space).toBe('srgb');
  });

  it('crops an audiobook cover square, thumbnail included', async () => {
    const input = await solid(1200, 1600).jpeg().toBuffer();
    const images = await makeCoverImages(input, 'audiobook');
    const thumb = await sharp(images.thumbnail).metadata();
    expect([images.width, images.height, thumb.width, thumb.height]).toEqual([1000, 1000, 250, 250]);
  });

  it('refuses an image past the pixel limit and bytes that are no image', async () => {
    // A header claiming 60000 x 60000 pixels: refused before anything is decoded.
    const header = await solid(16, 16).jpeg().toBuffer();
    const sof = header.indexOf(Buffer.from([0xff, 0xc0]));
    const huge = Buffer.from(header);
    huge.writeUInt16BE(60000, sof + 5);
    huge.writeUInt16BE(60000, sof + 7);
    await expect(makeCoverImages(huge, 'book')).rejects.toMatchObject({ code: 'TOO_LARGE' });
    await expect(makeCoverImages(Buffer.from('not an image at all'), 'book')).rejects.toMatchObject({ code: 'CORRUPT' });
  });
});

describe('decodeShrink', () => {
  it('picks the largest JPEG decode scale that leaves less than 3x to reduce, and none at 2x or less', () => {
    expect(decodeShrink(600, 900, [250, 350], 'inside')).toBe(2);
    expect(decodeShrink(1000, 1500, [250, 350], 'inside')).toBe(4);
    expect(decodeShrink(3000, 4500, [250, 350], 'inside')).toBe(8);
    expect(decodeShrink(500, 700, [250, 350], 'inside')).toBe(1);
    expect(decodeShrink(400, 600, [250, 350], 'inside')).toBe(1);
    expect(decodeShrink(12000, 18000, [250, 350], 'inside')).toBe(1);
    expect(decodeShrink(1000, 600, [250, 250], 'cover')).toBe(2);
  });
});

describe('makeCoverImages with a sink (scan workers)', () => {
  for (const [name, make, size] of [
    ['a kept JPEG', () => solid(600, 900).jpeg().toBuffer(), [233, 350]],
    ['a JPEG kept past the box', () => solid(1600, 2464).jpeg().toBuffer(), [227, 350]],
    ['a resized cover', () => solid(2400, 3600).jpeg().toBuffer(), [233, 350]],
    ['a PNG', () => solid(700, 1000).png().toBuffer(), [245, 350]],
  ] as const) {
    it(`writes the cover first and reads the thumbnail back from it: ${name}`, async () => {
      const staging = coverStaging(tmp.dir);
      const images = await makeCoverImages(await make(), 'book', undefined, staging.sink);
      const staged = staging.finish(images);
      expect(staging.failure()).toBeUndefined();
      expect(readFileSync(staged.coverPath).equals(images.cover)).toBe(true);
      expect(readFileSync(staged.thumbnailPath!).equals(images.thumbnail)).toBe(true);
      const thumb = await sharp(images.thumbnail).metadata();
      expect([thumb.width, thumb.height]).toEqual(size);
    });
  }

  it('decodes a path with brackets whole rather than misreading it as load options', async () => {
    const dir = join(tmp.dir, 'odd [name]');
    mkdirSync(dir);
    const staging = coverStaging(dir);
    const images = await makeCoverImages(await solid(600, 900).jpeg().toBuffer(), 'book', undefined, staging.sink);
    expect((await sharp(staging.finish(images).thumbnailPath).metadata()).height).toBe(350);
  });

  it('reports a staging folder that cannot be written, apart from the book', async () => {
    const staging = coverStaging(join(tmp.dir, 'missing', 'folder'));
    await expect(makeCoverImages(await solid(600, 900).jpeg().toBuffer(), 'book', undefined, staging.sink)).rejects.toThrow();
    expect((staging.failure() as NodeJS.ErrnoException).code).toBe('ENOENT');
  });
});
