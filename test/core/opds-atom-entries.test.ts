// A book's Atom entry is written as one string (atom.ts, with the catalog root escaped once per page): its bytes must
// be what the general path, XmlWriter element by element with the href helpers, writes for the same entry, whatever
// the entry holds.
import { describe, expect, it } from 'vitest';
import { ATOM_TYPE, renderAtom } from '../../src/core/opds/atom.ts';
import { authorHref, coverHrefs, downloadHref, pageTemplate, seriesHref, type BookEntry, type Feed } from '../../src/core/opds/feed.ts';
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

/** The entries' lines of a document (from the first `<entry>` to the last `</entry>`). */
function entryLines(xml: string): string {
  return xml.slice(xml.indexOf('  <entry>\n'), xml.lastIndexOf('  </entry>\n') + '  </entry>\n'.length);
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

describe('OPDS 1.2 book entries written as one string', () => {
  for (const root of ['/api/v1/opds', '/books & "more" <x>\t/api/v1/opds', '', `/odd ${odd}/api/v1/opds`]) {
    it(`writes the bytes XmlWriter writes element by element (root ${JSON.stringify(root)})`, () => {
      const feed: Feed = { id: 'urn:booklore:catalog', title: 'Catalog', updated: '2025-01-01T00:00:00.000Z', kind: 'acquisition', self: { path: 'catalog' }, entries };
      const w = new XmlWriter().open('feed');
      for (const entry of entries) writtenByElements(w, root, entry);
      const expected = entryLines(w.close().toString());
      expect(expected.split('<entry>').length - 1).toBe(entries.length);
      expect(entryLines(renderAtom(feed, { root, generator: 'Bindery' }))).toBe(expected);
    });
  }
});
