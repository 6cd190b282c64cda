// What the web EPUB reader asks of a book: its structure (package path, spine, manifest, table of contents, a few
// metadata values, cover) and single entries of the archive, which it renders itself.
import { stat } from 'node:fs/promises';
import { posix } from 'node:path';
import { locateOpf } from '../formats/epub.ts';
import { readOpfMetadata } from '../formats/epub-metadata.ts';
import { isImageItem, parsePackage, type EpubPackage, type ManifestItem } from '../formats/epub-package.ts';
import { entryDir, resolveHref } from '../formats/epub-paths.ts';
import { asFormatError, FormatError } from '../formats/errors.ts';
import { LIMITS } from '../formats/limits.ts';
import { attr, child, children, find, parseXml, text, type XmlNode } from '../formats/xml.ts';
import { withZip, type ZipArchive } from '../formats/zip.ts';

export interface EpubTocItem {
  label: string | null;
  href: string | null;
  children: EpubTocItem[] | null;
}

export interface EpubBookInfo {
  /** The package document's archive path. */
  containerPath: string;
  /** Its folder with a trailing slash (empty at the archive root); manifest hrefs below start with it. */
  rootPath: string;
  spine: { idref: string; href: string; mediaType: string; linear: boolean }[];
  manifest: { id: string; href: string; mediaType: string; properties: string[] | null; size: number }[];
  toc: EpubTocItem | null;
  metadata: Record<string, string>;
  coverPath: string | null;
}

export interface EpubEntry {
  data: Buffer;
  mediaType: string;
}

const CONTAINER = 'META-INF/container.xml';

const TYPES_BY_EXTENSION: Record<string, string> = {
  '.xhtml': 'application/xhtml+xml', '.html': 'application/xhtml+xml', '.htm': 'application/xhtml+xml', '.css': 'text/css',
  '.js': 'application/javascript', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.png': 'image/png', '.gif': 'image/gif',
  '.svg': 'image/svg+xml', '.webp': 'image/webp', '.avif': 'image/avif', '.woff': 'font/woff', '.woff2': 'font/woff2',
  '.ttf': 'font/ttf', '.otf': 'font/otf', '.xml': 'application/xml', '.ncx': 'application/x-dtbncx+xml',
  '.opf': 'application/oebps-package+xml', '.smil': 'application/smil+xml', '.mp3': 'audio/mpeg', '.m4a': 'audio/mp4',
  '.mp4': 'video/mp4', '.ogg': 'audio/ogg',
};

export function guessEntryType(name: string): string {
  return TYPES_BY_EXTENSION[posix.extname(name).toLowerCase()] ?? 'application/octet-stream';
}

/** A resolved href with its `#fragment` kept, as readers need it to jump inside a chapter. */
function hrefWithFragment(baseDir: string, href: string | undefined): string | null {
  const path = resolveHref(baseDir, href);
  if (path === undefined) return null;
  const hash = href?.indexOf('#') ?? -1;
  return hash >= 0 && href ? `${path}${href.slice(hash)}` : path;
}

const MAX_TOC_DEPTH = 16;

/** EPUB 3: the `<nav epub:type="toc">` of the navigation document, list items in order. */
function navToc(nav: XmlNode, navDir: string): EpubTocItem[] {
  const navs: XmlNode[] = [];
  const collect = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node as XmlNode)) {
      if (key.startsWith('@_') || key === '#text') continue;
      for (const item of Array.isArray(value) ? value : [value]) {
        if (key.endsWith('nav') && typeof item === 'object' && item !== null) navs.push(item as XmlNode);
        collect(item);
      }
    }
  };
  collect(nav);
  const tocNav = navs.find((n) => (attr(n, 'type') ?? '').split(/\s+/).includes('toc')) ?? navs[0];
  const items = (list: XmlNode | undefined, depth: number): EpubTocItem[] =>
    depth > MAX_TOC_DEPTH
      ? []
      : children(list, 'li').map((li) => {
          const link = child(li, 'a') ?? child(li, 'span');
          const nested = items(child(li, 'ol'), depth + 1);
          return { label: text(link) ?? null, href: hrefWithFragment(navDir, attr(link, 'href')), children: nested.length > 0 ? nested : null };
        });
  return items(find(tocNav, 'ol'), 0);
}

/** EPUB 2: the NCX `navMap`, nav points in order. */
function ncxToc(ncx: XmlNode, ncxDir: string): EpubTocItem[] {
  const points = (parent: XmlNode | undefined, depth: number): EpubTocItem[] =>
    depth > MAX_TOC_DEPTH
      ? []
      : children(parent, 'navPoint').map((point) => {
          const nested = points(point, depth + 1);
          return { label: text(child(child(point, 'navLabel'), 'text')) ?? null, href: hrefWithFragment(ncxDir, attr(child(point, 'content'), 'src')), children: nested.length > 0 ? nested : null };
        });
  return points(find(ncx, 'navMap'), 0);
}

async function readToc(zip: ZipArchive, pkg: EpubPackage): Promise<EpubTocItem | null> {
  const sources: [ManifestItem | undefined, (doc: XmlNode, dir: string) => EpubTocItem[]][] = [
    [pkg.manifest.find((item) => item.properties.includes('nav')), navToc],
    [pkg.ncx, ncxToc],
  ];
  for (const [item, read] of sources) {
    if (!item?.path || !zip.find(item.path)) continue;
    try {
      const entries = read(parseXml(await zip.readText(item.path), item.path), entryDir(item.path));
      if (entries.length > 0) return { label: 'Table of Contents', href: null, children: entries };
    } catch (error) {
      if (error instanceof FormatError && error.code === 'UNSAFE') throw error;
      // A broken navigation document: try the other kind.
    }
  }
  return null;
}

/** The values Grimmory's reader info carries, from the OPF metadata and the spine. */
function readerMetadata(pkg: EpubPackage): Record<string, string> {
  const { metadata } = readOpfMetadata(pkg.metadata);
  const out: Record<string, string> = {};
  const put = (key: string, value: string | undefined): void => {
    if (value) out[key] = value;
  };
  put('title', metadata.title);
  put('creator', metadata.authors?.[0]);
  put('language', metadata.language);
  put('publisher', metadata.publisher);
  put('identifier', text(child(pkg.metadata, 'identifier')));
  put('description', metadata.description);
  for (const meta of children(pkg.metadata, 'meta')) {
    const property = attr(meta, 'property');
    if (property && ['rendition:layout', 'rendition:orientation', 'rendition:spread', 'media:duration'].includes(property) && !attr(meta, 'refines')) put(property, text(meta));
  }
  put('page-progression-direction', pkg.pageProgressionDirection);
  return out;
}

/** The cover image's archive path: the EPUB 3 `cover-image` item, else the EPUB 2 `<meta name="cover">` item. */
function coverImagePath(pkg: EpubPackage): string | null {
  const byProperty = pkg.manifest.find((item) => item.properties.includes('cover-image') && isImageItem(item));
  if (byProperty?.path) return byProperty.path;
  const coverMeta = readOpfMetadata(pkg.metadata).coverMeta;
  const byMeta = coverMeta ? (pkg.manifestById.get(coverMeta) ?? pkg.manifest.find((item) => item.href === coverMeta)) : undefined;
  return byMeta?.path && isImageItem(byMeta) ? byMeta.path : null;
}

async function buildInfo(path: string): Promise<EpubBookInfo> {
  return withZip(path, async (zip) => {
    const opfPath = await locateOpf(zip);
    const pkg = parsePackage(opfPath, await zip.readText(opfPath, LIMITS.maxXmlBytes));
    const rootPath = pkg.opfDir === '' ? '' : `${pkg.opfDir}/`;
    const present = pkg.manifest.filter((item): item is ManifestItem & { path: string } => item.path !== undefined);
    return {
      containerPath: opfPath,
      rootPath,
      spine: pkg.spineRefs.filter((ref) => ref.item.path !== undefined).map((ref) => ({ idref: ref.item.id, href: ref.item.path as string, mediaType: ref.item.mediaType, linear: ref.linear })),
      manifest: present.map((item) => ({ id: item.id, href: item.path, mediaType: item.mediaType, properties: item.properties.length > 0 ? item.properties : null, size: zip.find(item.path)?.size ?? 0 })),
      toc: await readToc(zip, pkg),
      metadata: readerMetadata(pkg),
      coverPath: coverImagePath(pkg),
    };
  });
}

interface CachedInfo {
  mtimeMs: number;
  size: number;
  info: EpubBookInfo;
  /** Entries the reader may fetch: the container, the package and every manifest item. */
  allowed: Map<string, string>;
}

const MAX_CACHED = 50;
const cache = new Map<string, CachedInfo>();

/** Parsed once per file version; a reader fetching a hundred entries of one book does not re-read its package. */
async function cachedInfo(path: string): Promise<CachedInfo> {
  const { mtimeMs, size } = await stat(path);
  const hit = cache.get(path);
  if (hit && hit.mtimeMs === mtimeMs && hit.size === size) {
    cache.delete(path);
    cache.set(path, hit);
    return hit;
  }
  let info: EpubBookInfo;
  try {
    info = await buildInfo(path);
  } catch (error) {
    throw asFormatError(error);
  }
  const allowed = new Map<string, string>([[CONTAINER, 'application/xml'], [info.containerPath, 'application/oebps-package+xml']]);
  for (const item of info.manifest) allowed.set(item.href, item.mediaType || guessEntryType(item.href));
  const entry = { mtimeMs, size, info, allowed };
  cache.set(path, entry);
  if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value as string);
  return entry;
}

export async function epubBookInfo(path: string): Promise<EpubBookInfo> {
  return (await cachedInfo(path)).info;
}

/**
 * One entry of the EPUB, named by its archive path or by a path relative to the package folder. Only the container,
 * the package document and manifest items are served; anything else, or a path that climbs out, is undefined.
 */
export async function epubEntry(path: string, requested: string): Promise<EpubEntry | undefined> {
  const { info, allowed } = await cachedInfo(path);
  const clean = requested.replace(/^\/+/, '');
  const candidates = [clean, resolveHref(info.rootPath.replace(/\/$/, ''), clean)];
  const name = candidates.find((candidate): candidate is string => candidate !== undefined && allowed.has(candidate));
  if (name === undefined) return undefined;
  try {
    return await withZip(path, async (zip) => (zip.find(name) ? { data: await zip.read(name), mediaType: allowed.get(name) as string } : undefined));
  } catch (error) {
    throw asFormatError(error);
  }
}
