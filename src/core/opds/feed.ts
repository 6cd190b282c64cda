// The feed model both wire formats are written from: OPDS 1.2 Atom (atom.ts) and OPDS 2.0 JSON (opds2.ts). Locations
// are kept relative to the OPDS root, so one feed renders with links into `/api/v1/opds` (Atom) or `/api/v2/opds` (JSON).

export type FeedKind = 'navigation' | 'acquisition';

/** A place in the catalog: a path below the OPDS root (`''` is the root itself) and its query parameters. */
export interface Target {
  path: string;
  /** `[name, value]` pairs in order; an empty value is written as the bare name (`?2024-01-01T00:00:00Z`). */
  query?: [string, string][];
}

export interface NavEntry {
  type: 'nav';
  /** Atom id, `urn:booklore:…` as Grimmory names them. */
  id: string;
  title: string;
  target: Target;
  /** What the linked feed is. */
  kind: FeedKind;
  content?: string;
  /** Books behind the link, when known cheaply. */
  count?: number;
}

export interface AcquisitionFile {
  id: number;
  /** Media type of the download. */
  type: string;
  /** Format name shown beside the link (`EPUB`, `CBX`, …). */
  title?: string;
}

export interface PageStream {
  fileId: number;
  /** Pages in the comic; pages are requested 0-based. */
  count: number;
  /** Last page read, counted from 1 (OPDS-PSE 1.2). */
  lastRead?: number;
  lastReadUpdate?: string;
}

export interface BookEntry {
  type: 'book';
  bookId: number;
  title: string;
  subtitle?: string;
  /** ISO instant: when the book was added. */
  updated: string;
  /** `yyyy-MM-dd`. */
  published?: string;
  authors: string[];
  publisher?: string;
  language?: string;
  categories: string[];
  description?: string;
  isbn13?: string;
  isbn10?: string;
  series?: { name: string; position?: number };
  pageCount?: number;
  durationSeconds?: number;
  audiobook: boolean;
  /** One per book file, the primary file first. */
  files: AcquisitionFile[];
  /** Cache-buster of the cover URL; the book has no cover when it is absent. */
  coverStamp?: string;
  stream?: PageStream;
}

export type Entry = NavEntry | BookEntry;

export interface Paging {
  /** 1-based. */
  page: number;
  size: number;
  total: number;
  /** The same feed at another page. */
  at: (page: number) => Target;
  /** A one-off page (random picks): counts but no first/previous/next/last links. */
  linkless?: boolean;
}

/** An OPDS facet: the same feed in another order or narrowed to a subset, in a named group. */
export interface Facet {
  group: string;
  title: string;
  target: Target;
  /** The facet the feed is showing now (at most one per group). */
  active: boolean;
  /** How many books the facet leads to (OPDS 1.2 `thr:count`, OPDS 2 `numberOfItems`). */
  count: number;
}

/** A curated set of publications shown inside a navigation feed (OPDS 2 `groups`; Atom has no such thing). */
export interface Group {
  title: string;
  /** The full list the group is taken from. */
  target: Target;
  total: number;
  entries: BookEntry[];
}

export interface Feed {
  id: string;
  title: string;
  /** ISO instant. */
  updated: string;
  kind: FeedKind;
  self: Target;
  paging?: Paging;
  /** Acquisition feeds only. */
  facets?: Facet[];
  /** Rendered in OPDS 2 only. */
  groups?: Group[];
  entries: Entry[];
  /** What to call an empty feed (OPDS 2 needs at least one item, so it becomes a link back to the start). */
  emptyTitle?: string;
}

export const ROOT: Target = { path: '' };

/** The href of a target below `root` (e.g. `/books/api/v1/opds`), with the query form-encoded. */
export function hrefOf(root: string, target: Target): string {
  let href = target.path === '' ? root : `${root}/${target.path}`;
  let separator = '?';
  for (const [name, value] of target.query ?? []) {
    href += value === '' ? `${separator}${encodeURIComponent(name)}` : `${separator}${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
    separator = '&';
  }
  return href;
}

export function totalPages(paging: Paging): number {
  return Math.ceil(paging.total / paging.size);
}

/** `first`, `previous`, `next` and `last` as they apply, as Grimmory writes them (first/last whenever there is a page). */
export function pagingLinks(paging: Paging): { rel: 'first' | 'previous' | 'next' | 'last'; target: Target }[] {
  if (paging.linkless) return [];
  const pages = totalPages(paging);
  const out: { rel: 'first' | 'previous' | 'next' | 'last'; target: Target }[] = [];
  if (pages > 0) out.push({ rel: 'first', target: paging.at(1) });
  if (paging.page > 1) out.push({ rel: 'previous', target: paging.at(Math.min(paging.page - 1, Math.max(pages, 1))) });
  if (paging.page < pages) out.push({ rel: 'next', target: paging.at(paging.page + 1) });
  if (pages > 0) out.push({ rel: 'last', target: paging.at(pages) });
  return out;
}

/** Where the catalog of one author or series is (the navigation feeds and the book entries both link there). */
export const authorTarget = (name: string): Target => ({ path: 'catalog', query: [['author', name]] });
export const seriesTarget = (name: string): Target => ({ path: 'catalog', query: [['series', name]] });

/** The pages of a comic, as the OPDS-PSE URL template (kept literal: readers substitute the placeholders). */
export function pageTemplate(root: string, entry: BookEntry, stream: PageStream): string {
  return `${root}/${entry.bookId}/pages/{pageNumber}?fileId=${stream.fileId}&maxWidth={maxWidth}`;
}

// The links of a book entry, written straight as hrefs (a feed page has a few hundred): the same as `hrefOf` gives for
// the equivalent targets, ids being plain digits.

/** The catalog of one author or series (as `hrefOf` writes `authorTarget` and `seriesTarget`: the parameter names need no encoding). */
export function authorHref(root: string, name: string): string {
  return name === '' ? `${root}/catalog?author` : `${root}/catalog?author=${encodeURIComponent(name)}`;
}

export function seriesHref(root: string, name: string): string {
  return name === '' ? `${root}/catalog?series` : `${root}/catalog?series=${encodeURIComponent(name)}`;
}

export function downloadHref(root: string, bookId: number, fileId: number): string {
  return `${root}/${bookId}/download?fileId=${fileId}`;
}

/**
 * Grimmory's cover URLs (`/{id}/cover?<coverUpdatedOn>`): the thumbnail, and with `size=full` the whole cover, the
 * latter first.
 */
export function coverHrefs(root: string, bookId: number, stamp: string): { full: string; thumbnail: string } {
  const thumbnail = `${root}/${bookId}/cover?${encodeURIComponent(stamp)}`;
  return { full: `${thumbnail}&size=full`, thumbnail };
}

/** Where an entry keeps its text in each format (see keptText). */
export const ATOM_TEXT = Symbol('Atom entry');
export const OPDS2_TEXT = Symbol('OPDS 2 publication');

/**
 * An entry's text in one format, written once per catalog root and kept on the entry (rather than in a WeakMap beside
 * the entries, which the collector must treat specially), under a property that is not enumerable: copies of the entry
 * (a comic's with the reader's page stream) do not take it along, and comparisons and JSON do not see it.
 */
export function keptText(entry: BookEntry, format: symbol, root: string, write: () => string): string {
  const known = (entry as unknown as Record<symbol, { root: string; text: string } | undefined>)[format];
  if (known !== undefined && known.root === root) return known.text;
  const text = flat(write());
  Object.defineProperty(entry, format, { value: { root, text }, writable: true, configurable: true });
  return text;
}

/**
 * The same text as one flat string. A string built with `+=` is a tree of its pieces (an entry's Atom text: some fifty
 * of them); kept that way, each piece is an object the collector promotes and marks, which made a page of fifty new
 * entries ~0.8 ms dearer. Reading it as a number makes V8 flatten it in place (the comparison keeps that read).
 */
function flat(text: string): string {
  return Number(text) === -1 ? '-1' : text;
}
