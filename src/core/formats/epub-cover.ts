// Finding and reading an EPUB's cover image, trying each convention publishers use from most to least explicit.
import { imageMime } from './epub-image.ts';
import { entryDir, resolveHref } from './epub-paths.ts';
import { isDocumentItem, isImageItem, type EpubPackage, type ManifestItem } from './epub-package.ts';
import { LIMITS } from './limits.ts';
import type { ExtractedCover } from './types.ts';
import type { ZipArchive } from './zip.ts';

/** A cover candidate is either an image entry or a page (XHTML) whose first image is the cover. */
type Candidate = { kind: 'image'; path: string } | { kind: 'page'; path: string };

// `[^<>]` keeps the scan linear on pages full of stray `<`.
const IMAGE_TAG = /<(img|image)\b[^<>]*>/gi;
const IMG_SRC = /\ssrc\s*=\s*(?:"([^"]*)"|'([^']*)')/i;
const IMAGE_HREF = /\s(?:xlink:)?href\s*=\s*(?:"([^"]*)"|'([^']*)')/i;

function decodeAttribute(value: string): string {
  return value.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&apos;/g, "'");
}

/** The entry of the first `<img src>` or SVG `<image xlink:href>` in an XHTML page. */
export function firstImageInPage(pagePath: string, xhtml: string): string | undefined {
  for (const match of xhtml.matchAll(IMAGE_TAG)) {
    const tag = match[0];
    const found = (match[1]?.toLowerCase() === 'img' ? IMG_SRC : IMAGE_HREF).exec(tag);
    const href = found?.[1] ?? found?.[2];
    const path = href === undefined ? undefined : resolveHref(entryDir(pagePath), decodeAttribute(href));
    if (path) return path;
  }
  return undefined;
}

function candidateFor(item: ManifestItem | undefined): Candidate | undefined {
  if (!item?.path) return undefined;
  if (isImageItem(item)) return { kind: 'image', path: item.path };
  if (isDocumentItem(item)) return { kind: 'page', path: item.path };
  return undefined;
}

/** Cover candidates in priority order; an image path already tried is skipped by the caller. */
function* candidates(pkg: EpubPackage, coverMeta: string | undefined): Generator<Candidate | undefined> {
  yield candidateFor(pkg.manifest.find((item) => item.properties.includes('cover-image')));
  if (coverMeta) {
    const byId = pkg.manifestById.get(coverMeta);
    if (byId) yield candidateFor(byId);
    else {
      const path = resolveHref(pkg.opfDir, coverMeta);
      if (path) yield /\.x?html?$/i.test(path) ? { kind: 'page', path } : { kind: 'image', path };
    }
  }
  yield candidateFor(pkg.manifest.find((item) => isImageItem(item) && /cover/i.test(`${item.id} ${item.href}`)));
  if (pkg.guideCoverPath) yield { kind: 'page', path: pkg.guideCoverPath };
  yield candidateFor(pkg.spine.find(isDocumentItem));
  for (const item of pkg.manifest) if (isImageItem(item)) yield candidateFor(item);
}

async function readImage(zip: ZipArchive, path: string): Promise<ExtractedCover | undefined> {
  const entry = zip.find(path);
  if (!entry || entry.isDirectory) return undefined;
  const data = await zip.read(entry.name, LIMITS.maxEntryBytes);
  const mime = imageMime(data);
  return mime ? { data, mime } : undefined;
}

async function imageOfPage(zip: ZipArchive, pagePath: string): Promise<string | undefined> {
  const entry = zip.find(pagePath);
  if (!entry || entry.isDirectory) return undefined;
  const xhtml = (await zip.read(entry.name, LIMITS.maxXmlBytes)).toString('utf8');
  return firstImageInPage(entry.name, xhtml);
}

/**
 * The first candidate that reads as a real image. A missing, oversized or broken candidate only moves on to the
 * next one: a bad cover never fails the book.
 */
export async function findCover(zip: ZipArchive, pkg: EpubPackage, coverMeta: string | undefined): Promise<ExtractedCover | undefined> {
  const tried = new Set<string>();
  for (const candidate of candidates(pkg, coverMeta)) {
    if (!candidate) continue;
    try {
      const imagePath = candidate.kind === 'image' ? candidate.path : await imageOfPage(zip, candidate.path);
      if (!imagePath || tried.has(imagePath)) continue;
      tried.add(imagePath);
      const cover = await readImage(zip, imagePath);
      if (cover) return cover;
    } catch {
      // Try the next convention.
    }
  }
  return undefined;
}
