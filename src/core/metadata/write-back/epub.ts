// EPUB write-back: only the OPF package document's <metadata> element changes, and in it only the elements that
// carry catalog fields; every other entry of the archive is copied as stored.
import type { Stats } from 'node:fs';
import { htmlToText } from '../../formats/epub-html.ts';
import { resolveHref } from '../../formats/epub-paths.ts';
import { extractEpub } from '../../formats/epub.ts';
import { FormatError } from '../../formats/errors.ts';
import { LIMITS } from '../../formats/limits.ts';
import { normalizeDate, parseIsbn } from '../../formats/values.ts';
import { attr, children, find, parseXml } from '../../formats/xml.ts';
import { withZip } from '../../formats/zip.ts';
import { replaceFileAtomically } from './atomic-replace.ts';
import { WriteBackError, type FileMetadata, type WriteBackHooks } from './types.ts';
import { assertReadsBack, reopened, type Expectation } from './verify.ts';
import {
  childrenOf,
  escapeAttr,
  escapeText,
  layOut,
  localNameOf,
  prefixFor,
  prefixOf,
  textOf,
  xmlSafe,
  findElement,
  type XmlElementSpan,
} from './xml-text.ts';
import { readZipLayoutOf, rewriteZipEntry } from './zip-rewrite.ts';

const DC_NS = 'http://purl.org/dc/elements/1.1/';
const OPF_NS = 'http://www.idpf.org/2007/opf';

/** Named/property metas that carry catalog fields (and so are rewritten); `belongs-to-collection` is the EPUB 3 series. */
const MANAGED_METAS = new Set([
  'calibre:series', 'calibre:series_index', 'calibre:series_total', 'belongs-to-collection',
  'booklore:subtitle', 'booklore:series', 'booklore:series_index', 'booklore:series_total', 'booklore:tags',
  'booklore:asin', 'booklore:goodreads_id', 'booklore:comicvine_id', 'booklore:hardcover_id', 'booklore:google_books_id',
]);

/** Identifier schemes the catalog writes (as `urn:<scheme>:<value>`), and the spellings others use for them. */
const MANAGED_SCHEMES = new Set(['isbn', 'amazon', 'asin', 'mobi-asin', 'google', 'goodreads', 'hardcover', 'hardcoverbook', 'comicvine', 'lubimyczytac', 'ranobedb']);

function attrByLocal(element: XmlElementSpan, local: string): string | undefined {
  for (const [name, value] of element.attrs) if (localNameOf(name) === local && !name.startsWith('xmlns')) return value;
  return undefined;
}

interface MetaInfo {
  element: XmlElementSpan;
  local: string;
  id: string | undefined;
  refines: string | undefined;
}

function identifierScheme(xml: string, info: MetaInfo, refinements: Map<string, MetaInfo[]>): string | undefined {
  const text = textOf(xml, info.element);
  const declared = attrByLocal(info.element, 'scheme')?.trim().toLowerCase();
  if (declared) return declared;
  const typed = info.id ? refinements.get(info.id)?.find((r) => attrByLocal(r.element, 'property') === 'identifier-type') : undefined;
  if (typed) {
    const code = textOf(xml, typed.element).trim();
    return code === '02' || code === '15' ? 'isbn' : `onix-${code}`;
  }
  const urn = /^urn:([a-z0-9][a-z0-9._-]*):/i.exec(text);
  if (urn?.[1]) return urn[1].toLowerCase();
  const prefixed = /^([a-z][a-z0-9._-]{0,24}):(?!\/\/)/i.exec(text);
  if (prefixed?.[1]) return prefixed[1].toLowerCase();
  const isbn = parseIsbn(text);
  return isbn.isbn13 ?? isbn.isbn10 ? 'isbn' : undefined;
}

function rolesOf(xml: string, info: MetaInfo, refinements: Map<string, MetaInfo[]>): string[] {
  const roles: string[] = [];
  const own = attrByLocal(info.element, 'role')?.trim().toLowerCase();
  if (own) roles.push(own);
  for (const r of (info.id ? refinements.get(info.id) : undefined) ?? []) {
    if (attrByLocal(r.element, 'property') === 'role') roles.push(textOf(xml, r.element).toLowerCase());
  }
  return roles;
}

/** Whether a child of <metadata> holds a catalog field (and is replaced by what the catalog says). */
function isManaged(xml: string, info: MetaInfo, meta: FileMetadata, uniqueId: string | undefined, refinements: Map<string, MetaInfo[]>): boolean {
  switch (info.local) {
    case 'title':
      return meta.title !== undefined;
    case 'language':
      return meta.language !== undefined;
    case 'creator': {
      const roles = rolesOf(xml, info, refinements);
      return roles.length === 0 || roles.includes('aut');
    }
    case 'publisher':
    case 'subject':
    case 'description':
      return true;
    case 'date': {
      const event = attrByLocal(info.element, 'event')?.trim().toLowerCase();
      return !event || event === 'publication' || event === 'original-publication';
    }
    case 'identifier': {
      if (info.id !== undefined && info.id === uniqueId) return false;
      const scheme = identifierScheme(xml, info, refinements);
      return scheme !== undefined && MANAGED_SCHEMES.has(scheme);
    }
    case 'meta': {
      if (info.refines) return false;
      const key = (attrByLocal(info.element, 'name') ?? attrByLocal(info.element, 'property'))?.trim().toLowerCase();
      return key !== undefined && MANAGED_METAS.has(key);
    }
    default:
      return false;
  }
}

function formatNumber(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Number(n.toFixed(6)));
}

interface Names {
  dc: string;
  meta: string;
  /** Prefix for `opf:role` on EPUB 2 creators; undefined when the document binds none. */
  opfAttr: string | undefined;
  v3: boolean;
}

/** The catalog's fields as OPF elements, in a fixed order. */
function generatedElements(meta: FileMetadata, names: Names): string[] {
  const t = (s: string): string => escapeText(xmlSafe(s));
  const a = (s: string): string => escapeAttr(xmlSafe(s));
  const dc = (local: string, value: string, attrs = ''): string => `<${names.dc}${local}${attrs}>${t(value)}</${names.dc}${local}>`;
  const named = (name: string, content: string): string => `<${names.meta} name="${a(name)}" content="${a(content)}"/>`;
  const refine = (id: string, property: string, value: string, attrs = ''): string => `<${names.meta} refines="#${id}" property="${property}"${attrs}>${t(value)}</${names.meta}>`;
  const out: string[] = [];

  if (meta.title) out.push(dc('title', meta.title));
  if (meta.subtitle) {
    if (names.v3) out.push(dc('title', meta.subtitle, ' id="bindery-subtitle"'), refine('bindery-subtitle', 'title-type', 'subtitle'));
    else out.push(named('booklore:subtitle', meta.subtitle));
  }
  meta.authors.forEach((author, i) => {
    if (names.v3) {
      const id = `bindery-creator-${i + 1}`;
      out.push(dc('creator', author, ` id="${id}"`), refine(id, 'role', 'aut', ' scheme="marc:relators"'));
    } else {
      out.push(dc('creator', author, names.opfAttr !== undefined ? ` ${names.opfAttr}role="aut"` : ''));
    }
  });
  if (meta.publisher) out.push(dc('publisher', meta.publisher));
  if (meta.publishedDate) out.push(dc('date', meta.publishedDate));
  if (meta.language) out.push(dc('language', meta.language));
  if (meta.description) out.push(dc('description', meta.description));
  for (const category of meta.categories) out.push(dc('subject', category));

  const identifiers: [string, string | undefined][] = [
    ['isbn', meta.isbn13], ['isbn', meta.isbn10], ['amazon', meta.asin], ['goodreads', meta.goodreadsId], ['google', meta.googleId],
    ['hardcover', meta.hardcoverId], ['hardcoverbook', meta.hardcoverBookId], ['comicvine', meta.comicvineId],
    ['lubimyczytac', meta.lubimyczytacId], ['ranobedb', meta.ranobedbId],
  ];
  for (const [scheme, value] of identifiers) if (value) out.push(dc('identifier', `urn:${scheme}:${value}`));

  if (meta.seriesName) {
    if (names.v3) {
      out.push(`<${names.meta} property="belongs-to-collection" id="bindery-series">${t(meta.seriesName)}</${names.meta}>`, refine('bindery-series', 'collection-type', 'series'));
      if (meta.seriesNumber !== undefined) out.push(refine('bindery-series', 'group-position', formatNumber(meta.seriesNumber)));
    }
    // calibre's spelling, which KOReader, Kobo and calibre itself read in EPUB 2 and 3 alike.
    out.push(named('calibre:series', meta.seriesName));
    if (meta.seriesNumber !== undefined) out.push(named('calibre:series_index', formatNumber(meta.seriesNumber)));
    if (meta.seriesTotal !== undefined) out.push(named('booklore:series_total', String(meta.seriesTotal)));
  }
  if (meta.tags.length > 0) out.push(named('booklore:tags', meta.tags.join(', ')));
  return out;
}

/**
 * The OPF with its <metadata> saying what the catalog says. Elements holding catalog fields are replaced by freshly
 * written ones (placed first, so readers that take the first value take the catalog's); everything else keeps its
 * bytes, order and spacing. Applying it to its own output returns the output unchanged.
 */
export function rewriteOpf(opf: string, meta: FileMetadata): string {
  const pkg = findElement(opf, 'package');
  if (!pkg || pkg.selfClosing) throw new WriteBackError('CORRUPT', 'the OPF has no <package> element');
  const metadataChild = childrenOf(opf, pkg).find((c) => c.kind === 'element' && localNameOf(c.element.name) === 'metadata');
  if (!metadataChild || metadataChild.kind !== 'element') throw new WriteBackError('CORRUPT', 'the OPF has no <metadata> element');
  const metadata = metadataChild.element;
  const kids = metadata.selfClosing ? [] : childrenOf(opf, metadata);
  const infos: MetaInfo[] = [];
  for (const kid of kids) {
    if (kid.kind !== 'element') continue;
    const local = localNameOf(kid.element.name);
    if (local === 'dc-metadata' || local === 'x-metadata') throw new WriteBackError('UNSUPPORTED', 'OEB 1 style <dc-metadata> is not rewritten');
    infos.push({ element: kid.element, local, id: kid.element.attrs.get('id'), refines: attrByLocal(kid.element, 'refines')?.trim().replace(/^#/, '') });
  }
  const refinements = new Map<string, MetaInfo[]>();
  for (const info of infos) if (info.local === 'meta' && info.refines) refinements.set(info.refines, [...(refinements.get(info.refines) ?? []), info]);

  const uniqueId = pkg.attrs.get('unique-identifier');
  const managed = new Set<XmlElementSpan>();
  const managedIds = new Set<string>();
  for (const info of infos) {
    if (!isManaged(opf, info, meta, uniqueId, refinements)) continue;
    managed.add(info.element);
    if (info.id) managedIds.add(info.id);
  }
  // Refinements of what is replaced go with it (and refinements of those, and so on).
  for (let grew = true; grew; ) {
    grew = false;
    for (const info of infos) {
      if (managed.has(info.element) || !info.refines || !managedIds.has(info.refines)) continue;
      managed.add(info.element);
      if (info.id) managedIds.add(info.id);
      grew = true;
    }
  }

  let startTag = opf.slice(metadata.start, metadata.openEnd);
  if (metadata.selfClosing) startTag = startTag.replace(/\s*\/>$/, '>');
  let dcPrefix = prefixFor(DC_NS, metadata, pkg);
  if (dcPrefix === undefined) {
    startTag = `${startTag.slice(0, -1)} xmlns:dc="${DC_NS}">`;
    dcPrefix = 'dc:';
  }
  const opfPrefix = prefixFor(OPF_NS, metadata, pkg);
  const names: Names = {
    dc: dcPrefix,
    meta: `${prefixOf(metadata.name)}meta`,
    opfAttr: opfPrefix ? opfPrefix : undefined,
    v3: (pkg.attrs.get('version') ?? '').trim().startsWith('3'),
  };

  const { items, tail } = layOut(opf, kids);
  const firstLead = items[0]?.lead ?? '';
  const indent = firstLead.includes('\n') ? firstLead : '\n    ';
  const kept = items.filter((item) => item.child.kind !== 'element' || !managed.has(item.child.element));
  const content =
    generatedElements(meta, names).map((element) => indent + element).join('') +
    kept.map((item) => item.lead + opf.slice(item.child.start, item.child.end)).join('') +
    (tail || '\n');
  return `${opf.slice(0, metadata.start)}${startTag}${content}</${metadata.name}>${opf.slice(metadata.end)}`;
}

/** Where META-INF/container.xml says the package document is (falling back to any .opf entry). */
async function locateOpf(path: string): Promise<{ name: string; bytes: Buffer }> {
  return withZip(path, async (zip) => {
    const container = zip.find('META-INF/container.xml');
    let declared: string | undefined;
    if (container) {
      const doc = parseXml(await zip.readText(container.name), 'META-INF/container.xml');
      const rootfiles = children(find(doc, 'rootfiles'), 'rootfile');
      const preferred = rootfiles.find((r) => attr(r, 'media-type') === 'application/oebps-package+xml') ?? rootfiles[0];
      declared = resolveHref('', attr(preferred, 'full-path'));
    }
    const entry = (declared ? zip.find(declared) : undefined) ?? zip.entries.find((e) => !e.isDirectory && e.name.toLowerCase().endsWith('.opf'));
    if (!entry || entry.isDirectory) throw new WriteBackError('CORRUPT', 'no OPF package document in the EPUB');
    return { name: entry.name, bytes: await zip.read(entry.name, LIMITS.maxXmlBytes) };
  });
}

function decodeOpf(bytes: Buffer): { bom: boolean; text: string } {
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  const text = bytes.subarray(bom ? 3 : 0).toString('utf8');
  const declared = /^<\?xml[^>]*encoding\s*=\s*["']([^"']+)["']/i.exec(text)?.[1]?.toLowerCase();
  if (declared && declared !== 'utf-8' && declared !== 'utf8') throw new WriteBackError('UNSUPPORTED', `OPF encoded as ${declared} is not rewritten`);
  if (text.includes('\uFFFD')) throw new WriteBackError('UNSUPPORTED', 'the OPF is not valid UTF-8');
  return { bom, text };
}

/** What the EPUB extractor reports after a faithful write. */
export function epubExpectation(meta: FileMetadata): Expectation {
  const isbns: { isbn13?: string; isbn10?: string } = {};
  for (const candidate of [meta.isbn13, meta.isbn10]) {
    const found = parseIsbn(candidate);
    if (found.isbn13 && !isbns.isbn13) isbns.isbn13 = found.isbn13;
    if (found.isbn10 && !isbns.isbn10) isbns.isbn10 = found.isbn10;
  }
  return {
    title: meta.title,
    subtitle: meta.subtitle,
    authors: meta.authors,
    publisher: meta.publisher,
    publishedDate: normalizeDate(meta.publishedDate),
    language: meta.language,
    description: htmlToText(meta.description),
    categories: meta.categories,
    // The tags meta is one comma-separated list.
    tags: meta.tags.flatMap((tag) => tag.split(/\s*[;,]\s*/)),
    isbn13: isbns.isbn13,
    isbn10: isbns.isbn10,
    asin: meta.asin,
    goodreadsId: meta.goodreadsId,
    googleId: meta.googleId,
    hardcoverId: meta.hardcoverId,
    comicvineId: meta.comicvineId,
    seriesName: meta.seriesName,
    seriesNumber: meta.seriesName ? meta.seriesNumber : undefined,
  };
}

/** Fields an EPUB keeps of its own when the catalog has none: required elements and the package's identity. */
const EPUB_SOFT = new Set(['title', 'language', 'isbn13', 'isbn10', 'asin', 'goodreadsId', 'googleId', 'hardcoverId', 'comicvineId']);

export async function writeEpub(path: string, before: Stats, meta: FileMetadata, hooks?: WriteBackHooks): Promise<'written' | 'unchanged'> {
  let opf: { name: string; bytes: Buffer };
  try {
    opf = await locateOpf(path);
  } catch (error) {
    if (error instanceof FormatError) throw new WriteBackError(error.code === 'UNSAFE' || error.code === 'TOO_LARGE' ? 'UNSUPPORTED' : 'CORRUPT', error.message);
    throw error;
  }
  const { bom, text } = decodeOpf(opf.bytes);
  if (/<!ENTITY/i.test(text)) throw new WriteBackError('UNSUPPORTED', 'the OPF declares XML entities; it is not rewritten');
  let rewritten: string;
  try {
    rewritten = rewriteOpf(text, meta);
  } catch (error) {
    if (error instanceof FormatError) throw new WriteBackError('CORRUPT', error.message);
    throw error;
  }
  if (rewritten === text) return 'unchanged';
  const content = Buffer.concat([bom ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0), Buffer.from(rewritten, 'utf8')]);
  const layout = await readZipLayoutOf(path, before.size);
  if (!layout.entries.some((e) => e.name === opf.name)) throw new WriteBackError('CORRUPT', `the central directory has no entry ${opf.name}`);
  await replaceFileAtomically(path, before, {
    produce: (tempPath) => rewriteZipEntry(path, tempPath, layout, { name: opf.name, content }),
    verify: async (tempPath) => {
      const extraction = await reopened(extractEpub, tempPath, 'the rewritten EPUB');
      assertReadsBack(epubExpectation(meta), extraction, EPUB_SOFT);
    },
    ...(hooks ? { hooks } : {}),
  });
  return 'written';
}
