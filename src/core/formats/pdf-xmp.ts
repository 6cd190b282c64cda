// Reads the XMP packet of a PDF: Dublin Core, XMP basic, PRISM, calibre's series and Booklore/Grimmory's own fields.
import { clean, normalizeDate, parseNumber, uniqueList } from './values.ts';
import { attr, child, children, find, localName, parseXml, text } from './xml.ts';
import type { XmlNode } from './xml.ts';

export interface XmpFields {
  title?: string;
  subtitle?: string;
  authors: string[];
  description?: string;
  publisher?: string;
  language?: string;
  /** dc:subject, with Booklore's tags and moods (which it also writes there) taken out. */
  subjects: string[];
  keywords?: string;
  publishedDate?: string;
  /** Values that may be ISBNs, most specific source first. */
  isbnCandidates: string[];
  /** Scheme (lower case) → value, from xmp:Identifier qualifiers and booklore:*Id fields. */
  identifiers: Record<string, string>;
  seriesName?: string;
  seriesNumber?: number;
  seriesTotal?: number;
  tags: string[];
  rating?: number;
}

/** Booklore's own id fields and the identifier scheme each is recorded under. */
const BOOKLORE_ID_FIELDS: Record<string, string> = {
  googleid: 'google',
  goodreadsid: 'goodreads',
  hardcoverid: 'hardcover',
  hardcoverbookid: 'hardcover_book_id',
  asin: 'asin',
  comicvineid: 'comicvine',
  lubimyczytacid: 'lubimyczytac',
  ranobedbid: 'ranobedb',
  isbn13: 'isbn13',
  isbn10: 'isbn10',
};

/** Parses an XMP packet. Throws a FormatError for malformed XML or entity declarations. */
export function parseXmp(xml: string): XmpFields {
  const root = parseXml(xml, 'XMP metadata');
  const descriptions = rdfDescriptions(root);
  const first = (name: string): string | undefined => propertyValues(descriptions, name)[0];

  const tags = bookloreList(descriptions, 'tags');
  const moods = bookloreList(descriptions, 'moods');
  const notSubjects = new Set([...tags, ...moods].map((s) => s.toLowerCase()));

  const identifiers: Record<string, string> = {};
  for (const [field, scheme] of Object.entries(BOOKLORE_ID_FIELDS)) {
    const value = bookloreValue(descriptions, field);
    if (value) identifiers[scheme] = value;
  }
  // Qualified xmp:Identifier entries win over booklore:*Id fields, as in Grimmory.
  Object.assign(identifiers, qualifiedIdentifiers(descriptions));

  const series = calibreSeries(descriptions);
  const dates = [...propertyValues(descriptions, 'date'), ...propertyValues(descriptions, 'CreateDate')];

  return {
    title: first('title'),
    subtitle: bookloreValue(descriptions, 'subtitle'),
    authors: uniqueList(propertyValues(descriptions, 'creator')),
    description: first('description'),
    publisher: first('publisher'),
    language: first('language'),
    subjects: uniqueList(propertyValues(descriptions, 'subject')).filter((s) => !notSubjects.has(s.toLowerCase())),
    keywords: first('Keywords'),
    publishedDate: dates.map((d) => normalizeDate(d)).find((d) => d !== undefined),
    isbnCandidates: [
      identifiers.isbn13,
      identifiers.isbn10,
      identifiers.isbn,
      ...propertyValues(descriptions, 'isbn'),
      ...propertyValues(descriptions, 'identifier').filter(looksLikeIsbn),
    ].filter((v): v is string => v !== undefined),
    identifiers,
    seriesName: bookloreValue(descriptions, 'seriesName') ?? series.name,
    seriesNumber: parseNumber(bookloreValue(descriptions, 'seriesNumber')) ?? series.index,
    seriesTotal: parseNumber(bookloreValue(descriptions, 'seriesTotal')),
    tags,
    rating: parseNumber(bookloreValue(descriptions, 'rating')),
  };
}

function rdfDescriptions(root: XmlNode): XmlNode[] {
  const rdf = find(root, 'RDF');
  return rdf ? children(rdf, 'Description') : [];
}

/** Values of a property by local name, whether written as an element (simple, Alt, Seq or Bag) or an attribute. */
function propertyValues(descriptions: XmlNode[], name: string): string[] {
  const out: string[] = [];
  for (const description of descriptions) {
    const asAttribute = clean(attr(description, name));
    if (asAttribute) out.push(asAttribute);
    for (const property of children(description, name)) out.push(...itemValues(property));
  }
  return out;
}

function itemValues(property: XmlNode): string[] {
  for (const container of ['Alt', 'Seq', 'Bag']) {
    const list = child(property, container);
    if (!list) continue;
    const items = children(list, 'li');
    // In a language alternative the x-default entry is the one to show.
    if (container === 'Alt') items.sort((a, b) => Number(attr(b, 'lang') === 'x-default') - Number(attr(a, 'lang') === 'x-default'));
    return items.map((item) => text(item)).filter((v): v is string => v !== undefined);
  }
  const value = text(property);
  return value ? [value] : [];
}

/** Properties in the `booklore:` namespace, matched case-insensitively (Booklore wrote `Subtitle`, later `subtitle`). */
function booklorePropertyNodes(descriptions: XmlNode[], name: string): XmlNode[] {
  const wanted = name.toLowerCase();
  const exact: XmlNode[] = [];
  const other: XmlNode[] = [];
  for (const description of descriptions) {
    for (const [key, value] of Object.entries(description)) {
      if (!key.toLowerCase().startsWith('booklore:') || localName(key).toLowerCase() !== wanted) continue;
      const nodes = (Array.isArray(value) ? value : [value]).map((v) => (typeof v === 'object' && v !== null ? (v as XmlNode) : { '#text': v }));
      (localName(key) === name ? exact : other).push(...nodes);
    }
  }
  // The current camelCase spelling wins over the legacy PascalCase one.
  return [...exact, ...other];
}

function bookloreValue(descriptions: XmlNode[], name: string): string | undefined {
  for (const node of booklorePropertyNodes(descriptions, name)) {
    const value = itemValues(node)[0];
    if (value) return value;
  }
  return undefined;
}

/** A Bag of items, or Booklore's older `A; B` single-string form. */
function bookloreList(descriptions: XmlNode[], name: string): string[] {
  for (const node of booklorePropertyNodes(descriptions, name)) {
    const isBag = child(node, 'Bag') !== undefined || child(node, 'Seq') !== undefined;
    const values = isBag ? itemValues(node) : itemValues(node).flatMap((v) => v.split(/\s*;\s*/));
    const list = uniqueList(values);
    if (list.length > 0) return list;
  }
  return [];
}

/** `xmp:Identifier` Bag items qualified with `xmpidq:Scheme`; scheme names lower-cased, `amazon` recorded as `asin`. */
function qualifiedIdentifiers(descriptions: XmlNode[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const description of descriptions) {
    for (const property of children(description, 'Identifier')) {
      const list = child(property, 'Bag') ?? child(property, 'Seq');
      for (const item of list ? children(list, 'li') : []) {
        const scheme = clean(attr(item, 'Scheme') ?? text(child(item, 'Scheme')))?.toLowerCase();
        const value = clean(attr(item, 'value') ?? text(child(item, 'value')));
        if (!scheme || !value) continue;
        out[scheme === 'amazon' ? 'asin' : scheme] = value;
      }
    }
  }
  return out;
}

/** calibre writes `<calibre:series><rdf:value>Name</rdf:value><calibreSI:series_index>2</calibreSI:series_index></calibre:series>`. */
function calibreSeries(descriptions: XmlNode[]): { name?: string; index?: number } {
  for (const description of descriptions) {
    for (const [key, value] of Object.entries(description)) {
      if (!key.toLowerCase().startsWith('calibre:') || localName(key) !== 'series') continue;
      const node = (Array.isArray(value) ? value[0] : value) as unknown;
      if (typeof node !== 'object' || node === null) return { name: clean(node) };
      const resource = node as XmlNode;
      const valueNode = child(resource, 'value');
      const name = valueNode ? text(valueNode) : clean(resource['#text']);
      return { name, index: parseNumber(text(child(resource, 'series_index'))) };
    }
  }
  return {};
}

/** dc:identifier holds any kind of id; only accept the ones that announce or look like an ISBN. */
function looksLikeIsbn(value: string): boolean {
  return /^(urn:)?isbn[:\s]/i.test(value) || /^[\d\s-]{9,16}[\dXx]$/.test(value);
}
