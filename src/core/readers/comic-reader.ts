// What the web comic reader asks of a book: its pages in reading order, their names and their sizes in pixels.
import { stat } from 'node:fs/promises';
import { withComicArchive, type ComicArchive } from '../formats/comic-archive.ts';
import { orderPages } from '../formats/comic-pages.ts';
import { FormatError } from '../formats/errors.ts';
import { imageSizeFromHeader, type ImageSize } from './image-size.ts';
import { LIMITS } from '../formats/limits.ts';
import { comicPages } from '../komga/pages.ts';
import { loadSharp } from '../covers/sharp-loader.ts';

export interface ComicPageInfo {
  pageNumber: number;
  displayName: string;
}

export interface ComicPageDimension {
  pageNumber: number;
  width: number;
  height: number;
  /** Wider than tall: a double-page spread. */
  wide: boolean;
}

export async function comicPageInfo(path: string): Promise<ComicPageInfo[]> {
  return (await comicPages(path)).map((page) => ({ pageNumber: page.number, displayName: page.fileName.split('/').pop() ?? page.fileName }));
}

const MAX_CACHED = 20;
const dimensionCache = new Map<string, { key: string; dimensions: ComicPageDimension[] }>();

/**
 * A page's size: from the first bytes of its image (the header; the picture is never decoded). A header the first
 * bytes do not hold, or a format only the image library knows (AVIF, JPEG XL), is read whole within the usual entry
 * cap and handed to sharp's header reader, which does not decode either.
 */
async function pageSize(archive: ComicArchive, name: string): Promise<ImageSize | undefined> {
  const head = await archive.readHead(name, LIMITS.pageHeaderBytes).catch(() => undefined);
  if (!head) return undefined;
  const fromHeader = imageSizeFromHeader(head);
  if (fromHeader !== undefined && fromHeader !== 'more') return fromHeader;
  const data = await archive.read(name).catch(() => undefined);
  if (!data) return undefined;
  const sharp = await loadSharp();
  const meta = await sharp(data, { limitInputPixels: LIMITS.maxImagePixels }).metadata().catch(() => undefined);
  if (!meta?.width || !meta.height) return undefined;
  return { width: meta.width, height: meta.height, ...(meta.orientation !== undefined ? { orientation: meta.orientation } : {}) };
}

/**
 * Every page's size, read from the image headers (each page once per file version, then remembered). A page that is
 * not a readable image reports 0×0 rather than failing the whole book. An archive with more than LIMITS.maxPages
 * pages, or whose pages take longer than LIMITS.maxArchiveWorkMs to go through, fails with TOO_LARGE.
 */
export async function comicPageDimensions(path: string): Promise<ComicPageDimension[]> {
  const { size, mtimeMs } = await stat(path);
  const key = `${size}:${mtimeMs}`;
  const hit = dimensionCache.get(path);
  if (hit?.key === key) return hit.dimensions;
  const deadline = performance.now() + LIMITS.maxArchiveWorkMs;
  const dimensions = await withComicArchive(path, async (archive) => {
    const names = orderPages((await archive.list()).map((entry) => entry.name));
    const out: ComicPageDimension[] = [];
    for (const [i, name] of names.entries()) {
      if (performance.now() > deadline) {
        throw new FormatError('TOO_LARGE', `reading the sizes of ${names.length} pages took longer than ${LIMITS.maxArchiveWorkMs / 1000} s (${i} done)`);
      }
      const meta = await pageSize(archive, name);
      // EXIF orientations 5–8 turn the picture a quarter: what the reader shows has width and height swapped.
      const turned = meta?.orientation !== undefined && meta.orientation >= 5;
      const width = (turned ? meta?.height : meta?.width) ?? 0;
      const height = (turned ? meta?.width : meta?.height) ?? 0;
      out.push({ pageNumber: i + 1, width, height, wide: width > height });
    }
    return out;
  });
  dimensionCache.set(path, { key, dimensions });
  if (dimensionCache.size > MAX_CACHED) dimensionCache.delete(dimensionCache.keys().next().value as string);
  return dimensions;
}
