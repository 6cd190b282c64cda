// The structural half of an OPF package document: manifest, spine, guide and the metadata element.
import { FormatError } from './errors.ts';
import { resolveHref, entryDir } from './epub-paths.ts';
import { attr, child, children, parseXml, type XmlNode } from './xml.ts';

export interface ManifestItem {
  id: string;
  /** Raw href as written in the OPF. */
  href: string;
  /** Archive entry name the href resolves to; undefined when it points outside the archive. */
  path: string | undefined;
  mediaType: string;
  properties: string[];
}

export interface EpubPackage {
  opfPath: string;
  opfDir: string;
  version: string | undefined;
  metadata: XmlNode | undefined;
  manifest: ManifestItem[];
  manifestById: Map<string, ManifestItem>;
  /** Spine items in reading order (itemrefs pointing at unknown ids are skipped). */
  spine: ManifestItem[];
  /** The same items with their `linear` flag (`linear="no"` marks auxiliary content). */
  spineRefs: { item: ManifestItem; linear: boolean }[];
  /** The spine's `page-progression-direction` (`rtl` for manga and right-to-left scripts). */
  pageProgressionDirection: string | undefined;
  /** The EPUB 2 NCX table of contents named by the spine's `toc` attribute. */
  ncx: ManifestItem | undefined;
  /** Archive entry of the EPUB 2 guide's cover page, if any. */
  guideCoverPath: string | undefined;
}

export function isImageItem(item: ManifestItem): boolean {
  if (item.mediaType.startsWith('image/')) return item.mediaType !== 'image/svg+xml';
  return /\.(jpe?g|png|gif|webp)$/i.test(item.path ?? '');
}

export function isDocumentItem(item: ManifestItem): boolean {
  return /html/i.test(item.mediaType) || /\.x?html?$/i.test(item.path ?? '');
}

export function parsePackage(opfPath: string, opfText: string): EpubPackage {
  const root = child(parseXml(opfText, 'OPF package document'), 'package');
  if (!root) throw new FormatError('CORRUPT', `${opfPath} has no <package> element`);
  const opfDir = entryDir(opfPath);

  const manifest: ManifestItem[] = [];
  for (const node of children(child(root, 'manifest'), 'item')) {
    const id = attr(node, 'id') ?? '';
    const href = attr(node, 'href') ?? '';
    manifest.push({
      id,
      href,
      path: resolveHref(opfDir, href),
      mediaType: (attr(node, 'media-type') ?? '').trim().toLowerCase(),
      properties: (attr(node, 'properties') ?? '').split(/\s+/).filter(Boolean),
    });
  }
  const manifestById = new Map<string, ManifestItem>();
  for (const item of manifest) if (item.id && !manifestById.has(item.id)) manifestById.set(item.id, item);

  const spineNode = child(root, 'spine');
  const spineRefs: EpubPackage['spineRefs'] = [];
  for (const ref of children(spineNode, 'itemref')) {
    const item = manifestById.get(attr(ref, 'idref') ?? '');
    if (item) spineRefs.push({ item, linear: (attr(ref, 'linear') ?? 'yes').trim().toLowerCase() !== 'no' });
  }

  const coverReference = children(child(root, 'guide'), 'reference').find((r) => (attr(r, 'type') ?? '').toLowerCase() === 'cover');

  return {
    opfPath,
    opfDir,
    version: attr(root, 'version'),
    metadata: child(root, 'metadata'),
    manifest,
    manifestById,
    spine: spineRefs.map((ref) => ref.item),
    spineRefs,
    pageProgressionDirection: attr(spineNode, 'page-progression-direction'),
    ncx: manifestById.get(attr(spineNode, 'toc') ?? '') ?? manifest.find((item) => item.mediaType === 'application/x-dtbncx+xml'),
    guideCoverPath: resolveHref(opfDir, attr(coverReference, 'href')),
  };
}
