// Resolving the relative, URL-encoded hrefs of an EPUB package into archive entry names.
import { posix } from 'node:path';

/** Directory part of an entry name (`OEBPS/content.opf` → `OEBPS`, `content.opf` → ``). */
export function entryDir(entryName: string): string {
  const dir = posix.dirname(entryName);
  return dir === '.' ? '' : dir;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * The archive entry an href points to, relative to `baseDir`. Fragments and queries are dropped; hrefs that are
 * remote, absolute or climb out of the archive give undefined.
 */
export function resolveHref(baseDir: string, href: string | undefined): string | undefined {
  if (!href) return undefined;
  const bare = href.trim().replace(/[#?].*$/, '');
  if (bare === '' || /^[a-z][a-z0-9+.-]*:/i.test(bare) || bare.startsWith('/')) return undefined;
  const joined = posix.normalize(posix.join(baseDir, safeDecode(bare)));
  if (joined === '..' || joined.startsWith('../') || joined.startsWith('/')) return undefined;
  return joined;
}
