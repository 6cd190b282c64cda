// The package document side of a KEPUB: which manifest items are content documents, and the cover item marked with
// the `cover-image` property Kobo looks for.
import { entryDir, resolveHref } from '../formats/epub-paths.ts';

const ATTRIBUTE = (name: string): RegExp => new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`, 'i');

function attribute(tag: string, name: string): string | undefined {
  const m = ATTRIBUTE(name).exec(tag);
  return m ? (m[1] ?? m[2]) : undefined;
}

const decodeXml = (value: string): string =>
  value.replace(/&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-f]+);/gi, (whole, entity: string) => {
    const named: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
    if (entity.startsWith('#x') || entity.startsWith('#X')) return String.fromCodePoint(parseInt(entity.slice(2), 16));
    if (entity.startsWith('#')) return String.fromCodePoint(parseInt(entity.slice(1), 10));
    return named[entity.toLowerCase()] ?? whole;
  });

/** The OPF's path from META-INF/container.xml. */
export function rootfilePath(containerXml: string): string | undefined {
  const tag = /<(?:\w+:)?rootfile\b[^>]*>/i.exec(containerXml)?.[0];
  const path = tag ? attribute(tag, 'full-path') : undefined;
  return path ? decodeXml(path).replace(/^\/+/, '') : undefined;
}

/** Archive entry names of the manifest's HTML and XHTML documents. */
export function contentDocuments(opf: string, opfPath: string): Set<string> {
  const dir = entryDir(opfPath);
  const out = new Set<string>();
  for (const tag of opf.match(/<(?:\w+:)?item\b[^>]*>/gi) ?? []) {
    const type = attribute(tag, 'media-type')?.trim().toLowerCase();
    if (type !== 'application/xhtml+xml' && type !== 'text/html') continue;
    const href = attribute(tag, 'href');
    const entry = href === undefined ? undefined : resolveHref(dir, decodeXml(href));
    if (entry) out.add(entry);
  }
  return out;
}

/** Marks the cover (named by `<meta name="cover">`, else the item with id `cover`) as `cover-image`. */
export function markCoverImage(opf: string): string {
  const meta = (opf.match(/<(?:\w+:)?meta\b[^>]*>/gi) ?? []).find((tag) => attribute(tag, 'name') === 'cover');
  const coverId = (meta ? attribute(meta, 'content') : undefined) ?? 'cover';
  let done = false;
  return opf.replace(/<(?:\w+:)?item\b[^>]*>/gi, (tag) => {
    if (done || attribute(tag, 'id') !== coverId) return tag;
    done = true;
    const properties = attribute(tag, 'properties');
    if (properties === undefined) return tag.replace(/\s*(\/?)>$/, ' properties="cover-image"$1>');
    if (properties.split(/\s+/).includes('cover-image')) return tag;
    return tag.replace(ATTRIBUTE('properties'), (whole) => whole.replace(properties, `${properties} cover-image`.trim()));
  });
}
