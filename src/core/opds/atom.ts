// OPDS 1.2 catalog documents (Atom, RFC 4287), valid against the official RELAX NG schema (with the upstream regex fix
// the conformance notes describe). Where Grimmory's output breaks the schema, this follows the schema: series go into
// calibre's metadata namespace instead of atom-namespace `meta` elements.
import {
  authorHref,
  coverHrefs,
  downloadHref,
  hrefOf,
  pageTemplate,
  pagingLinks,
  ROOT,
  seriesHref,
  type BookEntry,
  type Feed,
  type FeedKind,
  type NavEntry,
} from './feed.ts';
import { escapeAttribute, escapeText, XmlWriter } from './xml.ts';

export const NS = {
  atom: 'http://www.w3.org/2005/Atom',
  opds: 'http://opds-spec.org/2010/catalog',
  dc: 'http://purl.org/dc/terms/',
  opensearch: 'http://a9.com/-/spec/opensearch/1.1/',
  thr: 'http://purl.org/syndication/thread/1.0',
  pse: 'http://vaemendis.net/opds-pse/ns',
  calibre: 'http://calibre.kovidgoyal.net/2009/metadata',
} as const;

export const ATOM_TYPE = {
  navigation: 'application/atom+xml;profile=opds-catalog;kind=navigation',
  acquisition: 'application/atom+xml;profile=opds-catalog;kind=acquisition',
} as const satisfies Record<FeedKind, string>;

export const OPENSEARCH_TYPE = 'application/opensearchdescription+xml';

const REL = {
  acquisition: 'http://opds-spec.org/acquisition',
  image: 'http://opds-spec.org/image',
  thumbnail: 'http://opds-spec.org/image/thumbnail',
  stream: 'http://vaemendis.net/opds-pse/stream',
  facet: 'http://opds-spec.org/facet',
} as const;

export interface AtomContext {
  /** `<basePath>/api/v1/opds`. */
  root: string;
  /** Name the documents are signed with (Atom wants a feed author). */
  generator: string;
}

function navEntry(w: XmlWriter, ctx: AtomContext, entry: NavEntry, updated: string): void {
  w.open('entry');
  w.leaf('title', entry.title);
  w.leaf('id', entry.id);
  w.leaf('updated', updated);
  w.leaf('link', undefined, {
    rel: 'subsection',
    href: hrefOf(ctx.root, entry.target),
    type: ATOM_TYPE[entry.kind],
    'thr:count': entry.count,
  });
  if (entry.content !== undefined) w.leaf('content', entry.content, { type: 'text' });
  w.close();
}

/** ` name="value"`, nothing when the value is undefined (as XmlWriter writes attributes). */
const attr = (name: string, value: string | number | undefined): string =>
  value === undefined ? '' : ` ${name}="${typeof value === 'number' ? String(value) : escapeAttribute(value)}"`;

/** `<name>text</name>` on a line of its own at an entry's child depth. */
const child = (name: string, text: string): string => `    <${name}>${escapeText(text)}</${name}>\n`;

/**
 * A book's entry as the lines XmlWriter would write for it inside the feed (the same bytes), built as one string: a page
 * has fifty entries of twenty-odd elements each, and most of a page's rendering went into writing them element by
 * element.
 */
function bookEntryXml(ctx: AtomContext, book: BookEntry): string {
  let xml = `  <entry>\n${child('title', book.title)}${child('id', `urn:booklore:book:${book.bookId}`)}${child('updated', book.updated)}`;
  for (const name of book.authors) xml += `    <author>\n      <name>${escapeText(name)}</name>\n      <uri>${escapeText(authorHref(ctx.root, name))}</uri>\n    </author>\n`;
  if (book.publisher) xml += child('dc:publisher', book.publisher);
  if (book.language) xml += child('dc:language', book.language);
  if (book.published) xml += child('dc:issued', book.published);
  if (book.isbn13) xml += child('dc:identifier', `urn:isbn:${book.isbn13}`);
  if (book.isbn10) xml += child('dc:identifier', `urn:isbn:${book.isbn10}`);
  for (const category of book.categories) xml += `    <category${attr('term', category)}${attr('label', category)}/>\n`;
  if (book.series) {
    xml += child('calibre:series', book.series.name);
    if (book.series.position !== undefined) xml += child('calibre:series_index', String(book.series.position));
  }
  if (book.description) xml += `    <summary type="text">${escapeText(book.description)}</summary>\n`;
  for (const file of book.files) {
    xml += `    <link rel="${REL.acquisition}"${attr('href', downloadHref(ctx.root, book.bookId, file.id))}${attr('type', file.type)}${attr('title', file.title)}/>\n`;
  }
  if (book.coverStamp !== undefined) {
    const cover = coverHrefs(ctx.root, book.bookId, book.coverStamp);
    xml += `    <link rel="${REL.image}"${attr('href', cover.full)} type="image/jpeg"/>\n    <link rel="${REL.thumbnail}"${attr('href', cover.thumbnail)} type="image/jpeg"/>\n`;
  }
  const stream = book.stream;
  if (stream) {
    const lastReadUpdate = stream.lastRead !== undefined ? stream.lastReadUpdate : undefined;
    xml += `    <link rel="${REL.stream}"${attr('href', pageTemplate(ctx.root, book, stream))} type="image/jpeg"${attr('pse:count', stream.count)}${attr('pse:lastRead', stream.lastRead)}${attr('pse:lastReadUpdate', lastReadUpdate)}/>\n`;
  }
  if (book.series) {
    xml += `    <link rel="related"${attr('href', seriesHref(ctx.root, book.series.name))} type="${ATOM_TYPE.acquisition}"${attr('title', `More in ${book.series.name}`)}/>\n`;
  }
  return `${xml}  </entry>\n`;
}

export function renderAtom(feed: Feed, ctx: AtomContext): string {
  const w = new XmlWriter();
  const hasBooks = feed.entries.some((e) => e.type === 'book');
  w.open('feed', {
    xmlns: NS.atom,
    'xmlns:opds': NS.opds,
    'xmlns:dc': NS.dc,
    'xmlns:opensearch': NS.opensearch,
    'xmlns:thr': NS.thr,
    'xmlns:pse': hasBooks ? NS.pse : undefined,
    'xmlns:calibre': hasBooks ? NS.calibre : undefined,
  });
  w.leaf('id', feed.id);
  w.leaf('title', feed.title);
  w.leaf('updated', feed.updated);
  w.open('author').leaf('name', ctx.generator).leaf('uri', hrefOf(ctx.root, ROOT)).close();
  w.leaf('link', undefined, { rel: 'self', href: hrefOf(ctx.root, feed.self), type: ATOM_TYPE[feed.kind] });
  w.leaf('link', undefined, { rel: 'start', href: hrefOf(ctx.root, ROOT), type: ATOM_TYPE.navigation });
  w.leaf('link', undefined, { rel: 'search', href: hrefOf(ctx.root, { path: 'search.opds' }), type: OPENSEARCH_TYPE, title: 'Search' });
  if (feed.paging) {
    w.leaf('opensearch:totalResults', feed.paging.total);
    w.leaf('opensearch:startIndex', (feed.paging.page - 1) * feed.paging.size + 1);
    w.leaf('opensearch:itemsPerPage', feed.paging.size);
    for (const link of pagingLinks(feed.paging)) {
      w.leaf('link', undefined, { rel: link.rel, href: hrefOf(ctx.root, link.target), type: ATOM_TYPE[feed.kind] });
    }
  }
  for (const facet of feed.facets ?? []) {
    w.leaf('link', undefined, {
      rel: REL.facet,
      href: hrefOf(ctx.root, facet.target),
      type: ATOM_TYPE.acquisition,
      title: facet.title,
      'opds:facetGroup': facet.group,
      'opds:activeFacet': facet.active ? 'true' : undefined,
      'thr:count': facet.count,
    });
  }
  for (const entry of feed.entries) {
    if (entry.type === 'nav') navEntry(w, ctx, entry, feed.updated);
    else w.lines(1, bookEntryXml(ctx, entry));
  }
  w.close();
  return w.toString();
}
