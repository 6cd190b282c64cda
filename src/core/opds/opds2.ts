// OPDS 2.0 feeds (JSON), valid against the OPDS 2 and Readium Web Publication Manifest schemas. The same feed model
// as the Atom documents; links point into `/api/v2/opds`, where every response is JSON whatever the Accept header.
import {
  authorHref,
  coverHrefs,
  downloadHref,
  hrefOf,
  keptText,
  OPDS2_TEXT,
  pageTemplate,
  pagingLinks,
  ROOT,
  seriesHref,
  type BookEntry,
  type Feed,
  type NavEntry,
} from './feed.ts';

export const OPDS2_TYPE = 'application/opds+json';
export const AUTHENTICATION_TYPE = 'application/opds-authentication+json';

type Json = Record<string, unknown>;

export interface Opds2Context {
  /** `<basePath>/api/v2/opds`. */
  root: string;
}

/** A BCP 47 language tag of the common shapes (`en`, `eng`, `pt-BR`, `zh-Hant-TW`); anything else is left out. */
export function languageTag(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const tag = value.trim().replace(/_/g, '-');
  return /^[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?$/.test(tag) ? tag : undefined;
}

/** A calendar date `yyyy-MM-dd` that exists, or undefined. */
export function calendarDate(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(value.trim());
  if (!match) return undefined;
  const [, y, m, d] = match as unknown as [string, string, string, string];
  const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  return date.getUTCFullYear() === Number(y) && date.getUTCMonth() === Number(m) - 1 && date.getUTCDate() === Number(d) ? `${y}-${m}-${d}` : undefined;
}

function link(rel: string, href: string, extra: Json = {}): Json {
  return { rel, href, type: OPDS2_TYPE, ...extra };
}

function navigationLink(ctx: Opds2Context, entry: NavEntry): Json {
  return {
    href: hrefOf(ctx.root, entry.target),
    title: entry.title,
    type: OPDS2_TYPE,
    rel: 'subsection',
    ...(entry.count !== undefined ? { properties: { numberOfItems: entry.count } } : {}),
  };
}

function publication(ctx: Opds2Context, book: BookEntry): Json {
  const metadata: Json = {
    '@type': book.audiobook ? 'http://schema.org/Audiobook' : 'http://schema.org/Book',
    identifier: `urn:booklore:book:${book.bookId}`,
    title: book.title,
  };
  if (book.subtitle) metadata.subtitle = book.subtitle;
  if (book.authors.length > 0) metadata.author = book.authors.map((name) => ({ name, links: [{ href: authorHref(ctx.root, name), type: OPDS2_TYPE }] }));
  if (book.publisher) metadata.publisher = book.publisher;
  const language = languageTag(book.language);
  if (language) metadata.language = language;
  const published = calendarDate(book.published);
  if (published) metadata.published = published;
  metadata.modified = book.updated;
  if (book.description) metadata.description = book.description;
  if (book.categories.length > 0) metadata.subject = book.categories;
  if (book.series) {
    const series: Json = { name: book.series.name, links: [{ href: seriesHref(ctx.root, book.series.name), type: OPDS2_TYPE }] };
    if (book.series.position !== undefined) series.position = book.series.position;
    metadata.belongsTo = { series: [series] };
  }
  if (book.pageCount !== undefined && book.pageCount > 0) metadata.numberOfPages = book.pageCount;
  if (book.durationSeconds !== undefined && book.durationSeconds > 0) metadata.duration = book.durationSeconds;

  const links: Json[] = book.files.map((file) => ({
    rel: 'http://opds-spec.org/acquisition',
    href: downloadHref(ctx.root, book.bookId, file.id),
    type: file.type,
    ...(file.title ? { title: file.title } : {}),
  }));
  if (book.stream) {
    links.push({
      rel: 'http://vaemendis.net/opds-pse/stream',
      href: pageTemplate(ctx.root, book, book.stream),
      type: 'image/jpeg',
      templated: true,
      properties: { numberOfItems: book.stream.count },
    });
  }
  const out: Json = { metadata, links };
  if (book.coverStamp !== undefined) {
    const cover = coverHrefs(ctx.root, book.bookId, book.coverStamp);
    out.images = [
      { href: cover.full, type: 'image/jpeg', rel: 'http://opds-spec.org/image' },
      { href: cover.thumbnail, type: 'image/jpeg', rel: 'http://opds-spec.org/image/thumbnail' },
    ];
  }
  return out;
}

/**
 * A publication's JSON text, kept on the entry it was made from: a kept entry (entries.ts keeps them per book version,
 * shared by every reader) is written once per catalog root, not once per page.
 */
function publicationText(ctx: Opds2Context, book: BookEntry): string {
  return keptText(book, OPDS2_TEXT, ctx.root, () => JSON.stringify(publication(ctx, book)));
}

const listText = (texts: readonly string[]): string => `[${texts.join(',')}]`;

/** The feed's JSON text: written member by member, with each publication's text as kept (publicationText). */
export function renderOpds2(feed: Feed, ctx: Opds2Context): string {
  const metadata: Json = { title: feed.title, modified: feed.updated };
  const links: Json[] = [
    link('self', hrefOf(ctx.root, feed.self)),
    link('start', hrefOf(ctx.root, ROOT)),
    link('search', `${ctx.root}/catalog{?query}`, { templated: true }),
  ];
  if (feed.paging) {
    metadata.numberOfItems = feed.paging.total;
    metadata.itemsPerPage = feed.paging.size;
    metadata.currentPage = feed.paging.page;
    for (const paging of pagingLinks(feed.paging)) links.push(link(paging.rel, hrefOf(ctx.root, paging.target)));
  }
  const members = [`"metadata":${JSON.stringify(metadata)}`, `"links":${JSON.stringify(links)}`];
  if (feed.facets && feed.facets.length > 0) {
    // One facet object per group; the facet the feed shows now is marked `self`, as OPDS 2 readers expect.
    const groups = new Map<string, Json[]>();
    for (const facet of feed.facets) {
      const entry: Json = { href: hrefOf(ctx.root, facet.target), title: facet.title, type: OPDS2_TYPE, ...(facet.active ? { rel: 'self' } : {}), properties: { numberOfItems: facet.count } };
      groups.set(facet.group, [...(groups.get(facet.group) ?? []), entry]);
    }
    members.push(`"facets":${JSON.stringify([...groups].map(([title, facetLinks]) => ({ metadata: { title }, links: facetLinks })))}`);
  }
  // A publication needs an acquisition link: a book whose files are all gone has nothing to offer in OPDS 2.
  const offered = (entries: readonly (BookEntry | NavEntry)[]): BookEntry[] => entries.filter((e): e is BookEntry => e.type === 'book' && e.files.length > 0);
  const groups = (feed.groups ?? []).filter((g) => g.entries.some((e) => e.files.length > 0));
  if (groups.length > 0) {
    const texts = groups.map((g) => {
      const head = JSON.stringify({ metadata: { title: g.title, numberOfItems: g.total }, links: [link('self', hrefOf(ctx.root, g.target), { title: g.title })] });
      return `${head.slice(0, -1)},"publications":${listText(offered(g.entries).map((book) => publicationText(ctx, book)))}}`;
    });
    members.push(`"groups":${listText(texts)}`);
  }
  const books = offered(feed.entries);
  const navigation = feed.entries.filter((e): e is NavEntry => e.type === 'nav');
  if (books.length > 0) members.push(`"publications":${listText(books.map((book) => publicationText(ctx, book)))}`);
  if (navigation.length > 0) members.push(`"navigation":${JSON.stringify(navigation.map((entry) => navigationLink(ctx, entry)))}`);
  // A feed must hold at least one publication, navigation link or group: an empty one leads back to the start.
  if (books.length === 0 && navigation.length === 0) {
    members.push(`"navigation":${JSON.stringify([{ href: hrefOf(ctx.root, ROOT), title: feed.emptyTitle ?? 'Nothing here yet', type: OPDS2_TYPE, rel: 'start' }])}`);
  }
  return `{${members.join(',')}}`;
}

/** A feed for documents that have no OPDS 2 form (the OpenSearch description): the search template and the start. */
export function searchFeed(ctx: Opds2Context, updated: string): Json {
  return {
    metadata: { title: 'Search', modified: updated },
    links: [link('self', `${ctx.root}/search.opds`), link('start', ctx.root), link('search', `${ctx.root}/catalog{?query}`, { templated: true })],
    navigation: [{ href: ctx.root, title: 'Catalog', type: OPDS2_TYPE, rel: 'start' }],
  };
}

/** Authentication for OPDS 1.0: how to sign in (HTTP Basic), sent with every 401 to a client asking for OPDS 2. */
export function authenticationDocument(ctx: Opds2Context, title: string): Json {
  return {
    id: `${ctx.root}/auth`,
    title,
    description: 'Sign in with an OPDS account created in the web interface (Settings → OPDS).',
    authentication: [{ type: 'http://opds-spec.org/auth/basic', labels: { login: 'Username', password: 'Password' } }],
    links: [{ rel: 'start', href: ctx.root, type: OPDS2_TYPE }],
  };
}

/** RFC 9457 problem details, for errors answered to OPDS 2 clients. */
export function problem(status: number, title: string, detail?: string): Json {
  return { type: 'about:blank', title, status, ...(detail !== undefined && detail !== title ? { detail } : {}) };
}
