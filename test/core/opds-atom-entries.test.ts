// A book's Atom entry, and an acquisition feed's paging and facet links, are written as strings (atom.ts, with the
// catalog root escaped once per page): the document's bytes must be what the general path, XmlWriter element by element
// with the href helpers, writes for the same feed, whatever the entries hold.
import { describe, expect, it } from 'vitest';
import { ATOM_TYPE, NS, OPENSEARCH_TYPE, renderAtom } from '../../src/core/opds/atom.ts';
import { authorHref, coverHrefs, downloadHref, hrefOf, pageTemplate, pagingLinks, ROOT, seriesHref, type BookEntry, type Feed } from '../../src/core/opds/feed.ts';
import { XmlWriter } from '../../src/core/opds/xml.ts';

/** The general path: every element and attribute through XmlWriter, every href from its helper. */
function writtenByElements(w: XmlWriter, root: string, book: BookEntry): void {
  w.open('entry');
  w.leaf('title', book.title);
  w.leaf('id', `urn:booklore:book:${book.bookId}`);
  w.leaf('updated', book.updated);
  for (const name of book.authors) w.open('author').leaf('name', name).leaf('uri', authorHref(root, name)).close();
  if (book.publisher) w.leaf('dc:publisher', book.publisher);
  if (book.language) w.leaf('dc:language', book.language);
  if (book.published) w.leaf('dc:issued', book.published);
  if (book.isbn13) w.leaf('dc:identifier', `urn:isbn:${book.isbn13}`);
  if (book.isbn10) w.leaf('dc:identifier', `urn:isbn:${book.isbn10}`);
  for (const category of book.categories) w.leaf('category', undefined, { term: category, label: category });
  if (book.series) {
    w.leaf('calibre:series', book.series.name);
    if (book.series.position !== undefined) w.leaf('calibre:series_index', book.series.position);
  }
  if (book.description) w.leaf('summary', book.description, { type: 'text' });
  for (const file of book.files) w.leaf('link', undefined, { rel: 'http://opds-spec.org/acquisition', href: downloadHref(root, book.bookId, file.id), type: file.type, title: file.title });
  if (book.coverStamp !== undefined) {
    const cover = coverHrefs(root, book.bookId, book.coverStamp);
    w.leaf('link', undefined, { rel: 'http://opds-spec.org/image', href: cover.full, type: 'image/jpeg' });
    w.leaf('link', undefined, { rel: 'http://opds-spec.org/image/thumbnail', href: cover.thumbnail, type: 'image/jpeg' });
  }
  const stream = book.stream;
  if (stream) {
    w.leaf('link', undefined, {
      rel: 'http://vaemendis.net/opds-pse/stream',
      href: pageTemplate(root, book, stream),
      type: 'image/jpeg',
      'pse:count': stream.count,
      'pse:lastRead': stream.lastRead,
      'pse:lastReadUpdate': stream.lastRead !== undefined ? stream.lastReadUpdate : undefined,
    });
  }
  if (book.series) w.leaf('link', undefined, { rel: 'related', href: seriesHref(root, book.series.name), type: ATOM_TYPE.acquisition, title: `More in ${book.series.name}` });
  w.close();
}

/** The whole acquisition feed through the general path. */
function documentByElements(feed: Feed, root: string): string {
  const w = new XmlWriter();
  w.open('feed', { xmlns: NS.atom, 'xmlns:opds': NS.opds, 'xmlns:dc': NS.dc, 'xmlns:opensearch': NS.opensearch, 'xmlns:thr': NS.thr, 'xmlns:pse': NS.pse, 'xmlns:calibre': NS.calibre });
  w.leaf('id', feed.id);
  w.leaf('title', feed.title);
  w.leaf('updated', feed.updated);
  w.open('author').leaf('name', 'Bindery').leaf('uri', hrefOf(root, ROOT)).close();
  w.leaf('link', undefined, { rel: 'self', href: hrefOf(root, feed.self), type: ATOM_TYPE[feed.kind] });
  w.leaf('link', undefined, { rel: 'start', href: hrefOf(root, ROOT), type: ATOM_TYPE.navigation });
  w.leaf('link', undefined, { rel: 'search', href: hrefOf(root, { path: 'search.opds' }), type: OPENSEARCH_TYPE, title: 'Search' });
  if (feed.paging) {
    w.leaf('opensearch:totalResults', feed.paging.total);
    w.leaf('opensearch:startIndex', (feed.paging.page - 1) * feed.paging.size + 1);
    w.leaf('opensearch:itemsPerPage', feed.paging.size);
    for (const link of pagingLinks(feed.paging)) w.leaf('link', undefined, { rel: link.rel, href: hrefOf(root, link.target), type: ATOM_TYPE[feed.kind] });
  }
  for (const facet of feed.facets ?? []) {
    w.leaf('link', undefined, {
      rel: 'http://opds-spec.org/facet',
      href: hrefOf(root, facet.target),
      type: ATOM_TYPE.acquisition,
      title: facet.title,
      'opds:facetGroup': facet.group,
      'opds:activeFacet': facet.active ? 'true' : undefined,
      'thr:count': facet.count,
    });
  }
  for (const entry of feed.entries) writtenByElements(w, root, entry as BookEntry);
  return w.close().toString();
}

const odd = 'Fish & <Chips> "q" \'s\t\ttab\r\nline \u0002\u001f ]]> </title><evil/> \uD800 lone \uDC00 \u{1F600} é';
/** The same without lone surrogates: names that go through encodeURIComponent in links (which refuses them). */
const oddName = odd.replace(' \uD800 lone \uDC00', ' lone');
const book = (bookId: number, fields: Partial<BookEntry>): BookEntry => ({
  type: 'book',
  bookId,
  title: `Book ${bookId}`,
  updated: '2025-01-01T00:00:00.000Z',
  authors: [],
  categories: [],
  audiobook: false,
  files: [],
  ...fields,
});

const entries: BookEntry[] = [
  // Nothing but what every entry has: no authors, files, cover, series or metadata.
  book(1, {}),
  book(2, {
    title: odd,
    subtitle: odd,
    updated: '2024-02-29T23:59:59.999Z',
    published: odd,
    authors: ['Plain Author', oddName, '', 'A & B', 'Ünïcode “quoted”', ...Array.from({ length: 12 }, (_, i) => `Author ${i} / ${i}?&=#`)],
    publisher: odd,
    language: 'en&"<',
    categories: [odd, 'Science Fiction', '"quoted"', 'tab\there', ''],
    description: odd,
    isbn13: '978<&>0',
    isbn10: '"0"',
    series: { name: oddName, position: 2.5 },
    files: [
      { id: 10, type: 'application/epub+zip', title: 'EPUB' },
      { id: 11, type: 'odd/"type"&<x>', title: odd },
      { id: 12, type: 'application/octet-stream' },
    ],
    coverStamp: `2025-01-01 10:00:00 & ${oddName}`,
    stream: { fileId: 12, count: 40, lastRead: 7, lastReadUpdate: 'x&"<y>' },
  }),
  // A series without a number, with an empty name; a comic stream without a last page (its update is left out).
  book(3, { series: { name: '' }, stream: { fileId: 3, count: 1, lastReadUpdate: '2025-01-01T00:00:00.000Z' }, coverStamp: '', files: [{ id: 3, type: 'application/vnd.comicbook+zip', title: 'CBX' }] }),
  book(4, { series: { name: 'Series 1', position: 0 }, stream: { fileId: 4, count: 9, lastRead: 9 }, authors: [''], categories: [''] }),
  book(2 ** 40, { series: { name: 'Big', position: 1e21 }, coverStamp: '2025-01-01T00:00:00.000Z', files: [{ id: 2 ** 41, type: 'application/pdf', title: 'PDF' }] }),
];

describe('OPDS 1.2 acquisition feeds written as strings', () => {
  for (const root of ['/api/v1/opds', '/books & "more" <x>\t/api/v1/opds', '', `/odd ${odd}/api/v1/opds`]) {
    it(`writes the bytes XmlWriter writes element by element (root ${JSON.stringify(root)})`, () => {
      const self = { path: 'catalog', query: [['q', oddName], ['author', 'A & B'], ['flag', '']] as [string, string][] };
      const at = (page: number) => ({ path: self.path, query: [...self.query, ['page', String(page)], ['size', '7']] as [string, string][] });
      const feed: Feed = {
        id: 'urn:booklore:catalog',
        title: odd,
        updated: '2025-01-01T00:00:00.000Z',
        kind: 'acquisition',
        self: at(3),
        paging: { page: 3, size: 7, total: 100, at },
        facets: [
          { group: 'Sort', title: 'Recently added', target: at(1), active: true, count: 100 },
          { group: odd, title: odd, target: { path: 'catalog', query: [['format', oddName]] }, active: false, count: 0 },
          { group: 'Format', title: 'EPUB "3"', target: { path: 'catalog' }, active: false, count: 2 ** 40 },
        ],
        entries,
      };
      const expected = documentByElements(feed, root);
      expect(expected.split('<entry>').length - 1).toBe(entries.length);
      expect(expected.split('opds:facetGroup=').length - 1).toBe(3);
      expect(expected).toContain('rel="previous"');
      expect(renderAtom(feed, { root, generator: 'Bindery' })).toBe(expected);
    });
  }

  it('writes the first page of a one-page feed and a feed without facets the same way too', () => {
    for (const paging of [{ page: 1, size: 50, total: 3 }, { page: 1, size: 50, total: 0 }, { page: 9, size: 50, total: 3 }]) {
      const feed: Feed = { id: 'urn:x', title: 'T', updated: '2025-01-01T00:00:00.000Z', kind: 'acquisition', self: { path: 'recent' }, paging: { ...paging, at: () => ({ path: 'recent' }) }, entries: entries.slice(0, 1) };
      expect(renderAtom(feed, { root: '/r', generator: 'Bindery' })).toBe(documentByElements(feed, '/r'));
    }
  });
});
