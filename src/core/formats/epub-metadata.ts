// Dublin Core, EPUB 3 refinements and calibre/Booklore `<meta>` entries of an OPF → ExtractedMetadata.
import { decodeNumericReferences, htmlToText } from './epub-html.ts';
import { addIdentifier } from './epub-identifiers.ts';
import { emptyMetadata, type ExtractedMetadata } from './types.ts';
import { clean, normalizeDate, parseNumber, uniqueList } from './values.ts';
import { attr, children, text, type XmlNode } from './xml.ts';

export interface OpfMetadata {
  metadata: ExtractedMetadata;
  /** `rendition:layout` is `pre-paginated` (or the Kindle-style `fixed-layout` meta is true). */
  fixedLayout: boolean;
  /** Page count the OPF states outright (calibre/Booklore metas), preferred over an estimate. */
  declaredPageCount: number | undefined;
  /** Content of EPUB 2 `<meta name="cover">`: a manifest id, sometimes an href. */
  coverMeta: string | undefined;
}

interface Refinement {
  property: string;
  value: string;
  scheme: string | undefined;
}

/** calibre writes year 101 when a book has no date. */
const CALIBRE_UNDEFINED_YEAR = '0101';

function value(node: XmlNode): string | undefined {
  const raw = text(node);
  return raw === undefined ? undefined : clean(decodeNumericReferences(raw));
}

/** Text of an element keeping its line breaks when it has no child elements (escaped-HTML descriptions). */
function rawText(node: XmlNode): string | undefined {
  const own = node['#text'];
  const hasElements = Object.keys(node).some((k) => k !== '#text' && !k.startsWith('@_'));
  if (!hasElements && own !== undefined) return String(Array.isArray(own) ? own.join(' ') : own);
  return text(node);
}

/** EPUB 3 `<meta refines="#id" property="…">` grouped by the id they refine. */
function collectRefinements(metas: XmlNode[]): Map<string, Refinement[]> {
  const byId = new Map<string, Refinement[]>();
  for (const meta of metas) {
    const refines = attr(meta, 'refines')?.trim();
    const property = attr(meta, 'property')?.trim().toLowerCase();
    const v = value(meta);
    if (!refines || !property || v === undefined) continue;
    const id = refines.replace(/^#/, '');
    const list = byId.get(id) ?? [];
    list.push({ property, value: v, scheme: attr(meta, 'scheme') });
    byId.set(id, list);
  }
  return byId;
}

/** Global (non-refining) metas by lower-case `name` (EPUB 2) or `property` (EPUB 3), values in file order. */
function collectNamedMetas(metas: XmlNode[]): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const meta of metas) {
    if (attr(meta, 'refines')) continue;
    const key = (attr(meta, 'name') ?? attr(meta, 'property'))?.trim().toLowerCase();
    if (!key) continue;
    const content = attr(meta, 'content');
    const v = content !== undefined ? clean(decodeNumericReferences(content)) : value(meta);
    if (v === undefined) continue;
    byName.set(key, [...(byName.get(key) ?? []), v]);
  }
  return byName;
}

function refined(refinements: Map<string, Refinement[]>, node: XmlNode, property: string): Refinement | undefined {
  const id = attr(node, 'id');
  return id ? refinements.get(id)?.find((r) => r.property === property) : undefined;
}

function pickTitles(titles: XmlNode[], refinements: Map<string, Refinement[]>): { title?: string; subtitle?: string } {
  const typed = titles.map((node) => ({ node, type: refined(refinements, node, 'title-type')?.value.toLowerCase() }));
  const main = typed.find((t) => t.type === 'main') ?? typed.find((t) => t.type !== 'subtitle') ?? typed[0];
  const sub = typed.find((t) => t.type === 'subtitle');
  return { title: main && value(main.node), subtitle: sub && value(sub.node) };
}

function rolesOf(node: XmlNode, refinements: Map<string, Refinement[]>): string[] {
  const roles: string[] = [];
  const attrRole = clean(attr(node, 'role'));
  if (attrRole) roles.push(attrRole.toLowerCase());
  const id = attr(node, 'id');
  for (const r of (id ? refinements.get(id) : undefined) ?? []) if (r.property === 'role') roles.push(r.value.toLowerCase());
  return roles;
}

function pickDate(dates: XmlNode[]): string | undefined {
  const withEvent = dates.map((node) => ({ node, event: clean(attr(node, 'event'))?.toLowerCase() }));
  const chosen = withEvent.find((d) => d.event === 'publication' || d.event === 'original-publication') ?? withEvent.find((d) => !d.event);
  const iso = chosen ? normalizeDate(value(chosen.node)) : undefined;
  return iso?.startsWith(`${CALIBRE_UNDEFINED_YEAR}-`) ? undefined : iso;
}

interface SeriesGuess {
  name: string;
  number: number | undefined;
  total?: number | undefined;
}

/** EPUB 3 `belongs-to-collection` refined as a series (or, failing that, a set). */
function collectionSeries(metas: XmlNode[], refinements: Map<string, Refinement[]>, wanted: string): SeriesGuess | undefined {
  for (const meta of metas) {
    if (attr(meta, 'refines') || attr(meta, 'property')?.trim().toLowerCase() !== 'belongs-to-collection') continue;
    const name = value(meta);
    const type = refined(refinements, meta, 'collection-type')?.value.toLowerCase();
    if (name && type === wanted) return { name, number: parseNumber(refined(refinements, meta, 'group-position')?.value) };
  }
  return undefined;
}

function namedSeries(named: Map<string, string[]>, prefix: 'calibre' | 'booklore'): SeriesGuess | undefined {
  const name = named.get(`${prefix}:series`)?.[0];
  if (!name) return undefined;
  return {
    name,
    number: parseNumber(named.get(`${prefix}:series_index`)?.[0]),
    total: parseNumber(named.get(`${prefix}:series_total`)?.[0]),
  };
}

/** calibre keeps custom columns as JSON in `calibre:user_metadata:#name` (EPUB 2) or one `calibre:user_metadata` (EPUB 3). */
function calibrePageCount(named: Map<string, string[]>): number | undefined {
  const fromJson = (json: string | undefined, pick: (o: Record<string, unknown>) => unknown): number | undefined => {
    if (!json) return undefined;
    try {
      return parseNumber(pick(JSON.parse(json) as Record<string, unknown>));
    } catch {
      return undefined;
    }
  };
  return (
    fromJson(named.get('calibre:user_metadata:#pagecount')?.[0], (o) => o['#value#']) ??
    fromJson(named.get('calibre:user_metadata')?.[0], (o) => (o['#pagecount'] as Record<string, unknown> | undefined)?.['#value#'])
  );
}

const PAGE_COUNT_METAS = ['booklore:page_count', 'schema:pagecount', 'media:pagecount', 'calibre:pages', 'pagecount'];

const BOOKLORE_ID_METAS: ReadonlyArray<[string, string]> = [
  ['booklore:asin', 'asin'],
  ['booklore:goodreads_id', 'goodreads'],
  ['booklore:comicvine_id', 'comicvine'],
  ['booklore:hardcover_id', 'hardcover'],
  ['booklore:google_books_id', 'google'],
];

export function readOpfMetadata(metadataNode: XmlNode | undefined): OpfMetadata {
  const meta = emptyMetadata();
  const metas = children(metadataNode, 'meta');
  const refinements = collectRefinements(metas);
  const named = collectNamedMetas(metas);

  const { title, subtitle } = pickTitles(children(metadataNode, 'title'), refinements);
  meta.title = title;
  meta.subtitle = subtitle ?? named.get('booklore:subtitle')?.[0];

  const authors: string[] = [];
  for (const node of children(metadataNode, 'creator')) {
    const roles = rolesOf(node, refinements);
    const name = value(node);
    if (name && (roles.length === 0 || roles.includes('aut'))) authors.push(name);
  }
  meta.authors = uniqueList(authors);
  // Narrators are creators in audiobook-minded EPUBs and contributors elsewhere.
  for (const node of [...children(metadataNode, 'creator'), ...children(metadataNode, 'contributor')]) {
    if (rolesOf(node, refinements).includes('nrt')) {
      meta.narrator = value(node);
      if (meta.narrator) break;
    }
  }

  meta.publisher = children(metadataNode, 'publisher').map(value).find(Boolean);
  meta.publishedDate = pickDate(children(metadataNode, 'date'));
  meta.language = children(metadataNode, 'language').map(value).find(Boolean);
  meta.categories = uniqueList(children(metadataNode, 'subject').map(value));
  const description = children(metadataNode, 'description').map(rawText).find(Boolean);
  meta.description = htmlToText(description);

  for (const node of children(metadataNode, 'identifier')) {
    const v = value(node);
    if (!v) continue;
    const typeRefinement = refined(refinements, node, 'identifier-type');
    addIdentifier(meta, { value: v, scheme: attr(node, 'scheme') ?? typeRefinement?.value, schemeScheme: typeRefinement?.scheme });
  }
  for (const [metaName, scheme] of BOOKLORE_ID_METAS) {
    const v = named.get(metaName)?.[0];
    if (v) addIdentifier(meta, { value: v, scheme });
  }

  const series =
    collectionSeries(metas, refinements, 'series') ?? namedSeries(named, 'calibre') ?? namedSeries(named, 'booklore') ?? collectionSeries(metas, refinements, 'set');
  if (series) {
    meta.seriesName = series.name;
    meta.seriesNumber = series.number;
    meta.seriesTotal = series.total;
  }

  const rating = parseNumber(named.get('calibre:rating')?.[0]);
  if (rating !== undefined && rating > 0) meta.rating = rating / 2;

  meta.tags = uniqueList((named.get('booklore:tags') ?? []).flatMap((t) => t.split(/\s*[;,]\s*/)));

  const declared = PAGE_COUNT_METAS.map((name) => parseNumber(named.get(name)?.[0])).find((n) => n !== undefined) ?? calibrePageCount(named);

  const layout = named.get('rendition:layout')?.[0]?.toLowerCase();
  const kindleFixed = named.get('fixed-layout')?.[0]?.toLowerCase();

  return {
    metadata: meta,
    fixedLayout: layout === 'pre-paginated' || kindleFixed === 'true',
    declaredPageCount: declared !== undefined && declared > 0 ? Math.round(declared) : undefined,
    coverMeta: named.get('cover')?.[0],
  };
}
