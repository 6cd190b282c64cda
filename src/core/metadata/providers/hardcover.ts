// Hardcover (https://docs.hardcover.app/api/getting-started/): one GraphQL endpoint, `POST /v1/graphql`, with the
// user's API token as `authorization: Bearer …`. ISBNs go through `books(where: editions isbn)`, titles through the
// `search(query_type: "Book")` index; details read one book by id (or slug).
import { ProviderError, providerChanged, type MetadataCandidate, type MetadataProvider, type ProviderContext, type ProviderQuery } from '../provider.ts';
import { asArray, asInt, asNumber, asString, asStrings, cleanIsbn, compact, isObject, normalizeLanguage, parseLooseDate, uniqueStrings, type Json } from '../values.ts';

const NAME = 'Hardcover';
const SITE = 'https://hardcover.app';
/** Genres, moods and tags kept per book: Hardcover's lists run long with one-vote entries. */
const MAX_TAGS = 10;

const BOOK_FIELDS = `
  id slug title subtitle description rating ratings_count pages release_date release_year cached_contributors cached_tags
  image { url }
  featured_book_series { position series { name primary_books_count } }`;

const EDITION_FIELDS = `id title subtitle pages release_date isbn_10 isbn_13 cached_contributors image { url } publisher { name } language { code2 }`;

const ISBN_QUERY = `query BookByIsbn($isbn: String!) {
  books(where: {editions: {_or: [{isbn_13: {_eq: $isbn}}, {isbn_10: {_eq: $isbn}}]}}, limit: 5) {
    ${BOOK_FIELDS}
    editions(where: {_or: [{isbn_13: {_eq: $isbn}}, {isbn_10: {_eq: $isbn}}]}, limit: 1) { ${EDITION_FIELDS} }
  }
}`;

const SEARCH_QUERY = `query BookSearch($q: String!, $limit: Int!) {
  search(query: $q, query_type: "Book", per_page: $limit, page: 1) { results }
}`;

const BY_ID_QUERY = `query BookById($id: Int!) { books(where: {id: {_eq: $id}}, limit: 1) { ${BOOK_FIELDS} } }`;
const BY_SLUG_QUERY = `query BookBySlug($slug: String!) { books(where: {slug: {_eq: $slug}}, limit: 1) { ${BOOK_FIELDS} } }`;

/** `cached_contributors`: `[{ author: { name }, contribution: null | "Illustrator" | … }]`; null contribution = author. */
function contributors(raw: unknown): string[] {
  return uniqueStrings(
    asArray(raw)
      .filter((c) => isObject(c) && (c.contribution === null || c.contribution === undefined || c.contribution === 'Author'))
      .map((c) => (isObject(c) && isObject(c.author) ? asString(c.author.name) : undefined))
      .filter((n): n is string => n !== undefined),
  );
}

/** `cached_tags.Genre` etc.: `[{ tag, count }]`, most-voted first. */
function cachedTags(raw: unknown, kind: 'Genre' | 'Mood' | 'Tag'): string[] {
  if (!isObject(raw)) return [];
  const list = asArray(raw[kind])
    .filter(isObject)
    .map((t) => ({ tag: asString(t.tag), count: asNumber(t.count) ?? 0 }))
    .filter((t): t is { tag: string; count: number } => t.tag !== undefined)
    .sort((a, b) => b.count - a.count);
  return uniqueStrings(list.map((t) => t.tag)).slice(0, MAX_TAGS);
}

const roundRating = (r: number | undefined): number | undefined => (r === undefined ? undefined : Math.round(r * 100) / 100);

function series(raw: unknown): Pick<MetadataCandidate, 'seriesName' | 'seriesNumber' | 'seriesTotal'> {
  if (!isObject(raw) || !isObject(raw.series)) return {};
  return compact({ seriesName: asString(raw.series.name), seriesNumber: asNumber(raw.position), seriesTotal: asInt(raw.series.primary_books_count) });
}

/** A `books` row (with at most one matching edition) → a candidate. */
export function parseHardcoverBook(book: unknown): MetadataCandidate | undefined {
  if (!isObject(book)) return undefined;
  const id = asString(book.id);
  const edition: Json = isObject(asArray(book.editions)[0]) ? (asArray(book.editions)[0] as Json) : {};
  const title = asString(edition.title) ?? asString(book.title);
  if (!id || !title) return undefined;
  const slug = asString(book.slug);
  const editionAuthors = contributors(edition.cached_contributors);
  return compact<MetadataCandidate>({
    provider: 'Hardcover',
    providerItemId: id,
    hardcoverId: slug,
    hardcoverBookId: id,
    title,
    subtitle: asString(edition.subtitle) ?? asString(book.subtitle),
    authors: editionAuthors.length > 0 ? editionAuthors : contributors(book.cached_contributors),
    description: asString(book.description),
    publisher: isObject(edition.publisher) ? asString(edition.publisher.name) : undefined,
    publishedDate: parseLooseDate(edition.release_date) ?? parseLooseDate(book.release_date) ?? parseLooseDate(book.release_year),
    pageCount: asInt(edition.pages) ?? asInt(book.pages),
    isbn13: cleanIsbn(asString(edition.isbn_13)),
    isbn10: cleanIsbn(asString(edition.isbn_10)),
    language: isObject(edition.language) ? normalizeLanguage(edition.language.code2) : undefined,
    categories: cachedTags(book.cached_tags, 'Genre'),
    moods: cachedTags(book.cached_tags, 'Mood'),
    tags: cachedTags(book.cached_tags, 'Tag'),
    hardcoverRating: roundRating(asNumber(book.rating)),
    hardcoverReviewCount: asInt(book.ratings_count),
    thumbnailUrl: (isObject(edition.image) ? asString(edition.image.url) : undefined) ?? (isObject(book.image) ? asString(book.image.url) : undefined),
    externalUrl: slug ? `${SITE}/books/${slug}` : undefined,
    ...series(book.featured_book_series),
  });
}

/** One hit of the search index (`results.hits[].document`) → a candidate. */
export function parseHardcoverDocument(doc: unknown): MetadataCandidate | undefined {
  if (!isObject(doc)) return undefined;
  const id = asString(doc.id);
  const title = asString(doc.title);
  if (!id || !title) return undefined;
  const slug = asString(doc.slug);
  const isbns = asStrings(doc.isbns).map(cleanIsbn).filter((i): i is string => i !== undefined);
  const featured = isObject(doc.featured_series) ? doc.featured_series : undefined;
  return compact<MetadataCandidate>({
    provider: 'Hardcover',
    providerItemId: id,
    hardcoverId: slug,
    hardcoverBookId: id,
    title,
    subtitle: asString(doc.subtitle),
    authors: uniqueStrings(asStrings(doc.author_names)),
    description: asString(doc.description),
    publishedDate: parseLooseDate(doc.release_date) ?? parseLooseDate(doc.release_year),
    pageCount: asInt(doc.pages),
    isbn13: isbns.find((i) => i.length === 13),
    isbn10: isbns.find((i) => i.length === 10),
    categories: uniqueStrings(asStrings(doc.genres)).slice(0, MAX_TAGS),
    moods: uniqueStrings(asStrings(doc.moods)).slice(0, MAX_TAGS),
    tags: uniqueStrings(asStrings(doc.tags)).slice(0, MAX_TAGS),
    hardcoverRating: roundRating(asNumber(doc.rating)),
    hardcoverReviewCount: asInt(doc.ratings_count),
    thumbnailUrl: isObject(doc.image) ? asString(doc.image.url) : undefined,
    externalUrl: slug ? `${SITE}/books/${slug}` : undefined,
    ...(featured ? series(featured) : asStrings(doc.series_names)[0] ? { seriesName: asStrings(doc.series_names)[0] } : {}),
  });
}

/** The `data` of a GraphQL answer, or the error it carries in words. */
export function graphqlData(body: unknown): Json {
  if (!isObject(body)) throw providerChanged(NAME, 'the answer is not an object');
  const errors = asArray(body.errors);
  const message = errors.map((e) => (isObject(e) ? asString(e.message) : undefined)).find((m) => m) ?? asString(body.error);
  if (message) {
    if (/throttl|rate limit|too many/i.test(message)) throw new ProviderError(NAME, 'RATE_LIMITED', `asked to slow down: ${message}`);
    if (/token|auth|jwt|permission|unauthori[sz]ed/i.test(message)) throw new ProviderError(NAME, 'NOT_CONFIGURED', `refused the API key: ${message}`);
    throw providerChanged(NAME, `GraphQL error: ${message}`);
  }
  if (!isObject(body.data)) throw providerChanged(NAME, 'no "data" in the answer');
  return body.data;
}

function authorization(ctx: ProviderContext): string {
  const key = asString(ctx.settings.apiKey);
  if (!key) throw new ProviderError(NAME, 'NOT_CONFIGURED', 'needs "apiKey" in the metadata provider settings');
  // The token Hardcover shows on its settings page may already carry the scheme.
  return /^bearer\s/i.test(key) ? key : `Bearer ${key}`;
}

async function graphql(ctx: ProviderContext, query: string, variables: Json): Promise<Json> {
  const body = await ctx.getJson('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: authorization(ctx) },
    body: JSON.stringify({ query, variables }),
  });
  return graphqlData(body);
}

function books(data: Json): unknown[] {
  if (!Array.isArray(data.books)) throw providerChanged(NAME, 'no "books" list in the answer');
  return data.books;
}

export const hardcoverProvider: MetadataProvider = {
  id: 'Hardcover',
  settingsKey: 'hardcover',
  displayName: NAME,
  defaultBaseUrl: () => 'https://api.hardcover.app/v1',
  // Hardcover allows 60 requests a minute per token.
  minIntervalMs: 1000,
  timeoutMs: 20_000,
  requiredSettings: ['apiKey'],
  async search(query: ProviderQuery, ctx: ProviderContext): Promise<MetadataCandidate[]> {
    const limit = Math.min(Math.max(query.limit ?? 10, 1), 25);
    const isbn = cleanIsbn(query.isbn);
    if (isbn) {
      const data = await graphql(ctx, ISBN_QUERY, { isbn });
      return books(data).map(parseHardcoverBook).filter((c): c is MetadataCandidate => c !== undefined).slice(0, limit);
    }
    if (!query.title) return [];
    const q = [query.title, query.author].filter(Boolean).join(' ');
    const data = await graphql(ctx, SEARCH_QUERY, { q, limit });
    const results = isObject(data.search) ? data.search.results : undefined;
    // `results` is the search index's raw answer; some deployments hand it over as a JSON string.
    let parsed: unknown = results;
    if (typeof results === 'string') {
      try {
        parsed = JSON.parse(results);
      } catch {
        throw providerChanged(NAME, 'search results are not valid JSON');
      }
    }
    if (!isObject(parsed) || !Array.isArray(parsed.hits)) throw providerChanged(NAME, 'search results without "hits"');
    return parsed.hits
      .map((hit) => parseHardcoverDocument(isObject(hit) ? hit.document : undefined))
      .filter((c): c is MetadataCandidate => c !== undefined)
      .slice(0, limit);
  },
  async details(itemId: string, ctx: ProviderContext): Promise<MetadataCandidate | null> {
    const data = /^\d+$/.test(itemId) ? await graphql(ctx, BY_ID_QUERY, { id: Number(itemId) }) : await graphql(ctx, BY_SLUG_QUERY, { slug: itemId });
    const row = books(data)[0];
    return row === undefined ? null : (parseHardcoverBook(row) ?? null);
  },
};
