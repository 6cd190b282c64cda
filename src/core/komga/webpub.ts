// What Komga's Readium-based EPUB readers ask for: the book as a Readium Web Publication manifest (its spine as the
// reading order, every other manifest item as a resource, the table of contents), and its positions list (Readium's
// rule: one position per 1024 bytes of each spine document, one per document for fixed layouts). Every href points
// to `…/books/{id}/resource/{archive path}`; positions and progressions name the archive path itself, as Komga's do.
import type { EpubBookInfo, EpubTocItem } from '../readers/epub-reader.ts';
import { bookName, type KomgaBookRow } from './catalog.ts';
import { releaseDate, type Json, type Links } from './dto.ts';

type JsonObject = { [key: string]: Json };

export const WEBPUB_TYPE = 'application/webpub+json';
export const POSITION_LIST_TYPE = 'application/vnd.readium.position-list+json';
export const PROGRESSION_TYPE = 'application/vnd.readium.progression+json';
const EPUB_PROFILE = 'https://readium.org/webpub-manifest/profiles/epub';
const CONTEXT = 'https://readium.org/webpub-manifest/context.jsonld';

/** An archive path as a URL path (each segment escaped, the slashes kept). */
export const encodeArchivePath = (path: string): string => path.split('/').map(encodeURIComponent).join('/');

export const resourceUrl = (links: Links, bookId: number, archivePath: string): string => `${links.apiRoot}/api/v1/books/${bookId}/resource/${encodeArchivePath(archivePath)}`;

const isFixedLayout = (info: EpubBookInfo): boolean => info.metadata['rendition:layout'] === 'pre-paginated';

function tocLinks(links: Links, bookId: number, items: readonly EpubTocItem[]): JsonObject[] {
  return items.map((item) => {
    const hash = item.href?.indexOf('#') ?? -1;
    const path = item.href === null ? null : hash >= 0 ? item.href.slice(0, hash) : item.href;
    return {
      ...(item.label ? { title: item.label } : {}),
      ...(path !== null ? { href: `${resourceUrl(links, bookId, path)}${hash >= 0 ? (item.href as string).slice(hash) : ''}` } : {}),
      ...(item.children && item.children.length > 0 ? { children: tocLinks(links, bookId, item.children) } : {}),
    };
  });
}

export interface ManifestBook {
  row: KomgaBookRow;
  seriesTitle: string;
  modified: string;
}

/** The Readium Web Publication manifest of an EPUB (Komga's `GET /api/v1/books/{id}/manifest`). */
export function epubManifest(book: ManifestBook, info: EpubBookInfo, links: Links): JsonObject {
  const { row } = book;
  const spine = new Set(info.spine.map((s) => s.href));
  const published = releaseDate(row.publishedDate);
  const isbn = row.isbn13 ?? row.isbn10;
  const metadata: JsonObject = {
    title: bookName(row),
    ...(isbn ? { identifier: `urn:isbn:${isbn}` } : {}),
    conformsTo: EPUB_PROFILE,
    ...(row.language ? { language: row.language } : info.metadata.language ? { language: info.metadata.language } : {}),
    modified: book.modified,
    ...(published ? { published } : {}),
    ...(row.authors.length > 0 ? { author: row.authors } : {}),
    ...(row.publisher ? { publisher: [row.publisher] } : {}),
    ...(row.categories.length + row.tags.length > 0 ? { subject: [...row.categories, ...row.tags] } : {}),
    readingProgression: info.metadata['page-progression-direction'] === 'rtl' ? 'rtl' : 'ltr',
    ...(row.description ? { description: row.description } : {}),
    ...(row.pageCount ? { numberOfPages: row.pageCount } : {}),
    ...(row.seriesName ? { belongsTo: { series: [{ name: book.seriesTitle, ...(row.seriesNumber !== null ? { position: row.seriesNumber } : {}) }] } } : {}),
    rendition: { layout: isFixedLayout(info) ? 'fixed' : 'reflowable' },
  };
  return {
    '@context': CONTEXT,
    metadata,
    links: [
      { rel: 'self', href: `${links.apiRoot}/api/v1/books/${row.id}/manifest`, type: WEBPUB_TYPE },
      { rel: 'http://opds-spec.org/acquisition', href: `${links.apiRoot}/api/v1/books/${row.id}/file`, type: 'application/epub+zip' },
    ],
    readingOrder: info.spine.map((item) => ({ href: resourceUrl(links, row.id, item.href), type: item.mediaType || 'application/xhtml+xml' })),
    resources: [
      { rel: 'cover', href: `${links.apiRoot}/api/v1/books/${row.id}/thumbnail`, type: 'image/jpeg' },
      ...info.manifest.filter((item) => !spine.has(item.href)).map((item) => ({ href: resourceUrl(links, row.id, item.href), type: item.mediaType || 'application/octet-stream' })),
    ],
    toc: tocLinks(links, row.id, info.toc?.children ?? []),
  };
}

export interface Position {
  href: string;
  type: string;
  locations: { progression: number; position: number; totalProgression: number };
}

/** Readium's positions of the EPUB, in reading order. */
export function epubPositions(info: EpubBookInfo): Position[] {
  const sizes = new Map(info.manifest.map((item) => [item.href, item.size]));
  const fixed = isFixedLayout(info);
  const perDocument = info.spine.map((item) => ({ item, count: fixed ? 1 : Math.max(1, Math.ceil((sizes.get(item.href) ?? 0) / 1024)) }));
  const total = perDocument.reduce((sum, d) => sum + d.count, 0);
  const out: Position[] = [];
  for (const { item, count } of perDocument) {
    for (let i = 0; i < count; i++) {
      const position = out.length + 1;
      out.push({ href: item.href, type: item.mediaType || 'application/xhtml+xml', locations: { progression: i / count, position, totalProgression: (position - 1) / total } });
    }
  }
  return out;
}

/** The position a locator (a document and a progression within it) falls on: the last one at or before it. */
export function positionAt(positions: readonly Position[], href: string, progression: number): Position | undefined {
  let found: Position | undefined;
  for (const p of positions) if (p.href === href && p.locations.progression <= progression + 1e-9) found = p;
  return found ?? positions.find((p) => p.href === href);
}

/** How far through the book a locator is: its document's share of the positions, interpolated by its progression. */
export function totalProgressionAt(positions: readonly Position[], href: string, progression: number): number {
  const inDocument = positions.filter((p) => p.href === href);
  const first = inDocument[0];
  if (!first || positions.length === 0) return 0;
  return Math.min(1, first.locations.totalProgression + (progression * inDocument.length) / positions.length);
}

/** The position at a fraction of the whole book (for progress another client recorded as a percentage). */
export function positionAtTotal(positions: readonly Position[], totalProgression: number): Position | undefined {
  let found = positions[0];
  for (const p of positions) if (p.locations.totalProgression <= totalProgression + 1e-9) found = p;
  return found;
}
