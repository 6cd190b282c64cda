// OPDS building blocks without HTTP: the XML writer, media types, links and paging, credentials, the OPDS 2 value
// rules, the catalog orders and the magic shelf rule compiler against a real catalog.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allPermissions, PERMISSION_NAMES, type Permissions } from '../../src/core/auth/permissions.ts';
import type { Principal } from '../../src/core/auth/principal.ts';
import { renderAtom } from '../../src/core/opds/atom.ts';
import { pageOfBooks, pageOfSeries, type BookFilter, type BookOrder } from '../../src/core/opds/catalog.ts';
import { hrefOf, pagingLinks, type Feed, type Paging } from '../../src/core/opds/feed.ts';
import { pageParams, param } from '../../src/core/opds/feeds.ts';
import { bookEntries, instant } from '../../src/core/opds/entries.ts';
import { compileMagicShelf } from '../../src/core/opds/magic-shelf-rules.ts';
import { acquisitionType } from '../../src/core/opds/mime.ts';
import { calendarDate, languageTag, problem } from '../../src/core/opds/opds2.ts';
import { parseBasic } from '../../src/core/opds/users.ts';
import { escapeAttribute, escapeText, XmlWriter, xmlSafe } from '../../src/core/opds/xml.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';

describe('the XML writer', () => {
  it('escapes markup in text and attributes, keeping whitespace in attributes', async () => {
    expect(escapeText('a < b & c > d "e"')).toBe('a &lt; b &amp; c &gt; d "e"');
    expect(escapeAttribute('say "hi" <&>\tnew\nline\r')).toBe('say &quot;hi&quot; &lt;&amp;&gt;&#9;new&#10;line&#13;');
  });

  it('drops the characters XML 1.0 cannot carry and keeps everything else', async () => {
    expect(xmlSafe('a\u0000b\u0008c\u000Bd\u001Fe\uFFFEf\uFFFFg')).toBe('abcdefg');
    expect(xmlSafe('tab\tlf\ncr\r')).toBe('tab\tlf\ncr\r');
    expect(xmlSafe('emoji 😀 and a lone \uD800 surrogate and \uDC00 another')).toBe('emoji 😀 and a lone  surrogate and  another');
    expect(xmlSafe('é ß 漢字 \u0085 \u00A0')).toBe('é ß 漢字 \u0085 \u00A0');
  });

  it('writes a well-formed document and refuses bad names and unclosed elements', async () => {
    const w = new XmlWriter().open('root', { xmlns: 'urn:x', 'x:attr': 'v&"', skipped: undefined }).leaf('empty').leaf('text', 'a<b', { n: 3 }).close();
    const out = w.toString();
    expect(out).toBe('<?xml version="1.0" encoding="UTF-8"?>\n<root xmlns="urn:x" x:attr="v&amp;&quot;">\n  <empty/>\n  <text n="3">a&lt;b</text>\n</root>\n');
    expect(() => new XmlWriter().leaf('bad name')).toThrow(/not an XML name/);
    expect(() => new XmlWriter().leaf('a', 'x', { 'on"click': '1' })).toThrow(/not an XML name/);
    expect(() => new XmlWriter().open('a').toString()).toThrow(/unclosed/);
  });

  it('renders a feed any parser reads back, whatever the metadata holds', async () => {
    const hostile = 'Fish & <Chips> "q" \u0002]]> </title><evil/>';
    const feed: Feed = {
      id: 'urn:booklore:catalog',
      title: hostile,
      updated: '2025-01-01T00:00:00.000Z',
      kind: 'acquisition',
      self: { path: 'catalog', query: [['q', hostile]] },
      entries: [
        {
          type: 'book',
          bookId: 7,
          title: hostile,
          updated: '2025-01-01T00:00:00.000Z',
          authors: [hostile],
          categories: [hostile],
          description: hostile,
          audiobook: false,
          files: [{ id: 3, type: 'application/epub+zip', title: 'EPUB' }],
          series: { name: hostile, position: 1.5 },
        },
      ],
    };
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', trimValues: false }).parse(renderAtom(feed, { root: '/api/v1/opds', generator: 'Bindery' })) as {
      feed: { title: string; entry: { title: string; 'calibre:series_index': number; summary: { '#text': string } } };
    };
    const clean = 'Fish & <Chips> "q" ]]> </title><evil/>';
    expect(doc.feed.title).toBe(clean);
    expect(doc.feed.entry.title).toBe(clean);
    expect(doc.feed.entry.summary['#text']).toBe(clean);
    expect(doc.feed.entry['calibre:series_index']).toBe(1.5);
  });
});

describe('media types', () => {
  const file = (book_type: string, file_name: string, archive_type: string | null = null, is_folder_based = 0) => acquisitionType({ book_type, file_name, archive_type, is_folder_based });

  it('names each format the way readers know it', async () => {
    expect(file('EPUB', 'a.epub')).toBe('application/epub+zip');
    expect(file('PDF', 'a.pdf')).toBe('application/pdf');
    expect(file('MOBI', 'a.mobi')).toBe('application/x-mobipocket-ebook');
    expect(file('AZW3', 'a.azw3')).toBe('application/vnd.amazon.ebook');
    expect(file('FB2', 'a.fb2')).toBe('application/x-fictionbook+xml');
    expect(file('FB2', 'a.fb2.zip')).toBe('application/zip');
    expect(file('CBX', 'a.cbz', 'ZIP')).toBe('application/vnd.comicbook+zip');
    // The container the scanner found wins over the extension (many .cbr files are zips).
    expect(file('CBX', 'a.cbr', 'ZIP')).toBe('application/vnd.comicbook+zip');
    expect(file('CBX', 'a.cbz', 'RAR')).toBe('application/x-cbr');
    expect(file('CBX', 'a.cb7', 'SEVEN_ZIP')).toBe('application/x-cb7');
    expect(file('CBX', 'a.cbr')).toBe('application/x-cbr');
    expect(file('AUDIOBOOK', 'a.mp3')).toBe('audio/mpeg');
    expect(file('AUDIOBOOK', 'a.m4b')).toBe('audio/mp4');
    expect(file('AUDIOBOOK', 'a.opus')).toBe('audio/opus');
    expect(file('AUDIOBOOK', 'Folder', null, 1)).toBe('application/zip');
    expect(file('UNKNOWN', 'a.xyz')).toBe('application/octet-stream');
  });
});

describe('links and paging', () => {
  it('encodes queries and keeps bare names for cache-busters', async () => {
    expect(hrefOf('/api/v1/opds', { path: '' })).toBe('/api/v1/opds');
    expect(hrefOf('/b/api/v1/opds', { path: 'catalog', query: [['author', 'Brontë & Sons/100%'], ['page', '2']] })).toBe('/b/api/v1/opds/catalog?author=Bront%C3%AB%20%26%20Sons%2F100%25&page=2');
    expect(hrefOf('/api/v1/opds', { path: '3/cover', query: [['2025-01-01T00:00:00Z', '']] })).toBe('/api/v1/opds/3/cover?2025-01-01T00%3A00%3A00Z');
  });

  const paging = (page: number, size: number, total: number, linkless = false): Paging => ({ page, size, total, at: (p) => ({ path: 'x', query: [['page', String(p)]] }), linkless });
  const rels = (p: Paging): string[] => pagingLinks(p).map((l) => `${l.rel}=${l.target.query?.[0]?.[1]}`);

  it('gives first/last whenever there is a page, previous and next as they apply', async () => {
    expect(rels(paging(1, 10, 25))).toEqual(['first=1', 'next=2', 'last=3']);
    expect(rels(paging(2, 10, 25))).toEqual(['first=1', 'previous=1', 'next=3', 'last=3']);
    expect(rels(paging(3, 10, 25))).toEqual(['first=1', 'previous=2', 'last=3']);
    expect(rels(paging(9, 10, 25))).toEqual(['first=1', 'previous=3', 'last=3']);
    expect(rels(paging(1, 10, 0))).toEqual([]);
    expect(rels(paging(4, 10, 0))).toEqual(['previous=1']);
    expect(rels(paging(1, 25, 25, true))).toEqual([]);
  });

  it('reads page and size like Grimmory: 1-based, 50 by default, at most 100, junk ignored', async () => {
    expect(pageParams({})).toEqual({ page: 1, size: 50 });
    expect(pageParams({ page: '3', size: '20' })).toEqual({ page: 3, size: 20 });
    expect(pageParams({ page: '0', size: '1000' })).toEqual({ page: 1, size: 100 });
    expect(pageParams({ page: '-4', size: '-1' })).toEqual({ page: 1, size: 1 });
    expect(pageParams({ page: 'two', size: '1e3' })).toEqual({ page: 1, size: 50 });
    expect(pageParams({ page: ['2', '5'] })).toEqual({ page: 2, size: 50 });
    expect(param({ q: '  dune ' }, 'q')).toBe('dune');
    expect(param({ q: '   ' }, 'q')).toBeUndefined();
  });
});

describe('credentials', () => {
  it('parses HTTP Basic, keeping colons in the password', async () => {
    const header = (text: string): string => `Basic ${Buffer.from(text).toString('base64')}`;
    expect(parseBasic(header('kobo:pa:ss'))).toEqual({ username: 'kobo', password: 'pa:ss' });
    expect(parseBasic(header('ünï:cödé'))).toEqual({ username: 'ünï', password: 'cödé' });
    expect(parseBasic(`basic ${Buffer.from('a:b').toString('base64')}`)).toEqual({ username: 'a', password: 'b' });
    expect(parseBasic(header('no-colon'))).toBeUndefined();
    expect(parseBasic('Bearer abc')).toBeUndefined();
    expect(parseBasic('Basic ***')).toBeUndefined();
    expect(parseBasic(undefined)).toBeUndefined();
  });
});

describe('OPDS 2 values', () => {
  it('keeps BCP 47 language tags, repairs underscores and drops the rest', async () => {
    expect(languageTag('en')).toBe('en');
    expect(languageTag('eng')).toBe('eng');
    expect(languageTag('pt_BR')).toBe('pt-BR');
    expect(languageTag('zh-Hant-TW')).toBe('zh-Hant-TW');
    expect(languageTag('English')).toBeUndefined();
    expect(languageTag('en, fr')).toBeUndefined();
    expect(languageTag(undefined)).toBeUndefined();
  });

  it('keeps only calendar dates that exist', async () => {
    expect(calendarDate('2020-02-29')).toBe('2020-02-29');
    expect(calendarDate('2020-02-29T10:00:00Z')).toBe('2020-02-29');
    expect(calendarDate('2021-02-29')).toBeUndefined();
    expect(calendarDate('1999')).toBeUndefined();
  });

  it('writes instants with a zone, whatever was stored', async () => {
    expect(instant('2025-01-02T03:04:05.678Z', 'x')).toBe('2025-01-02T03:04:05.678Z');
    expect(instant('2025-01-02 03:04:05', 'x')).toBe('2025-01-02T03:04:05.000Z');
    expect(instant('2025-01-02T03:04:05+02:00', 'x')).toBe('2025-01-02T01:04:05.000Z');
    expect(instant('yesterday', 'fallback')).toBe('fallback');
    expect(instant(null, 'fallback')).toBe('fallback');
  });

  it('describes errors as RFC 9457 problems', async () => {
    expect(problem(404, 'Resource not found.')).toEqual({ type: 'about:blank', title: 'Resource not found.', status: 404 });
    expect(problem(403, 'Forbidden', 'Not your shelf')).toEqual({ type: 'about:blank', title: 'Forbidden', status: 403, detail: 'Not your shelf' });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Queries against a real catalog

let dir: string;
let store: Store;
let userId: number;
let libraryId: number;
const book: Record<string, number> = {};
let shelfId: number;

const admin = (): Principal => ({ userId, username: 'admin', isDefaultPassword: false, sessionVersion: 0, permissions: allPermissions(), libraryIds: [], restrictions: [] });
const noFlags = (): Permissions => Object.fromEntries(PERMISSION_NAMES.map((p) => [p, false])) as Permissions;

async function listed(filter: BookFilter, order: BookOrder = 'TITLE_ASC', principal: Principal = admin()): Promise<string[]> {
  const { ids } = await pageOfBooks(store, principal, filter, order, 1, 100);
  const names = new Map(Object.entries(book).map(([k, v]) => [v, k]));
  return ids.map((id) => names.get(id) ?? String(id));
}

function shelf(rules: unknown[], join: 'and' | 'or' = 'and'): Promise<string[]> {
  const compiled = compileMagicShelf(store.dialect, JSON.stringify({ type: 'group', join, rules }), userId, new Date('2025-06-15T12:00:00Z'));
  if (!compiled) throw new Error('did not compile');
  return listed({ rules: compiled });
}

const rule = (field: string, operator: string, value?: unknown, extra: Record<string, unknown> = {}) => ({ type: 'rule', field, operator, value, ...extra });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-opds-core-'));
  store = await openStore(join(dir, 'catalog.sqlite'));
  userId = (await store.db.insertInto('users').values({ username: 'admin', password_hash: 'x', name: 'Admin' }).returning('id').executeTakeFirstOrThrow()).id;
  libraryId = await seedLibrary(store.db, dir, 'Books');
  const add = async (key: string, title: string, types: string[], authors: string[], meta: Record<string, unknown> = {}, addedOn?: string): Promise<void> => {
    const { bookId } = await seedBook(store.db, libraryId, { title, types, authors });
    book[key] = bookId;
    await store.db.updateTable('book_metadata').set({ search_text: title.toLowerCase(), ...meta }).where('book_id', '=', bookId).execute();
    if (addedOn) await store.db.updateTable('book').set({ added_on: addedOn }).where('id', '=', bookId).execute();
  };
  await add('dune1', 'Dune', ['EPUB'], ['Frank Herbert'], { series_name: 'Dune', series_number: 1, series_total: 3, published_date: '1965-08-01', goodreads_rating: 4.3, amazon_rating: 4.5, page_count: 600, language: 'en' }, '2025-06-10T00:00:00.000Z');
  await add('dune2', 'Dune Messiah', ['EPUB', 'PDF'], ['Frank Herbert'], { series_name: 'dune', series_number: 2, published_date: '1969-01-01', goodreads_rating: 3.9, page_count: 330 }, '2025-01-01T00:00:00.000Z');
  await add('dune4', 'God Emperor', ['MOBI'], ['Frank Herbert'], { series_name: 'Dune', series_number: 4, goodreads_rating: 0 }, '2024-01-01T00:00:00.000Z');
  await add('neuro', 'Neuromancer', ['EPUB'], ['William Gibson'], { description: 'Cyberspace 100% _fun_', page_count: 270, language: 'en' }, '2025-06-14T00:00:00.000Z');
  await add('comic', 'Watchmen', ['CBX'], ['Alan Moore', 'Dave Gibbons'], {}, '2023-01-01T00:00:00.000Z');
  await add('anon', 'Anonymous Notes', ['PDF'], [], { publisher: 'Self' }, '2022-01-01T00:00:00.000Z');
  const category = (await store.db.insertInto('category').values({ name: 'Science Fiction' }).returning('id').executeTakeFirstOrThrow()).id;
  const classic = (await store.db.insertInto('category').values({ name: 'Classic' }).returning('id').executeTakeFirstOrThrow()).id;
  await store.db.insertInto('book_metadata_category_mapping').values([
    { book_id: book.dune1 as number, category_id: category },
    { book_id: book.dune1 as number, category_id: classic },
    { book_id: book.neuro as number, category_id: category },
  ]).execute();
  const s = (await store.db.insertInto('shelf').values({ user_id: userId, name: 'Favourites' }).returning('id').executeTakeFirstOrThrow()).id;
  shelfId = s;
  await store.db.insertInto('book_shelf_mapping').values({ shelf_id: s, book_id: book.neuro as number }).execute();
  await store.db.insertInto('user_book_progress').values([
    { user_id: userId, book_id: book.dune1 as number, read_status: 'READ', date_finished: '2025-06-01T00:00:00.000Z', epub_progress_percent: 100 },
    { user_id: userId, book_id: book.dune2 as number, read_status: 'READING', epub_progress_percent: 40 },
    // KOReader stores the fraction its device sends: 0.6 is 60 %.
    { user_id: userId, book_id: book.neuro as number, koreader_progress_percent: 0.6 },
  ]).execute();
});

afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('book entries', () => {
  it('lists authors in their positions on the book (not by id) and categories by name', async () => {
    // Watchmen: Alan Moore (position 0) was added before Dave Gibbons; put Gibbons first, so the ids disagree.
    await store.db.updateTable('book_metadata_author_mapping').set({ sort_order: 5 }).where('book_id', '=', book.comic as number).execute();
    const gibbons = (await store.db.selectFrom('author').select('id').where('name', '=', 'Dave Gibbons').executeTakeFirstOrThrow()).id;
    await store.db.updateTable('book_metadata_author_mapping').set({ sort_order: 1 }).where('book_id', '=', book.comic as number).where('author_id', '=', gibbons).execute();
    try {
      const [dune, comic] = await bookEntries(store, [book.dune1 as number, book.comic as number], userId, '2025-01-01T00:00:00.000Z');
      expect(comic?.authors).toEqual(['Dave Gibbons', 'Alan Moore']);
      expect(dune?.authors).toEqual(['Frank Herbert']);
      expect(dune?.categories).toEqual(['Classic', 'Science Fiction']);
    } finally {
      await store.db.updateTable('book_metadata_author_mapping').set({ sort_order: 0 }).where('book_id', '=', book.comic as number).where('author_id', '<>', gibbons).execute();
    }
  });
});

describe('catalog orders', () => {
  it('sorts by each OPDS order, ties newest first', async () => {
    expect(await listed({}, 'RECENT')).toEqual(['neuro', 'dune1', 'dune2', 'dune4', 'comic', 'anon']);
    expect(await listed({}, 'TITLE_ASC')).toEqual(['anon', 'dune1', 'dune2', 'dune4', 'neuro', 'comic']);
    expect(await listed({}, 'TITLE_DESC')).toEqual(['comic', 'neuro', 'dune4', 'dune2', 'dune1', 'anon']);
    expect(await listed({}, 'AUTHOR_ASC')).toEqual(['anon', 'comic', 'dune1', 'dune2', 'dune4', 'neuro']);
    expect(await listed({}, 'AUTHOR_DESC')).toEqual(['neuro', 'dune1', 'dune2', 'dune4', 'comic', 'anon']);
    // Books in a series first, by series then number; the rest newest first.
    expect(await listed({}, 'SERIES_ASC')).toEqual(['dune1', 'dune2', 'dune4', 'neuro', 'comic', 'anon']);
    expect(await listed({}, 'SERIES_DESC')).toEqual(['dune4', 'dune2', 'dune1', 'neuro', 'comic', 'anon']);
    // Mean of the positive ratings; unrated books last (God Emperor's 0 counts as unrated).
    expect(await listed({}, 'RATING_DESC')).toEqual(['dune1', 'dune2', 'neuro', 'dune4', 'comic', 'anon']);
    expect(await listed({}, 'RATING_ASC')).toEqual(['dune2', 'dune1', 'neuro', 'dune4', 'comic', 'anon']);
    expect(await listed({ series: 'DUNE' }, 'SERIES_NUMBER')).toEqual(['dune1', 'dune2', 'dune4']);
  });

  it('pages through every match, counted, and sees a change to the catalog on the next page asked for', async () => {
    const first = await pageOfBooks(store, admin(), {}, 'RECENT', 1, 4);
    const second = await pageOfBooks(store, admin(), {}, 'RECENT', 2, 4);
    expect([first.ids.length, second.ids.length, first.total, second.total]).toEqual([4, 2, 6, 6]);
    expect(new Set([...first.ids, ...second.ids]).size).toBe(6);
    expect((await pageOfBooks(store, admin(), {}, 'RECENT', 3, 4)).ids).toEqual([]);

    const added = (await store.db.selectFrom('book').select('added_on').where('id', '=', book.anon as number).executeTakeFirstOrThrow()).added_on;
    await store.db.updateTable('book').set({ added_on: '2026-01-01T00:00:00.000Z' }).where('id', '=', book.anon as number).execute();
    try {
      expect(await listed({}, 'RECENT')).toEqual(['anon', 'neuro', 'dune1', 'dune2', 'dune4', 'comic']);
      await store.db.updateTable('book').set({ deleted: 1 }).where('id', '=', book.comic as number).execute();
      expect((await pageOfBooks(store, admin(), {}, 'RECENT', 2, 4)).ids).toEqual([book.dune4]);
      expect((await pageOfBooks(store, admin(), {}, 'RECENT', 1, 4)).total).toBe(5);
    } finally {
      await store.db.updateTable('book').set({ added_on: added }).where('id', '=', book.anon as number).execute();
      await store.db.updateTable('book').set({ deleted: 0 }).where('id', '=', book.comic as number).execute();
    }
    expect(await listed({}, 'RECENT')).toEqual(['neuro', 'dune1', 'dune2', 'dune4', 'comic', 'anon']);
  });

  it('searches with LIKE taken literally, and finds nothing for a reader without libraries', async () => {
    expect(await listed({ q: 'DUNE' })).toEqual(['dune1', 'dune2']);
    expect(await listed({ q: '%' })).toEqual([]);
    const nobody: Principal = { ...admin(), permissions: noFlags(), libraryIds: [] };
    expect(await listed({}, 'RECENT', nobody)).toEqual([]);
    expect(await listed({}, 'RECENT', { ...nobody, libraryIds: [libraryId] })).toHaveLength(6);
  });

  it('lists series case-insensitively distinct', async () => {
    expect(await pageOfSeries(store, admin(), 1, 10)).toEqual({ items: [{ name: 'Dune', count: 3 }], total: 1 });
  });
});

describe('magic shelf rules', () => {
  it('compares text case-insensitively, with LIKE patterns taken literally', async () => {
    expect(await shelf([rule('title', 'equals', 'dune')])).toEqual(['dune1']);
    expect(await shelf([rule('title', 'contains', 'MESS')])).toEqual(['dune2']);
    expect(await shelf([rule('title', 'starts_with', 'dune')])).toEqual(['dune1', 'dune2']);
    expect(await shelf([rule('title', 'ends_with', 'men')])).toEqual(['comic']);
    expect(await shelf([rule('description', 'contains', '100%')])).toEqual(['neuro']);
    expect(await shelf([rule('description', 'contains', '0%_')])).toEqual([]);
    expect(await shelf([rule('publisher', 'is_not_empty')])).toEqual(['anon']);
    expect(await shelf([rule('seriesName', 'is_empty')])).toEqual(['anon', 'neuro', 'comic']);
    expect(await shelf([rule('title', 'not_equals', ['dune', 'watchmen'])])).toEqual(['anon', 'dune2', 'dune4', 'neuro']);
  });

  it('compares numbers and ranges', async () => {
    expect(await shelf([rule('pageCount', 'greater_than', 300)])).toEqual(['dune1', 'dune2']);
    expect(await shelf([rule('pageCount', 'in_between', undefined, { valueStart: 250, valueEnd: '330' })])).toEqual(['dune2', 'neuro']);
    expect(await shelf([rule('seriesNumber', 'less_than_equal_to', '2')])).toEqual(['dune1', 'dune2']);
    expect(await shelf([rule('fileSize', 'equals', 10)])).toHaveLength(6);
  });

  it('compares dates: published dates as days, instants relative to now', async () => {
    expect(await shelf([rule('publishedDate', 'greater_than', '1966-01-01')])).toEqual(['dune2']);
    expect(await shelf([rule('publishedDate', 'equals', '1965-08-01')])).toEqual(['dune1']);
    expect(await shelf([rule('addedOn', 'within_last', 7, { valueEnd: 'days' })])).toEqual(['dune1', 'neuro']);
    expect(await shelf([rule('addedOn', 'older_than', 1, { valueEnd: 'years' })])).toEqual(['anon', 'dune4', 'comic']);
    expect(await shelf([rule('addedOn', 'this_period', 'month')])).toEqual(['dune1', 'neuro']);
    expect(await shelf([rule('dateFinished', 'in_between', undefined, { valueStart: '2025-05-01', valueEnd: '2025-07-01' })])).toEqual(['dune1']);
  });

  it('tests collections: any, all, none, empty', async () => {
    expect(await shelf([rule('categories', 'includes_all', ['science fiction', 'CLASSIC'])])).toEqual(['dune1']);
    expect(await shelf([rule('genre', 'includes_any', ['classic', 'nothing'])])).toEqual(['dune1']);
    expect(await shelf([rule('categories', 'excludes_all', ['science fiction'])])).toEqual(['anon', 'dune2', 'dune4', 'comic']);
    expect(await shelf([rule('authors', 'is_empty')])).toEqual(['anon']);
    expect(await shelf([rule('authors', 'contains', 'gibb')])).toEqual(['comic']);
    expect(await shelf([rule('shelf', 'equals', String(shelfId))])).toEqual(['neuro']);
  });

  it('reads the user’s status and progress; UNSET and negations include books without a status', async () => {
    expect(await shelf([rule('readStatus', 'equals', 'READ')])).toEqual(['dune1']);
    expect(await shelf([rule('readStatus', 'includes_any', ['UNSET'])])).toEqual(['anon', 'dune4', 'neuro', 'comic']);
    expect(await shelf([rule('readStatus', 'not_equals', 'READ')])).toEqual(['anon', 'dune2', 'dune4', 'neuro', 'comic']);
    expect(await shelf([rule('readingProgress', 'greater_than', 50)])).toEqual(['dune1', 'neuro']);
    expect(await shelf([rule('readingProgress', 'in_between', undefined, { valueStart: 55, valueEnd: 65 })])).toEqual(['neuro']);
  });

  it('tests file types, presence and series positions', async () => {
    expect(await shelf([rule('fileType', 'equals', 'PDF')])).toEqual(['anon', 'dune2']);
    expect(await shelf([rule('fileType', 'not_equals', 'epub')])).toEqual(['anon', 'dune4', 'comic']);
    expect(await shelf([rule('metadataPresence', 'equals', 'seriesName')])).toEqual(['dune1', 'dune2', 'dune4']);
    expect(await shelf([rule('metadataPresence', 'not_equals', 'authors')])).toEqual(['anon']);
    expect(await shelf([rule('seriesPosition', 'equals', 'first_in_series')])).toEqual(['dune1']);
    expect(await shelf([rule('seriesPosition', 'equals', 'last_in_series')])).toEqual(['dune4']);
    expect(await shelf([rule('seriesPosition', 'equals', 'next_unread')])).toEqual(['dune2']);
    expect(await shelf([rule('seriesGaps', 'equals', 'any_gap')])).toEqual(['dune1', 'dune2', 'dune4']);
    expect(await shelf([rule('seriesStatus', 'equals', 'reading')])).toEqual(['dune1', 'dune2', 'dune4']);
    expect(await shelf([rule('seriesStatus', 'not_equals', 'fully_read')])).toEqual(['dune1', 'dune2', 'dune4']);
  });

  it('joins with and/or, nests groups, skips rules it cannot read, and treats an empty group as everything', async () => {
    expect(await shelf([rule('title', 'contains', 'dune'), rule('pageCount', 'greater_than', 400)], 'and')).toEqual(['dune1']);
    expect(await shelf([rule('title', 'equals', 'dune'), rule('title', 'equals', 'watchmen')], 'or')).toEqual(['dune1', 'comic']);
    expect(await shelf([{ type: 'group', join: 'or', rules: [rule('authors', 'includes_any', ['william gibson']), rule('publisher', 'equals', 'self')] }, rule('pageCount', 'is_not_empty')])).toEqual(['neuro']);
    expect(await shelf([rule('noSuchField', 'equals', 'x'), rule('title', 'equals', 'dune'), rule('title', 'no_such_op', 'x'), 'junk'])).toEqual(['dune1']);
    expect(await shelf([])).toHaveLength(6);
    expect(compileMagicShelf(store.dialect, 'not json', userId)).toBeUndefined();
    expect(compileMagicShelf(store.dialect, '[1,2]', userId)).toBeUndefined();
    // The compiled condition carries values as parameters, never inside the SQL text.
    const compiled = compileMagicShelf(store.dialect, JSON.stringify({ type: 'group', rules: [rule('title', 'equals', "x'); drop table book; --")] }), userId);
    expect(sql`${compiled}`.compile(store.db).sql).not.toContain('drop table');
  });
});
