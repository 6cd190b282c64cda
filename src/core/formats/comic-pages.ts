// Which archive entries are comic pages, in which order, and where the ComicInfo.xml sidecar lives.
import { FormatError } from './errors.ts';
import { LIMITS } from './limits.ts';
import { naturalCompare } from './values.ts';

const PAGE_MIME: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  bmp: 'image/bmp',
  jxl: 'image/jxl',
};

function segments(name: string): string[] {
  return name.replace(/\\/g, '/').split('/').filter((s) => s !== '' && s !== '.');
}

/** macOS resource forks (`__MACOSX/`, `._page1.jpg`) and other hidden files are never pages or metadata. */
function isHiddenOrJunk(name: string): boolean {
  return segments(name).some((s) => s === '__MACOSX' || s.startsWith('.'));
}

function extensionOf(name: string): string {
  const base = segments(name).at(-1) ?? '';
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? '' : base.slice(dot + 1).toLowerCase();
}

export function pageMime(name: string): string | undefined {
  return PAGE_MIME[extensionOf(name)];
}

/**
 * Image entries in reading order: natural sort on the full path, so `page2` precedes `page10`. More than
 * LIMITS.maxPages pages is refused (TOO_LARGE) before anything is sorted: every page list, count and reader goes
 * through here.
 */
export function orderPages(names: Iterable<string>): string[] {
  const pages = [...names].filter((n) => !isHiddenOrJunk(n) && pageMime(n) !== undefined);
  if (pages.length > LIMITS.maxPages) throw new FormatError('TOO_LARGE', `the archive has ${pages.length} pages (limit ${LIMITS.maxPages})`);
  return pages.sort(naturalCompare);
}

/** ComicInfo.xml at the root if there is one, else the shallowest one anywhere; name matched ignoring case. */
export function findComicInfo(names: Iterable<string>): string | undefined {
  let best: { name: string; depth: number } | undefined;
  for (const name of names) {
    if (isHiddenOrJunk(name)) continue;
    const parts = segments(name);
    if (parts.at(-1)?.toLowerCase() !== 'comicinfo.xml') continue;
    if (!best || parts.length < best.depth || (parts.length === best.depth && naturalCompare(name, best.name) < 0)) {
      best = { name, depth: parts.length };
    }
  }
  return best?.name;
}
