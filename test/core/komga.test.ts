// The Komga mapping on its own: series ids, grouping, paging, clean mode, and that every DTO built from sparse rows
// still satisfies Komga's component schemas (and that the validator does catch Grimmory's known gaps).
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { groupSeries, seriesId, seriesSlug, UNKNOWN_SERIES, type KomgaBookRow } from '../../src/core/komga/catalog.ts';
import { bookDto, cleaned, collectionDto, humanSize, instant, libraryDto, pageOf, pageRequest, releaseDate, seriesContext, seriesDto, userDto } from '../../src/core/komga/dto.ts';
import { conformancePath } from '../helpers/conformance.ts';

const spec = JSON.parse(readFileSync(conformancePath('komga', 'komga-openapi.json'), 'utf8')) as { components: unknown };
const ajv = new Ajv2020.default({ strict: false, allErrors: true, validateSchema: false });
ajvFormats.default(ajv);
ajv.addSchema({ $id: 'komga.json', components: spec.components });
const errorsOf = (name: string, body: unknown): string[] => {
  const validate = ajv.getSchema(`komga.json#/components/schemas/${name}`) ?? ajv.compile({ $ref: `komga.json#/components/schemas/${name}` });
  return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
};

function row(id: number, overrides: Partial<KomgaBookRow> = {}): KomgaBookRow {
  return {
    id,
    libraryId: 1,
    addedOn: '2024-05-01T10:00:00.000Z',
    title: null,
    seriesName: null,
    seriesNumber: null,
    description: null,
    publisher: null,
    publishedDate: null,
    isbn13: null,
    isbn10: null,
    pageCount: null,
    language: null,
    ageRating: null,
    fileName: null,
    fileSizeKb: null,
    sizeBytes: null,
    bookType: null,
    hash: null,
    filePageCount: null,
    authors: [],
    categories: [],
    tags: [],
    ...overrides,
  };
}

const links = { apiRoot: '/komga' };

describe('series ids and grouping', () => {
  it('slugs names as Grimmory does for Latin text and keeps other scripts', () => {
    expect(seriesSlug('The Sandman: Vol. 1')).toBe('the-sandman-vol-1');
    expect(seriesId(3, 'Dune')).toBe('3-dune');
    expect(seriesSlug('進撃の巨人')).toBe('進撃の巨人');
    expect(seriesSlug('!!!')).toBe('-');
  });

  it('groups by library and name, orders books by number', () => {
    const rows = [
      row(1, { title: 'B', seriesName: 'Saga', seriesNumber: 2 }),
      row(2, { title: 'A', seriesName: 'Saga', seriesNumber: 1 }),
      row(3, { title: 'Loose' }),
      row(4, { title: 'Other', seriesName: 'Saga', libraryId: 2 }),
    ];
    const grouped = groupSeries(rows, true);
    expect(grouped.map((s) => [s.id, s.books.map((b) => b.id)])).toEqual([
      ['1-saga', [2, 1]],
      ['2-saga', [4]],
      ['1-unknown-series', [3]],
    ]);
    expect(grouped[2]?.name).toBe(UNKNOWN_SERIES);
    expect(groupSeries(rows, false).map((s) => s.name)).toEqual(['Loose', 'Saga', 'Saga']);
  });
});

describe('DTOs from sparse rows', () => {
  it('satisfy Komga schemas', () => {
    const [series] = groupSeries([row(1), row(2, { fileName: 'x.cbz', bookType: 'CBX', sizeBytes: 5000, publishedDate: '1999' })], true);
    if (!series) throw new Error('no series');
    expect(errorsOf('SeriesDto', seriesDto(series, links))).toEqual([]);
    for (const book of series.books) expect(errorsOf('BookDto', bookDto(book, seriesContext(series), links))).toEqual([]);
    expect(errorsOf('LibraryDto', libraryDto({ id: 1, name: 'L', root: '/x', createdAt: '2024-01-01T00:00:00Z' }))).toEqual([]);
    expect(errorsOf('CollectionDto', collectionDto({ id: 1, name: 'S', bookIds: [1, 9] }, new Map([[1, '1-x']]), instant(null)))).toEqual([]);
    expect(errorsOf('UserDto', userDto(1, 'u', [1]))).toEqual([]);
    expect(errorsOf('PageBookDto', pageOf([], pageRequest({})))).toEqual([]);
  });

  it('catches the gaps of a Grimmory-style book (the validator works)', () => {
    const sample = JSON.parse(readFileSync(conformancePath('komga', 'samples', 'grimmory-style-book.json'), 'utf8')) as unknown;
    expect(errorsOf('BookDto', sample).length).toBeGreaterThan(0);
  });

  it('formats numbers, sizes and dates', () => {
    const dto = bookDto(row(5, { seriesNumber: 2.5, fileSizeKb: 2048 }), { seriesId: '1-x', seriesTitle: 'X', oneshot: true }, links);
    expect(dto).toMatchObject({ number: 2, sizeBytes: 2097152, size: '2 MB', url: '/komga/api/v1/books/5/file' });
    expect(dto.metadata).toMatchObject({ number: '2.5', numberSort: 2.5, title: 'Book 5' });
    expect(humanSize(1023)).toBe('1023 B');
    expect(releaseDate('2001-02-03T00:00:00')).toBe('2001-02-03');
    expect(instant('2024-01-01 10:00:00')).toBe('2024-01-01T10:00:00.000Z');
    expect(instant('garbage')).toBe('1970-01-01T00:00:00.000Z');
  });
});

describe('paging and clean mode', () => {
  it('reads page, size and unpaged with defaults', () => {
    expect(pageRequest({})).toEqual({ page: 0, size: 20, unpaged: false });
    expect(pageRequest({ page: '2', size: '5000', unpaged: '' })).toEqual({ page: 2, size: 1000, unpaged: true });
    expect(pageRequest({ page: '-1', size: 'x', unpaged: 'true' }, false)).toEqual({ page: 0, size: 20, unpaged: false });
  });

  it('builds the Spring envelope', () => {
    const items = [1, 2, 3, 4, 5];
    expect(pageOf(items, { page: 2, size: 2, unpaged: false })).toMatchObject({ content: [5], number: 2, totalPages: 3, first: false, last: true, numberOfElements: 1 });
    expect(pageOf(items, { page: 0, size: 20, unpaged: true })).toMatchObject({ content: items, size: 5, totalPages: 1, last: true });
  });

  it('drops Lock properties, nulls, empty strings and arrays, but keeps a page content', () => {
    expect(cleaned({ a: '', b: null, c: [], titleLock: false, d: { eLock: true, f: 1 }, content: [] })).toEqual({ d: { f: 1 }, content: [] });
  });
});
