// A sync page's entitlements are built leaner than up to 0155257 (each book's `added_on` spelled once, the answer's
// instant once, shared constant parts, the reading state sent in the order it is built in): serialized, they must be
// the same bytes as the objects built then, for books with every field, none, and text that needs escaping.
import { describe, expect, it } from 'vitest';
import { bookMetadata, changedMetadata, newEntitlement, removedEntitlement, type Json, type KoboUrls } from '../../src/core/kobo/entitlements.ts';
import type { KoboBook, KoboPrimaryFile } from '../../src/core/kobo/kobo-books.ts';
import { koboTimeOf, koboTimestamp } from '../../src/core/kobo/kobo-time.ts';
import type { KoboReadingState } from '../../src/core/kobo/reading-state.ts';
import { bookMetadataObject, changedMetadataObject, newEntitlementObject, removedEntitlementObject, type ReferenceBook } from '../helpers/kobo-entitlement-objects.ts';

const primary = (over: Partial<KoboPrimaryFile> = {}): KoboPrimaryFile => ({
  id: 7,
  bookType: 'EPUB',
  sizeKb: 2048,
  sizeBytes: 2_097_152,
  missing: false,
  fixedLayout: false,
  hash: 'abc',
  fingerprint: 'abc:2097152:1',
  ...over,
});

const bare: ReferenceBook = {
  id: 1,
  addedOn: '',
  coverHash: null,
  title: null,
  subtitle: null,
  description: null,
  publisher: null,
  publishedDate: null,
  language: null,
  isbn13: null,
  isbn10: null,
  seriesName: null,
  seriesNumber: null,
  authors: [],
  genre: null,
  primary: undefined,
};

const tricky = 'He said "hi" \\ back\\slash / tab\t newline\n nul\u0000 unit\u001f del\u007f line\u2028 para\u2029 é 漢字 🐉 lone\ud800 low\udc00 end';

const BOOKS: [string, ReferenceBook][] = [
  ['nothing but an id', bare],
  [
    'every field',
    {
      id: 123456,
      addedOn: '2024-02-29T23:59:59.999Z',
      coverHash: 'BL-abc123',
      title: 'The Left Hand of Darkness',
      subtitle: 'A Novel',
      description: '<p>Winter.</p>',
      publisher: 'Ace Books',
      publishedDate: '1969-03-01',
      language: 'en',
      isbn13: '9780441478125',
      isbn10: '0441478123',
      seriesName: 'Hainish Cycle',
      seriesNumber: 4,
      authors: ['Ursula K. Le Guin'],
      genre: 'Science Fiction',
      primary: primary(),
    },
  ],
  [
    'quotes, backslashes, control characters, lone surrogates and non-Latin text everywhere',
    {
      ...bare,
      id: 2,
      addedOn: '2024-01-02 03:04:05',
      coverHash: `BL-${tricky}`,
      title: tricky,
      subtitle: tricky,
      description: tricky,
      publisher: tricky,
      publishedDate: ` 2001-05-17T10:00:00Z ${tricky}`,
      language: `  ${tricky} `,
      isbn13: tricky,
      seriesName: tricky,
      seriesNumber: -1.5,
      authors: [tricky, 'Zoë "Z" O\'Brien', ''],
      genre: tricky,
      primary: primary({ fixedLayout: true }),
    },
  ],
  [
    'empty strings, blank series and language, ISBN-10 only',
    { ...bare, id: 3, addedOn: 'not a date', title: '', subtitle: '', description: '', publisher: '', publishedDate: 'garbage', language: '   ', isbn10: '0441478123', seriesName: '   ', seriesNumber: 2, primary: primary({ sizeKb: null }) },
  ],
  ['series without a number, fractional and zero', { ...bare, id: 4, addedOn: '2023-02-29T00:00:00.000Z', title: 'Ünïcödé Títlé — №1', seriesName: 'Discworld', seriesNumber: null, primary: primary({ bookType: 'EPUB' }) }],
  ['series number 0.5', { ...bare, id: 5, addedOn: '2024-12-31T23:59:60.000Z', title: 'Half', seriesName: 'S', seriesNumber: 0.5, primary: primary() }],
  ['series number 0', { ...bare, id: 6, title: 'Zero', seriesName: 'S', seriesNumber: 0, primary: primary({ sizeKb: 999_999 }) }],
];

const SETTINGS = [
  { convertToKepub: false, conversionLimitInMb: 100 },
  { convertToKepub: true, conversionLimitInMb: 100 },
  { convertToKepub: true, conversionLimitInMb: 1 },
];

const URLS: KoboUrls[] = [{ koboBase: 'http://kobo.test/api/kobo/t' }, { koboBase: 'https://[::1]:8443/base "odd" \\path/api/kobo/a%2Fb%22' }];

const NOW = new Date('2026-11-28T05:00:00.123Z');

const at = koboTimestamp(NOW);
const STATES: KoboReadingState[] = [
  // As initialStates writes them: every property, in Kobo's order.
  { EntitlementId: '1', Created: at, LastModified: at, StatusInfo: { LastModified: at, Status: 'ReadyToRead', TimesStartedReading: 0 }, Statistics: { LastModified: at }, CurrentBookmark: { LastModified: at }, PriorityTimestamp: at },
  {
    EntitlementId: '2',
    Created: '2024-01-02T03:04:05.0000000Z',
    LastModified: at,
    StatusInfo: { LastModified: at, Status: 'Finished', TimesStartedReading: 1, LastTimeFinished: '2025-01-01T00:00:00.0000000Z' },
    Statistics: { LastModified: at },
    CurrentBookmark: { LastModified: at, ProgressPercent: 42, ContentSourceProgressPercent: 7, Location: { Value: tricky, Type: 'KoboSpan', Source: 'OEBPS/ch "1".xhtml' } },
    PriorityTimestamp: at,
  },
];

/** The book as loadKoboBooks reads it now. */
const koboBook = ({ addedOn, ...book }: ReferenceBook): KoboBook => ({ ...book, created: koboTimeOf(addedOn) });

/** Sets the size of a metadata's downloads, as settleDownloadSizes does. */
const settle = (metadata: Json, size: number): Json => {
  for (const entry of metadata.DownloadUrls as Json[]) entry.Size = size;
  return metadata;
};

describe('Kobo entitlements of a sync page', () => {
  const stamp = koboTimestamp(NOW);
  for (const [name, reference] of BOOKS) {
    for (const settings of SETTINGS) {
      for (const urls of URLS) {
        it(`${name} (KEPUB ${settings.convertToKepub ? `up to ${settings.conversionLimitInMb} MB` : 'off'}, ${urls.koboBase})`, () => {
          const book = koboBook(reference);
                    const sizes = reference.primary ? [(reference.primary.sizeKb ?? 0) * 1024, 1_234_567] : [0];
          for (const size of sizes) {
            const expected = settle(bookMetadataObject(reference, settings, urls, 0), size);
            const metadata = settle(bookMetadata(book, settings, urls), size);
            expect(JSON.stringify(metadata)).toBe(JSON.stringify(expected));
            expect(JSON.stringify(changedMetadata(book, metadata, stamp))).toBe(JSON.stringify(changedMetadataObject(reference, expected, NOW)));
            for (const state of STATES) {
              const sent = JSON.stringify(newEntitlement(book, metadata, state, stamp));
              expect(sent).toBe(JSON.stringify(newEntitlementObject(reference, expected, state, NOW)));
              expect(JSON.parse(sent)).toEqual(JSON.parse(JSON.stringify(newEntitlementObject(reference, expected, state, NOW))));
            }
          }
        });
      }
    }
  }

  it('removal notices', () => {
    for (const [addedOn, coverHash] of [
      [null, null],
      ['2024-02-29T23:59:59.999Z', 'BL-abc'],
      ['2024-01-02 03:04:05', tricky],
      ['', ''],
      ['2023-02-29T00:00:00.000Z', null],
    ] as const) {
      for (const id of [1, 42, 2_147_483_647]) expect(JSON.stringify(removedEntitlement(id, addedOn, coverHash, stamp))).toBe(JSON.stringify(removedEntitlementObject(id, addedOn, coverHash, NOW)));
    }
  });
});
