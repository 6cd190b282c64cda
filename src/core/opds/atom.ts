// OPDS 1.2 catalog documents (Atom, RFC 4287), valid against the official RELAX NG schema (with the upstream regex fix
// the conformance notes describe). Where Grimmory's output breaks the schema, this follows the schema: series go into
// calibre's metadata namespace instead of atom-namespace `meta` elements.
import {
  ATOM_TEXT,
  hrefOf,
  keptText,
  pagingLinks,
  ROOT,
  type AcquisitionFile,
  type BookEntry,
  type Facet,
  type Feed,
  type FeedKind,
  type NavEntry,
  type PageStream,
} from './feed.ts';
import { RememberedAnswers } from '../remembered-answers.ts';
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

/** `<name>text</name>` on a line of its own at an entry's child depth. */
const child = (name: string, text: string): string => `    <${name}>${escapeText(text)}</${name}>\n`;

/**
 * The fixed text of a book entry's links, with the catalog root already escaped (once per page): what follows the root
 * in those links is digits and `encodeURIComponent` output, which no XML escaping changes, so escaping the whole href
 * gives the same text.
 */
interface EntryFrame {
  /** `<uri>` text of an author's catalog, up to the encoded name. */
  authorUri: string;
  /** `<uri>` text of the author catalog of an empty name. */
  emptyAuthorUri: string;
  /** An acquisition link, up to the book id. */
  acquisition: string;
  image: string;
  thumbnail: string;
  stream: string;
  related: string;
}

// A daemon has one root per OPDS family; anything more is a test's.
const frames = new RememberedAnswers<string, EntryFrame>(16);

function frameOf(root: string): EntryFrame {
  return frames.get(root, makeFrame);
}

function makeFrame(root: string): EntryFrame {
  const rootAttribute = escapeAttribute(root);
  const rootText = escapeText(root);
  return {
    authorUri: `      <uri>${rootText}/catalog?author=`,
    emptyAuthorUri: `      <uri>${rootText}/catalog?author</uri>\n`,
    acquisition: `    <link rel="${REL.acquisition}" href="${rootAttribute}/`,
    image: `    <link rel="${REL.image}" href="${rootAttribute}/`,
    thumbnail: `    <link rel="${REL.thumbnail}" href="${rootAttribute}/`,
    stream: `    <link rel="${REL.stream}" href="${rootAttribute}/`,
    related: `    <link rel="related" href="${rootAttribute}/catalog?series`,
  };
}

/** The OPDS-PSE page stream of a comic (its URL template kept literal: readers fill in the placeholders). */
function streamXml(frame: EntryFrame, id: string, stream: PageStream): string {
  let xml = `${frame.stream}${id}/pages/{pageNumber}?fileId=${String(stream.fileId)}&amp;maxWidth={maxWidth}" type="image/jpeg" pse:count="${String(stream.count)}"`;
  if (stream.lastRead !== undefined) {
    xml += ` pse:lastRead="${String(stream.lastRead)}"`;
    if (stream.lastReadUpdate !== undefined) xml += ` pse:lastReadUpdate="${escapeAttribute(stream.lastReadUpdate)}"`;
  }
  return `${xml}/>\n`;
}

/**
 * A book's entry as the lines XmlWriter would write for it inside the feed (the same bytes), built as one string: a page
 * has fifty entries of twenty-odd elements each, and most of a page's rendering went into writing them element by
 * element. One function (but the comics' page stream): V8 compiles each hot function on the daemon's thread in its
 * first pages, each compilation with a cost of its own beside the code's size (split in three parts, they took 12-13 ms
 * of TurboFan against ~11 ms as one).
 */
function bookEntryXml(frame: EntryFrame, book: BookEntry): string {
  const id = String(book.bookId);
  let xml = `  <entry>\n${child('title', book.title)}    <id>urn:booklore:book:${id}</id>\n${child('updated', book.updated)}`;
  const authors = book.authors;
  for (let i = 0; i < authors.length; i++) {
    const name = authors[i] as string;
    const uri = name === '' ? frame.emptyAuthorUri : `${frame.authorUri}${encodeURIComponent(name)}</uri>\n`;
    xml += `    <author>\n      <name>${escapeText(name)}</name>\n${uri}    </author>\n`;
  }
  if (book.publisher) xml += child('dc:publisher', book.publisher);
  if (book.language) xml += child('dc:language', book.language);
  if (book.published) xml += child('dc:issued', book.published);
  if (book.isbn13) xml += child('dc:identifier', `urn:isbn:${book.isbn13}`);
  if (book.isbn10) xml += child('dc:identifier', `urn:isbn:${book.isbn10}`);
  const categories = book.categories;
  for (let i = 0; i < categories.length; i++) {
    const category = escapeAttribute(categories[i] as string);
    xml += `    <category term="${category}" label="${category}"/>\n`;
  }
  const series = book.series;
  if (series) {
    xml += child('calibre:series', series.name);
    if (series.position !== undefined) xml += `    <calibre:series_index>${String(series.position)}</calibre:series_index>\n`;
  }
  if (book.description) xml += `    <summary type="text">${escapeText(book.description)}</summary>\n`;
  const files = book.files;
  for (let i = 0; i < files.length; i++) {
    const file = files[i] as AcquisitionFile;
    xml += `${frame.acquisition}${id}/download?fileId=${String(file.id)}" type="${escapeAttribute(file.type)}"${file.title === undefined ? '' : ` title="${escapeAttribute(file.title)}"`}/>\n`;
  }
  if (book.coverStamp !== undefined) {
    const cover = `${id}/cover?${encodeURIComponent(book.coverStamp)}`;
    xml += `${frame.image}${cover}&amp;size=full" type="image/jpeg"/>\n${frame.thumbnail}${cover}" type="image/jpeg"/>\n`;
  }
  if (book.stream) xml += streamXml(frame, id, book.stream);
  if (series) {
    const name = series.name === '' ? '' : `=${encodeURIComponent(series.name)}`;
    xml += `${frame.related}${name}" type="${ATOM_TYPE.acquisition}" title="${escapeAttribute(`More in ${series.name}`)}"/>\n`;
  }
  return `${xml}  </entry>\n`;
}

/**
 * A book's entry XML, kept on the entry it was made from: a kept entry (entries.ts keeps them per book version, shared
 * by every reader) is written once per catalog root, not once per page.
 */
function keptEntryXml(frame: EntryFrame, root: string, book: BookEntry): string {
  return keptText(book, ATOM_TEXT, root, () => bookEntryXml(frame, book));
}

type PagingLink = ReturnType<typeof pagingLinks>[number];

// An acquisition feed's paging and facet links as the lines XmlWriter would write for them (the same bytes), each
// written straight: a catalog page has a dozen, and XmlWriter's attributes (an object per link, walked name by name)
// were most of a page's header.

function pagingLinkXml(ctx: AtomContext, link: PagingLink, kind: FeedKind): string {
  return `  <link rel="${link.rel}" href="${escapeAttribute(hrefOf(ctx.root, link.target))}" type="${ATOM_TYPE[kind]}"/>\n`;
}

function facetLinkXml(ctx: AtomContext, facet: Facet): string {
  const active = facet.active ? ' opds:activeFacet="true"' : '';
  return `  <link rel="${REL.facet}" href="${escapeAttribute(hrefOf(ctx.root, facet.target))}" type="${ATOM_TYPE.acquisition}" title="${escapeAttribute(facet.title)}" opds:facetGroup="${escapeAttribute(facet.group)}"${active} thr:count="${String(facet.count)}"/>\n`;
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
    const links = pagingLinks(feed.paging);
    for (let i = 0; i < links.length; i++) w.lines(1, pagingLinkXml(ctx, links[i] as PagingLink, feed.kind));
  }
  const facets = feed.facets ?? [];
  for (let i = 0; i < facets.length; i++) w.lines(1, facetLinkXml(ctx, facets[i] as Facet));
  const frame = hasBooks ? frameOf(ctx.root) : undefined;
  for (const entry of feed.entries) {
    if (entry.type === 'nav') navEntry(w, ctx, entry, feed.updated);
    else w.lines(1, keptEntryXml(frame as EntryFrame, ctx.root, entry));
  }
  w.close();
  return w.toString();
}
