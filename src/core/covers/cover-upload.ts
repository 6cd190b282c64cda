// What may become a cover: a real JPEG, PNG or WebP image (decoded, whatever name or type the upload claims), of a
// bounded size and pixel count.
import type { Metadata } from 'sharp';
import { loadSharp } from './sharp-loader.ts';
import { CodedError } from '../coded-error.ts';
import { LIMITS } from '../formats/limits.ts';

export type CoverImageErrorCode = 'EMPTY' | 'NOT_AN_IMAGE' | 'UNSUPPORTED_FORMAT' | 'TOO_LARGE';

export class CoverImageError extends CodedError<CoverImageErrorCode> {}

export const COVER_FORMATS: readonly string[] = ['jpeg', 'png', 'webp'];

/** Largest cover accepted by upload or from a URL, whatever the upload limit setting allows for books. */
export const MAX_COVER_BYTES = 20 * 1024 * 1024;

export interface CheckedImage {
  format: string;
  width: number;
  height: number;
}

export async function checkCoverImage(data: Buffer): Promise<CheckedImage> {
  if (data.length === 0) throw new CoverImageError('EMPTY', 'Uploaded file is empty');
  const sharp = await loadSharp();
  let meta: Metadata;
  try {
    meta = await sharp(data, { limitInputPixels: LIMITS.maxImagePixels, failOn: 'error' }).metadata();
  } catch {
    throw new CoverImageError('NOT_AN_IMAGE', 'The file is not an image that can be read');
  }
  if (!meta.format || !COVER_FORMATS.includes(meta.format)) throw new CoverImageError('UNSUPPORTED_FORMAT', `Only JPEG, PNG and WebP images are allowed (this is ${meta.format ?? 'unknown'})`);
  if (!meta.width || !meta.height) throw new CoverImageError('NOT_AN_IMAGE', 'The image has no dimensions');
  if (meta.width * meta.height > LIMITS.maxImagePixels) throw new CoverImageError('TOO_LARGE', `The image is ${meta.width}x${meta.height}, more than ${LIMITS.maxImagePixels} pixels`);
  return { format: meta.format, width: meta.width, height: meta.height };
}
