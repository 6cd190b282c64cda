// Turns whatever image a book carries into a bounded JPEG cover and a thumbnail.
import sharp, { type Metadata } from 'sharp';
import { FormatError } from '../formats/errors.ts';
import { LIMITS } from '../formats/limits.ts';

export type CoverKind = 'book' | 'audiobook';

/** The cover_cropping_settings application setting (behaviors §7); every option is off by default. */
export interface CoverCropping {
  verticalCroppingEnabled: boolean;
  horizontalCroppingEnabled: boolean;
  aspectRatioThreshold: number;
  smartCroppingEnabled: boolean;
}

export const DEFAULT_COVER_CROPPING: CoverCropping = {
  verticalCroppingEnabled: false,
  horizontalCroppingEnabled: false,
  aspectRatioThreshold: 2.5,
  smartCroppingEnabled: false,
};

export interface CoverImages {
  cover: Buffer;
  thumbnail: Buffer;
  width: number;
  height: number;
}

const SIZES: Record<CoverKind, { cover: [number, number]; thumbnail: [number, number] }> = {
  book: { cover: [1000, 1500], thumbnail: [250, 350] },
  audiobook: { cover: [1000, 1000], thumbnail: [250, 250] },
};

export interface CropBox {
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * A very tall image (a webtoon strip) keeps its top in a 2:3 portrait; a very wide one (a panorama or a spread)
 * keeps its right-hand part, where a front cover sits on a wraparound. Undefined when no crop applies.
 */
export function cropFor(width: number, height: number, settings: CoverCropping): CropBox | undefined {
  if (settings.verticalCroppingEnabled && height / width > settings.aspectRatioThreshold) {
    return { left: 0, top: 0, width, height: Math.min(height, Math.round(width * 1.5)) };
  }
  if (settings.horizontalCroppingEnabled && width / height > settings.aspectRatioThreshold) {
    const keep = Math.min(width, Math.round(height / 1.5));
    return { left: width - keep, top: 0, width: keep, height };
  }
  return undefined;
}

export async function makeCoverImages(input: Buffer, kind: CoverKind, cropping: CoverCropping = DEFAULT_COVER_CROPPING): Promise<CoverImages> {
  const options = { limitInputPixels: LIMITS.maxImagePixels, failOn: 'error' as const, animated: false };
  let meta: Metadata;
  try {
    meta = await sharp(input, options).metadata();
  } catch (error) {
    throw new FormatError('CORRUPT', `cover image cannot be decoded: ${(error as Error).message}`);
  }
  if (!meta.width || !meta.height) throw new FormatError('CORRUPT', 'cover image has no dimensions');
  if (meta.width * meta.height > LIMITS.maxImagePixels) {
    throw new FormatError('TOO_LARGE', `cover image is ${meta.width}x${meta.height} (limit ${LIMITS.maxImagePixels} pixels)`);
  }
  try {
    let base = sharp(input, options).rotate();
    if (cropping.smartCroppingEnabled) base = sharp(await base.trim({ threshold: 20 }).toBuffer(), options);
    const trimmed = cropping.smartCroppingEnabled ? await base.metadata() : meta;
    const crop = cropFor(trimmed.width ?? meta.width, trimmed.height ?? meta.height, cropping);
    if (crop) base = base.extract(crop);
    const normalized = await base.flatten({ background: '#ffffff' }).toColourspace('srgb').toBuffer();
    const [cw, ch] = SIZES[kind].cover;
    const [tw, th] = SIZES[kind].thumbnail;
    const fit = kind === 'audiobook' ? 'cover' : 'inside';
    const coverSharp = sharp(normalized).resize(cw, ch, { fit, withoutEnlargement: true }).jpeg({ quality: 85, mozjpeg: false });
    const { data: cover, info } = await coverSharp.toBuffer({ resolveWithObject: true });
    const thumbnail = await sharp(normalized).resize(tw, th, { fit, withoutEnlargement: true }).jpeg({ quality: 80 }).toBuffer();
    return { cover, thumbnail, width: info.width, height: info.height };
  } catch (error) {
    throw new FormatError('CORRUPT', `cover image cannot be converted: ${(error as Error).message}`);
  }
}
