// What the web comic reader asks of a book: its pages in reading order, their names and their sizes in pixels.
import { stat } from 'node:fs/promises';
import { withComicArchive } from '../formats/comic-archive.ts';
import { orderPages } from '../formats/comic-pages.ts';
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
 * Every page's size, read from the image headers (each page is read once per file version, then remembered). A page
 * that is not a readable image reports 0×0 rather than failing the whole book.
 */
export async function comicPageDimensions(path: string): Promise<ComicPageDimension[]> {
  const { size, mtimeMs } = await stat(path);
  const key = `${size}:${mtimeMs}`;
  const hit = dimensionCache.get(path);
  if (hit?.key === key) return hit.dimensions;
  const sharp = await loadSharp();
  const dimensions = await withComicArchive(path, async (archive) => {
    const names = orderPages((await archive.list()).map((entry) => entry.name));
    const out: ComicPageDimension[] = [];
    for (const [i, name] of names.entries()) {
      const data = await archive.read(name).catch(() => undefined);
      const meta = data ? await sharp(data, { limitInputPixels: 200_000_000 }).metadata().catch(() => undefined) : undefined;
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
