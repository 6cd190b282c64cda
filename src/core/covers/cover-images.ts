// Turns whatever image a book carries into a bounded JPEG cover and a thumbnail.
import { readFile } from 'node:fs/promises';
import { loadSharp } from './sharp-loader.ts';
import { FormatError } from '../formats/errors.ts';
import { LIMITS } from '../formats/limits.ts';
import { DEFAULT_COVER_CROPPING, type CoverCropping } from './cover-cropping.ts';
import { readJpegHeader } from './jpeg-header.ts';

export { DEFAULT_COVER_CROPPING, type CoverCropping };

export type CoverKind = 'book' | 'audiobook';

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

/** What the source image is, as far as the decisions below need to know. */
interface SourceInfo {
  format: string | undefined;
  width: number;
  height: number;
  orientation?: number | undefined;
  space?: string | undefined;
  icc?: Buffer | undefined;
}

type InputOptions = { limitInputPixels: number; failOn: 'error'; animated: false; ignoreIcc: boolean };

/** A JPEG's header is read here (most covers are JPEGs); anything else is asked of libvips, one trip more. */
async function inspect(input: Buffer, options: InputOptions): Promise<SourceInfo> {
  const jpeg = readJpegHeader(input);
  if (jpeg) return { format: 'jpeg', ...jpeg };
  const sharp = await loadSharp();
  try {
    const meta = await sharp(input, options).metadata();
    return { format: meta.format, width: meta.width ?? 0, height: meta.height ?? 0, orientation: meta.orientation, space: meta.space, icc: meta.icc };
  } catch (error) {
    throw new FormatError('CORRUPT', `cover image cannot be decoded: ${(error as Error).message}`);
  }
}

/**
 * How far past the cover box a JPEG may be and still be stored as it is. Below 2x libvips cannot shrink a JPEG while
 * decoding it, so bringing such a cover into the box means decoding every pixel and encoding a new JPEG: most of a
 * comic's scan (its pages are 1,056-1,600 px wide) and of an EPUB with a cover of a typical 1,200-1,600 px. Grimmory
 * re-encodes these to fit the box; every client shows them scaled anyway, and the Kobo and OPDS routes resize on their
 * own. The byte limit keeps a heavy file (a print-quality scan) from being served as the cover.
 */
const KEEP_UNCHANGED = { scale: 2, bytes: 1 << 20 };

/** A JPEG within reach of the cover box (see KEEP_UNCHANGED) that needs no rotation, crop or colour conversion. */
function canKeepAsCover(meta: SourceInfo, bytes: number, kind: CoverKind, crop: CropBox | undefined, cropping: CoverCropping): boolean {
  const [cw, ch] = SIZES[kind].cover.map((side) => side * KEEP_UNCHANGED.scale) as [number, number];
  return (
    meta.format === 'jpeg' &&
    bytes <= KEEP_UNCHANGED.bytes &&
    !crop &&
    !cropping.smartCroppingEnabled &&
    (meta.orientation === undefined || meta.orientation === 1) &&
    (meta.space === 'srgb' || meta.space === 'b-w') &&
    (kind === 'book' ? meta.width <= cw && meta.height <= ch : meta.width === meta.height && meta.width <= cw)
  );
}

/** The description an ICC profile gives itself ('desc' tag, ICC v2 text or v4 multi-localised), if readable. */
function iccDescription(icc: Buffer): string | undefined {
  if (icc.length < 132) return undefined;
  const tags = icc.readUInt32BE(128);
  for (let i = 0; i < tags && 144 + i * 12 <= icc.length; i++) {
    const entry = 132 + i * 12;
    if (icc.toString('latin1', entry, entry + 4) !== 'desc') continue;
    const at = icc.readUInt32BE(entry + 4);
    const end = Math.min(icc.length, at + icc.readUInt32BE(entry + 8));
    const type = icc.toString('latin1', at, at + 4);
    if (type === 'desc' && at + 12 <= end) return icc.toString('latin1', at + 12, Math.min(end, at + 12 + icc.readUInt32BE(at + 8))).replace(/\0+$/, '');
    if (type === 'mluc' && at + 28 <= end) {
      const from = at + icc.readUInt32BE(at + 24);
      const bytes = Buffer.from(icc.subarray(from, Math.min(end, from + icc.readUInt32BE(at + 20))));
      return bytes.subarray(0, bytes.length & ~1).swap16().toString('utf16le');
    }
    return undefined;
  }
  return undefined;
}

/**
 * An RGB image tagged with an sRGB profile is already what the outputs are: converting it through the profile
 * changes nothing visible and was two thirds of the work for a rendered PDF page (whose JPEG always carries one).
 */
function isSrgbProfile(meta: SourceInfo): boolean {
  if (!meta.icc || meta.space !== 'srgb') return false;
  if (meta.icc.length < 20 || meta.icc.toString('latin1', 16, 20) !== 'RGB ') return false;
  return /\bsRGB\b/.test(iccDescription(meta.icc) ?? '');
}

/**
 * Where `makeCoverImages` puts the cover it settles on before the thumbnail is made: a file it writes (blocking) and
 * returns the path of. The thumbnail is then decoded from that file, which lets libvips decode a JPEG at 1/2, 1/4 or
 * 1/8 of its size where sharp, given bytes, would decode it whole (see `decodeShrink`).
 */
export type CoverSink = (cover: Buffer) => string;

/**
 * The JPEG decode scale for a thumbnail: the largest of 8, 4 and 2 that still leaves something (under 3x) to reduce.
 * sharp picks its own scale only when it leaves at least 2x, and none at all between 2x and 3x, the common case of a
 * cover of ~600-1000 px. 1 when no scale fits.
 */
export function decodeShrink(width: number, height: number, box: readonly [number, number], fit: 'inside' | 'cover'): number {
  const shrink = fit === 'inside' ? Math.max(width / box[0], height / box[1]) : Math.min(width / box[0], height / box[1]);
  for (const factor of [8, 4, 2]) if (shrink > factor && shrink / factor < 3) return factor;
  return 1;
}

/** A book's cover as it is stored: the source JPEG itself when it can be kept, else a bounded JPEG made from it. */
export interface SettledCover {
  cover: Buffer;
  width: number;
  height: number;
  /** The cover has no colour profile to apply (none, or sRGB's): its thumbnail skips colour management. */
  ignoreIcc: boolean;
}

const inputOptions = (ignoreIcc = false): InputOptions => ({ limitInputPixels: LIMITS.maxImagePixels, failOn: 'error', animated: false, ignoreIcc });

/** Checks an image's size against the limits and reads what the decisions need. */
async function inspectWithinLimits(input: Buffer): Promise<SourceInfo> {
  const meta = await inspect(input, inputOptions());
  if (!meta.width || !meta.height) throw new FormatError('CORRUPT', 'cover image has no dimensions');
  if (meta.width * meta.height > LIMITS.maxImagePixels) {
    throw new FormatError('TOO_LARGE', `cover image is ${meta.width}x${meta.height} (limit ${LIMITS.maxImagePixels} pixels)`);
  }
  return meta;
}

/**
 * The cover a book's image becomes: the image itself when it is a JPEG that can be kept (no decoding at all, only its
 * header read), else a JPEG within the cover box.
 */
export async function makeCover(input: Buffer, kind: CoverKind, cropping: CoverCropping = DEFAULT_COVER_CROPPING): Promise<SettledCover> {
  const meta = await inspectWithinLimits(input);
  const options = inputOptions(isSrgbProfile(meta));
  try {
    const sharp = await loadSharp();
    let source = input;
    let width = meta.width;
    let height = meta.height;
    if (cropping.smartCroppingEnabled) {
      const trimmed = await sharp(input, options).rotate().trim({ threshold: 20 }).toBuffer({ resolveWithObject: true });
      source = trimmed.data;
      width = trimmed.info.width;
      height = trimmed.info.height;
    }
    const crop = cropFor(width, height, cropping);
    if (canKeepAsCover(meta, input.length, kind, crop, cropping)) return { cover: input, width: meta.width, height: meta.height, ignoreIcc: options.ignoreIcc };
    const [cw, ch] = SIZES[kind].cover;
    let pipeline = sharp(source, options).rotate();
    if (crop) pipeline = pipeline.extract(crop);
    const { data: cover, info } = await pipeline
      .flatten({ background: '#ffffff' })
      .toColourspace('srgb')
      .resize(cw, ch, { fit: kind === 'audiobook' ? 'cover' : 'inside', withoutEnlargement: true })
      // Standard Huffman tables: the same pixels in a file ~9% larger, for half the encoding's CPU (optimised tables
      // are gathered in a second pass libjpeg-turbo does not vectorise: 4.7 of 8 ms for a 1000x1500 cover). A scan
      // converts one EPUB cover in eight (the PNGs); the thumbnails, served far more often, keep optimised tables.
      .jpeg({ quality: 85, optimiseCoding: false })
      .toBuffer({ resolveWithObject: true });
    // Upright, cropped, sRGB and without a profile: its thumbnail needs no colour management.
    return { cover, width: info.width, height: info.height, ignoreIcc: true };
  } catch (error) {
    throw new FormatError('CORRUPT', `cover image cannot be converted: ${(error as Error).message}`);
  }
}

/**
 * The thumbnail of a settled cover. Given the file the cover was written to, a JPEG is decoded from it at 1/2, 1/4 or
 * 1/8 of its size (see `decodeShrink`); given bytes alone, sharp would decode it whole.
 */
export async function makeThumbnail(settled: SettledCover, kind: CoverKind, path?: string): Promise<Buffer> {
  const sharp = await loadSharp();
  const fit = kind === 'audiobook' ? 'cover' : 'inside';
  const [tw, th] = SIZES[kind].thumbnail;
  const shrink = decodeShrink(settled.width, settled.height, [tw, th], fit);
  // libvips reads load options from a file name's `[…]` suffix; a path that has brackets of its own is read whole.
  const source = path !== undefined && shrink > 1 && !/[[\]]/.test(path) ? `${path}[shrink=${shrink}]` : settled.cover;
  try {
    return await sharp(source, inputOptions(settled.ignoreIcc))
      .rotate()
      .flatten({ background: '#ffffff' })
      .toColourspace('srgb')
      .resize(tw, th, { fit, withoutEnlargement: true })
      .jpeg({ quality: 80 })
      .toBuffer();
  } catch (error) {
    throw new FormatError('CORRUPT', `cover image cannot be converted: ${(error as Error).message}`);
  }
}

/** The thumbnail of a cover already stored as a file (a scan stores covers first and their thumbnails later). */
export async function thumbnailOfCoverFile(path: string, kind: CoverKind): Promise<Buffer> {
  const cover = await readFile(path);
  const meta = await inspectWithinLimits(cover);
  return makeThumbnail({ cover, width: meta.width, height: meta.height, ignoreIcc: isSrgbProfile(meta) }, kind, path);
}

/**
 * The cover (see `makeCover`) and a thumbnail. With `sink`, the cover is written there first and the thumbnail read
 * back from it at reduced scale; the images are returned either way.
 */
export async function makeCoverImages(input: Buffer, kind: CoverKind, cropping: CoverCropping = DEFAULT_COVER_CROPPING, sink?: CoverSink): Promise<CoverImages> {
  const settled = await makeCover(input, kind, cropping);
  const thumbnail = await makeThumbnail(settled, kind, sink?.(settled.cover));
  return { cover: settled.cover, thumbnail, width: settled.width, height: settled.height };
}
