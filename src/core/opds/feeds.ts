// Every OPDS feed as the feed model: the root, the navigation lists and the acquisition feeds (catalog with its
// filters, recent, surprise), for one reader, with Grimmory's ids, titles, paging and access rules.
import { hasAny, isAdmin, type Principal } from '../auth/principal.ts';
import { canSeeLibrary } from '../auth/visibility.ts';
import type { Store } from '../store/store.ts';
import {
  pageOfAuthors,
  pageOfBooks,
  pageOfSeries,
  randomBooks,
  readableMagicShelves,
  readableShelves,
  visibleLibraries,
  type BookFilter,
  countBooks,
  formatCounts,
  OPDS_SORT_ORDERS,
  type BookOrder,
  type OpdsSortOrder,
} from './catalog.ts';
import { bookEntries } from './entries.ts';
import { authorTarget, seriesTarget, type Facet, type Feed, type Group, type NavEntry, type Target } from './feed.ts';
import { compileMagicShelf } from './magic-shelf-rules.ts';

export type OpdsErrorCode = 'NOT_FOUND' | 'FORBIDDEN';

export class OpdsError extends Error {
  override name = 'OpdsError';
  readonly code: OpdsErrorCode;
  constructor(code: OpdsErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
export const SURPRISE_COUNT = 25;

/** Who is reading: the owning user's rights, the OPDS account's order, and the catalog's name. */
export interface Reader {
  principal: Principal;
  sortOrder: OpdsSortOrder;
}

export interface FeedOptions {
  /** ISO instant for `updated`. */
  now: string;
  /** The catalog's name in titles. */
  name: string;
  /** Build OPDS 2 groups (the Atom documents have none). */
  groups?: boolean;
}

/** How many of the newest books the OPDS 2 start page shows. */
export const RECENT_GROUP_SIZE = 10;

export type Query = Record<string, unknown>;

/** A query parameter as one string: the first of repeated values, trimmed; blank is absent. */
export function param(query: Query, name: string): string | undefined {
  const raw = query[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const text = String(value).trim();
  return text === '' ? undefined : text;
}

/** A whole number parameter; anything unparsable counts as absent (Grimmory falls back to the default). */
function integer(query: Query, name: string): number | undefined {
  const text = param(query, name);
  if (text === undefined || !/^[+-]?\d{1,15}$/.test(text)) return undefined;
  return Number(text);
}

export interface PageParams {
  page: number;
  size: number;
}

/** 1-based `page` (default 1), `size` default 50, at most 100. */
export function pageParams(query: Query): PageParams {
  const page = Math.max(1, integer(query, 'page') ?? 1);
  const size = Math.min(MAX_PAGE_SIZE, Math.max(1, integer(query, 'size') ?? DEFAULT_PAGE_SIZE));
  return { page, size };
}

const nav = (id: string, title: string, target: Target, kind: NavEntry['kind'], content: string, count?: number): NavEntry => ({ type: 'nav', id, title, target, kind, content, count });

const withPage = (target: Target, page: number, size: number): Target => ({ path: target.path, query: [...(target.query ?? []), ['page', String(page)], ['size', String(size)]] });

/** The newest books, as a group of the OPDS 2 start page. */
export async function recentGroup(store: Store, reader: Reader, options: FeedOptions): Promise<Group> {
  const { ids, total } = await pageOfBooks(store, reader.principal, {}, 'RECENT', 1, RECENT_GROUP_SIZE);
  return { title: 'Recently Added', target: withPage({ path: 'recent' }, 1, DEFAULT_PAGE_SIZE), total, entries: await bookEntries(store, ids, reader.principal.userId, options.now) };
}

export function rootFeed(options: FeedOptions, recent?: Group): Feed {
  const first = (path: string): Target => withPage({ path }, 1, DEFAULT_PAGE_SIZE);
  return {
    ...(recent ? { groups: [recent] } : {}),
    id: 'urn:booklore:root',
    title: `${options.name} Catalog`,
    updated: options.now,
    kind: 'navigation',
    self: { path: '' },
    entries: [
      nav('urn:booklore:catalog:all', 'All Books', first('catalog'), 'acquisition', 'Browse all available books'),
      nav('urn:booklore:catalog:recent', 'Recently Added', first('recent'), 'acquisition', 'Recently added books'),
      nav('urn:booklore:navigation:libraries', 'Libraries', { path: 'libraries' }, 'navigation', 'Browse books by library'),
      nav('urn:booklore:navigation:shelves', 'Shelves', { path: 'shelves' }, 'navigation', 'Browse your personal shelves'),
      nav('urn:booklore:navigation:magic-shelves', 'Magic Shelves', { path: 'magic-shelves' }, 'navigation', 'Browse your smart, dynamic shelves'),
      nav('urn:booklore:navigation:authors', 'Authors', { path: 'authors' }, 'navigation', 'Browse books by author'),
      nav('urn:booklore:navigation:series', 'Series', { path: 'series' }, 'navigation', 'Browse books by series'),
      nav('urn:booklore:catalog:surprise', 'Surprise Me', { path: 'surprise' }, 'acquisition', `${SURPRISE_COUNT} random books from the catalog`),
    ],
  };
}

function navigationFeed(id: string, title: string, path: string, entries: NavEntry[], options: FeedOptions, emptyTitle: string): Feed {
  return { id, title, updated: options.now, kind: 'navigation', self: { path }, entries, emptyTitle };
}

export async function librariesFeed(store: Store, reader: Reader, options: FeedOptions): Promise<Feed> {
  const entries = (await visibleLibraries(store, reader.principal)).map((l) =>
    nav(`urn:booklore:library:${l.id}`, l.name, { path: 'catalog', query: [['libraryId', String(l.id)]] }, 'acquisition', `${l.count} book${l.count === 1 ? '' : 's'}`, l.count),
  );
  return navigationFeed('urn:booklore:navigation:libraries', 'Libraries', 'libraries', entries, options, 'No libraries');
}

export async function shelvesFeed(store: Store, reader: Reader, options: FeedOptions): Promise<Feed> {
  const entries = (await readableShelves(store, reader.principal)).map((s) =>
    nav(`urn:booklore:shelf:${s.id}`, s.name, { path: 'catalog', query: [['shelfId', String(s.id)]] }, 'acquisition', 'Personal shelf collection', s.count),
  );
  return navigationFeed('urn:booklore:navigation:shelves', 'Shelves', 'shelves', entries, options, 'No shelves');
}

export async function magicShelvesFeed(store: Store, reader: Reader, options: FeedOptions): Promise<Feed> {
  const entries = (await readableMagicShelves(store, reader.principal)).map((s) =>
    nav(`urn:booklore:magic-shelf:${s.id}`, s.name, { path: 'catalog', query: [['magicShelfId', String(s.id)]] }, 'acquisition', 'Smart, dynamic shelf collection'),
  );
  return navigationFeed('urn:booklore:navigation:magic-shelves', 'Magic Shelves', 'magic-shelves', entries, options, 'No magic shelves');
}

/** Names go into `urn:` ids percent-encoded: an id is a URI, and names have spaces. */
const urnPart = (name: string): string => encodeURIComponent(name);

export async function authorsFeed(store: Store, reader: Reader, query: Query, options: FeedOptions): Promise<Feed> {
  const { page, size } = pageParams(query);
  const { items, total } = await pageOfAuthors(store, reader.principal, page, size);
  return {
    ...navigationFeed('urn:booklore:navigation:authors', 'Authors', 'authors', [], options, 'No authors'),
    self: withPage({ path: 'authors' }, page, size),
    paging: { page, size, total, at: (p) => withPage({ path: 'authors' }, p, size) },
    entries: items.map((a) => nav(`urn:booklore:author:${urnPart(a.name)}`, a.name, authorTarget(a.name), 'acquisition', `Books by ${a.name}`, a.count)),
  };
}

export async function seriesFeed(store: Store, reader: Reader, query: Query, options: FeedOptions): Promise<Feed> {
  const { page, size } = pageParams(query);
  const { items, total } = await pageOfSeries(store, reader.principal, page, size);
  return {
    ...navigationFeed('urn:booklore:navigation:series', 'Series', 'series', [], options, 'No series'),
    self: withPage({ path: 'series' }, page, size),
    paging: { page, size, total, at: (p) => withPage({ path: 'series' }, p, size) },
    entries: items.map((s) => nav(`urn:booklore:series:${urnPart(s.name)}`, s.name, seriesTarget(s.name), 'acquisition', `Books in the ${s.name} series`, s.count)),
  };
}

/** Grimmory's catalog listing (not the author or series variants) needs the owner's OPDS permission. */
function requireOpdsPermission(principal: Principal): void {
  if (!hasAny(principal, ['admin', 'canAccessOpds'])) throw new OpdsError('FORBIDDEN', 'You are not allowed to access this resource');
}

const CATALOG_PARAMS = ['q', 'query', 'libraryId', 'shelfId', 'shelfIds', 'magicShelfId', 'author', 'series', 'sort', 'format'] as const;

/** The orders offered as sort facets, with their titles. */
const SORT_FACETS: [OpdsSortOrder, string][] = [
  ['RECENT', 'Recently added'],
  ['TITLE_ASC', 'Title'],
  ['AUTHOR_ASC', 'Author'],
  ['SERIES_ASC', 'Series'],
  ['RATING_DESC', 'Rating'],
];

/** Titles of the format facets, by book type. */
const FORMAT_TITLES: Record<string, string> = { EPUB: 'EPUB', PDF: 'PDF', CBX: 'Comics', MOBI: 'MOBI', AZW3: 'AZW3', FB2: 'FB2', AUDIOBOOK: 'Audiobooks' };

/** `sort=<order>` (an OPDS account order; anything else is ignored). */
function sortOf(query: Query): OpdsSortOrder | undefined {
  const value = param(query, 'sort')?.toUpperCase();
  return OPDS_SORT_ORDERS.find((o) => o === value);
}

/** `format=<book type>` (one of Bindery's book types); anything else is ignored. */
function formatOf(query: Query): string | undefined {
  const value = param(query, 'format')?.toUpperCase();
  return value !== undefined && Object.hasOwn(FORMAT_TITLES, value) ? value : undefined;
}

function shelfIdsOf(query: Query): number[] {
  const ids = new Set<number>();
  for (const raw of [param(query, 'shelfId'), ...(param(query, 'shelfIds')?.split(',') ?? [])]) {
    const text = raw?.trim();
    if (text && /^\d{1,15}$/.test(text)) ids.add(Number(text));
  }
  return [...ids];
}

interface Scope {
  filter: BookFilter;
  order: BookOrder;
  id: string;
  title: string;
}

/** What the catalog query asks for, after the access checks; filters given together all apply. */
async function catalogScope(store: Store, reader: Reader, query: Query, options: FeedOptions): Promise<Scope> {
  const { principal } = reader;
  const q = param(query, 'q') ?? param(query, 'query');
  const libraryId = integer(query, 'libraryId');
  const shelfIds = shelfIdsOf(query);
  const magicShelfId = integer(query, 'magicShelfId');
  const author = param(query, 'author');
  const series = param(query, 'series');
  const format = formatOf(query);
  const filter: BookFilter = { q, ...(format !== undefined ? { format } : {}) };
  const scope: Scope = { filter, order: sortOf(query) ?? reader.sortOrder, id: 'urn:booklore:catalog', title: `${options.name} Catalog` };
  if (magicShelfId === undefined && author === undefined && series === undefined) requireOpdsPermission(principal);
  if (q !== undefined) scope.title = `Search results for “${q}”`;

  if (libraryId !== undefined) {
    const library = (await store.exec.get('SELECT id, name FROM library WHERE id = ?', [libraryId])) as { id: number; name: string } | undefined;
    if (!library) throw new OpdsError('NOT_FOUND', `Library not found with ID: ${libraryId}`);
    if (!canSeeLibrary(principal, library.id)) throw new OpdsError('FORBIDDEN', 'You are not allowed to access this library');
    filter.libraryId = library.id;
    Object.assign(scope, { id: `urn:booklore:library:${library.id}`, title: library.name });
  }
  if (shelfIds.length > 0) {
    const names: string[] = [];
    for (const shelfId of shelfIds) {
      const shelf = (await store.exec.get('SELECT id, name, user_id, is_public FROM shelf WHERE id = ?', [shelfId])) as { id: number; name: string; user_id: number; is_public: number } | undefined;
      if (!shelf) throw new OpdsError('NOT_FOUND', `Shelf not found with ID: ${shelfId}`);
      if (shelf.user_id !== principal.userId && shelf.is_public !== 1 && !isAdmin(principal)) throw new OpdsError('FORBIDDEN', 'You are not allowed to access this shelf');
      names.push(shelf.name);
    }
    filter.shelfIds = shelfIds;
    if (shelfIds.length === 1) Object.assign(scope, { id: `urn:booklore:shelf:${shelfIds[0]}`, title: `${names[0]} - Shelf` });
    else Object.assign(scope, { id: `urn:booklore:shelves:${[...shelfIds].sort((a, b) => a - b).join(',')}`, title: 'Multiple Shelves' });
  }
  if (series !== undefined) {
    filter.series = series;
    // A series reads in its own order.
    Object.assign(scope, { order: 'SERIES_NUMBER', id: `urn:booklore:series:${urnPart(series)}`, title: `${series} series` });
  }
  if (author !== undefined) {
    filter.author = author;
    Object.assign(scope, { id: `urn:booklore:author:${urnPart(author)}`, title: `Books by ${author}` });
  }
  if (magicShelfId !== undefined) {
    const shelf = (await store.exec.get('SELECT id, name, user_id, is_public, filter_json FROM magic_shelf WHERE id = ?', [magicShelfId])) as
      | { id: number; name: string; user_id: number; is_public: number; filter_json: string }
      | undefined;
    if (!shelf) throw new OpdsError('NOT_FOUND', `Magic shelf not found with ID: ${magicShelfId}`);
    const admin = isAdmin(principal);
    if (!admin && (!principal.permissions.canAccessOpds || (shelf.user_id !== principal.userId && shelf.is_public !== 1))) {
      throw new OpdsError('FORBIDDEN', 'You are not allowed to access this magic shelf');
    }
    // Rules that are not JSON at all select nothing rather than everything.
    const rules = compileMagicShelf(store.dialect, shelf.filter_json, principal.userId);
    if (rules) filter.rules = rules;
    else filter.nothing = true;
    Object.assign(scope, { id: `urn:booklore:magic-shelf:${shelf.id}`, title: `${shelf.name} - Magic Shelf` });
  }
  return scope;
}

async function acquisitionFeed(store: Store, reader: Reader, scope: Scope, self: Target, query: Query, options: FeedOptions): Promise<Feed> {
  const { page, size } = pageParams(query);
  const { ids, total } = await pageOfBooks(store, reader.principal, scope.filter, scope.order, page, size);
  return {
    id: scope.id,
    title: scope.title,
    updated: options.now,
    kind: 'acquisition',
    self: withPage(self, page, size),
    paging: { page, size, total, at: (p) => withPage(self, p, size) },
    entries: await bookEntries(store, ids, reader.principal.userId, options.now),
    emptyTitle: 'No books here',
  };
}

export async function catalogFeed(store: Store, reader: Reader, query: Query, options: FeedOptions): Promise<Feed> {
  const scope = await catalogScope(store, reader, query, options);
  // Paging links carry the filters as they were given (Grimmory's whitelist), then page and size.
  const carried: [string, string][] = [];
  for (const name of CATALOG_PARAMS) {
    const value = param(query, name);
    if (value !== undefined) carried.push([name, value]);
  }
  const feed = await acquisitionFeed(store, reader, scope, { path: 'catalog', query: carried }, query, options);
  const facets = await catalogFacets(store, reader, scope, carried, pageParams(query).size, feed.paging?.total ?? 0);
  return facets.length > 0 ? { facets, ...feed } : feed;
}

/**
 * Facets of a catalog feed: its orders (not for a series, which reads in its own order), each counting the feed's
 * books, and the formats present among this feed's books (whatever format is chosen now), each with its count, when
 * there is more than one. Each leads to the first page of the same feed (same page size) with that `sort` or
 * `format`; the filters stay.
 */
async function catalogFacets(store: Store, reader: Reader, scope: Scope, carried: [string, string][], size: number, total: number): Promise<Facet[]> {
  const others = (name: string): [string, string][] => carried.filter(([n]) => n !== name);
  const at = (name: string, value: string | undefined): Target =>
    withPage({ path: 'catalog', query: [...others(name), ...(value === undefined ? [] : [[name, value] as [string, string]])] }, 1, size);
  const facets: Facet[] = [];
  if (scope.order !== 'SERIES_NUMBER') {
    for (const [order, title] of SORT_FACETS) facets.push({ group: 'Sort', title, target: at('sort', order), active: scope.order === order, count: total });
  }
  const formats = await formatCounts(store, reader.principal, scope.filter);
  if (formats.size > 1) {
    const { format: chosen, ...unformatted } = scope.filter;
    const all = chosen === undefined ? total : await countBooks(store, reader.principal, unformatted);
    facets.push({ group: 'Format', title: 'All formats', target: at('format', undefined), active: chosen === undefined, count: all });
    for (const [format, count] of formats) facets.push({ group: 'Format', title: FORMAT_TITLES[format] ?? format, target: at('format', format), active: chosen === format, count });
  }
  return facets;
}

/** Newest first, whatever the account's order: the feed is "Recently Added". */
export function recentFeed(store: Store, reader: Reader, query: Query, options: FeedOptions): Promise<Feed> {
  const scope: Scope = { filter: {}, order: 'RECENT', id: 'urn:booklore:catalog:recent', title: 'Recently Added Books' };
  return acquisitionFeed(store, reader, scope, { path: 'recent' }, query, options);
}

export async function surpriseFeed(store: Store, reader: Reader, options: FeedOptions): Promise<Feed> {
  const ids = await randomBooks(store, reader.principal, SURPRISE_COUNT);
  return {
    id: 'urn:booklore:catalog:surprise',
    title: 'Surprise Me',
    updated: options.now,
    kind: 'acquisition',
    self: { path: 'surprise' },
    paging: { page: 1, size: SURPRISE_COUNT, total: ids.length, at: () => ({ path: 'surprise' }), linkless: true },
    entries: await bookEntries(store, ids, reader.principal.userId, options.now),
    emptyTitle: 'No books here',
  };
}
