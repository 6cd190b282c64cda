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
import { XmlWriter } from './xml.ts';

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

function bookEntry(w: XmlWriter, ctx: AtomContext, book: BookEntry): void {
  w.open('entry');
  w.leaf('title', book.title);
  w.leaf('id', `urn:booklore:book:${book.bookId}`);
  w.leaf('updated', book.updated);
  for (const name of book.authors) {
    w.open('author').leaf('name', name).leaf('uri', authorHref(ctx.root, name)).close();
  }
  if (book.publisher) w.leaf('dc:publisher', book.publisher);
  if (book.language) w.leaf('dc:language', book.language);
  if (book.published) w.leaf('dc:issued', book.published);
  if (book.isbn13) w.leaf('dc:identifier', `urn:isbn:${book.isbn13}`);
  if (book.isbn10) w.leaf('dc:identifier', `urn:isbn:${book.isbn10}`);
  for (const category of book.categories) w.leaf('category', undefined, { term: category, label: category });
  if (book.series) {
    w.leaf('calibre:series', book.series.name);
    if (book.series.position !== undefined) w.leaf('calibre:series_index', String(book.series.position));
  }
  if (book.description) w.leaf('summary', book.description, { type: 'text' });
  for (const file of book.files) {
    w.leaf('link', undefined, { rel: REL.acquisition, href: downloadHref(ctx.root, book.bookId, file.id), type: file.type, title: file.title });
  }
  if (book.coverStamp !== undefined) {
    const cover = coverHrefs(ctx.root, book.bookId, book.coverStamp);
    w.leaf('link', undefined, { rel: REL.image, href: cover.full, type: 'image/jpeg' });
    w.leaf('link', undefined, { rel: REL.thumbnail, href: cover.thumbnail, type: 'image/jpeg' });
  }
  if (book.stream) {
    w.leaf('link', undefined, {
      rel: REL.stream,
      href: pageTemplate(ctx.root, book, book.stream),
      type: 'image/jpeg',
      'pse:count': book.stream.count,
      'pse:lastRead': book.stream.lastRead,
      'pse:lastReadUpdate': book.stream.lastRead !== undefined ? book.stream.lastReadUpdate : undefined,
    });
  }
  if (book.series) {
    w.leaf('link', undefined, { rel: 'related', href: seriesHref(ctx.root, book.series.name), type: ATOM_TYPE.acquisition, title: `More in ${book.series.name}` });
  }
  w.close();
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
    else bookEntry(w, ctx, entry);
  }
  w.close();
  return w.toString();
}
