// Goodreads closed its API to new users, so this uses what its site serves: `/book/isbn/<isbn>` (redirects to the book
// page), the search box's JSON (`/book/auto_complete?format=json&q=`), and the book page (`/book/show/<id>`), whose
// embedded Next.js data (`<script id="__NEXT_DATA__">`) holds the book, its work, contributors, series, genres and the
// first reviews as an Apollo cache of records that point at each other with `__ref`.
import { ProviderError, providerChanged, type CandidateReview, type MetadataCandidate, type MetadataProvider, type ProviderContext, type ProviderQuery } from '../provider.ts';
import { asArray, asInt, asNumber, asString, cleanIsbn, compact, htmlToText, isObject, uniqueStrings, type Json } from '../values.ts';
import { isbnByRedirect, pageOrNull, withDetails } from './page-lookups.ts';
import { blockedOrChanged, epochInstant, languageOf, parsePage, splitTitle } from './page-parsing.ts';

const NAME = 'Goodreads';
const DETAILED_RESULTS = 3;
const HEADERS = { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8', 'accept-language': 'en-US,en;q=0.9' };
const BOOK_PATH = /\/book\/show\/(\d+)/;

/** A Goodreads cover URL with its size suffix (`._SX50_`, `._SY75_`) removed: the full-size image. */
export function fullSizeCover(url: string | undefined): string | undefined {
  if (!url || !/^https?:\/\//.test(url)) return undefined;
  return url.replace(/\._S[XY]\d+_(\.[a-z]+)$/i, '$1');
}

/** The search box's JSON → light candidates (no description, no ISBNs). */
export function parseGoodreadsAutocomplete(body: unknown, baseUrl = 'https://www.goodreads.com'): MetadataCandidate[] {
  if (!Array.isArray(body)) throw providerChanged(NAME, 'the search answer is not a list');
  const out: MetadataCandidate[] = [];
  for (const entry of body) {
    if (!isObject(entry)) continue;
    const id = asString(entry.bookId);
    const title = asString(entry.bookTitleBare) ?? asString(entry.title);
    if (!id || !/^\d+$/.test(id) || !title) continue;
    out.push(
      compact<MetadataCandidate>({
        provider: 'GoodReads',
        providerItemId: id,
        goodreadsId: id,
        ...splitTitle(title),
        authors: isObject(entry.author) && asString(entry.author.name) ? [asString(entry.author.name) as string] : [],
        pageCount: asInt(entry.numPages),
        thumbnailUrl: fullSizeCover(asString(entry.imageUrl)),
        goodreadsRating: asNumber(entry.avgRating),
        goodreadsReviewCount: asInt(entry.ratingsCount),
        externalUrl: `${baseUrl}${asString(entry.bookUrl) ?? `/book/show/${id}`}`,
      }),
    );
  }
  return out;
}

function nextData(html: string): Json {
  const script = parsePage(html).querySelector('script#__NEXT_DATA__');
  if (!script) throw blockedOrChanged(NAME, html, 'the book page has no embedded book data');
  try {
    const data = JSON.parse(script.rawText) as unknown;
    if (isObject(data)) return data;
  } catch {
    // reported below
  }
  throw providerChanged(NAME, 'the embedded book data is not valid JSON');
}

function apolloStateOf(data: Json): Json {
  const props = isObject(data.props) ? data.props : {};
  const pageProps = isObject(props.pageProps) ? props.pageProps : {};
  if (!isObject(pageProps.apolloState)) throw providerChanged(NAME, 'the embedded book data has no Apollo state');
  return pageProps.apolloState;
}

/** The book record of the page: the one the root query fetched, else the one with the page's id. */
function bookRecord(state: Json, id: string): Json | undefined {
  const root = isObject(state.ROOT_QUERY) ? state.ROOT_QUERY : {};
  for (const [key, value] of Object.entries(root)) {
    if (key.startsWith('getBookByLegacyId') && isObject(value) && typeof value.__ref === 'string') {
      const book = state[value.__ref];
      if (isObject(book)) return book;
    }
  }
  const books = Object.entries(state).filter(([key, v]) => key.startsWith('Book:') && isObject(v)).map(([, v]) => v as Json);
  return books.find((b) => String(b.legacyId) === id) ?? books.find((b) => asString(b.title) !== undefined);
}

export function parseGoodreadsBookPage(html: string, id: string, baseUrl = 'https://www.goodreads.com'): MetadataCandidate {
  const state = apolloStateOf(nextData(html));
  const deref = (v: unknown): Json | undefined => {
    if (isObject(v) && typeof v.__ref === 'string') {
      const target = state[v.__ref];
      return isObject(target) ? target : undefined;
    }
    return isObject(v) ? v : undefined;
  };
  const book = bookRecord(state, id);
  if (!book || !asString(book.title)) throw providerChanged(NAME, 'the embedded book data has no book with a title');
  const work = deref(book.work) ?? {};
  const stats = isObject(work.stats) ? work.stats : {};
  const details = isObject(book.details) ? book.details : {};

  const primary = deref(book.primaryContributorEdge);
  const secondary = asArray(book.secondaryContributorEdges).map(deref).filter((e): e is Json => e !== undefined);
  const authors = [primary, ...secondary.filter((e) => !asString(e.role) || /author/i.test(asString(e.role) ?? ''))]
    .map((edge) => asString(deref(edge?.node)?.name))
    .filter((n): n is string => n !== undefined);

  const seriesEdge = deref(asArray(book.bookSeries)[0]);
  const series = deref(seriesEdge?.series);
  const position = asNumber(seriesEdge?.userPosition);

  const genres = asArray(book.bookGenres).map((g) => asString(deref(deref(g)?.genre)?.name)).filter((n): n is string => n !== undefined);
  const isbn13 = cleanIsbn(asString(details.isbn13));
  const isbn10 = cleanIsbn(asString(details.isbn));
  const publicationTime = epochInstant(details.publicationTime);

  return compact<MetadataCandidate>({
    provider: 'GoodReads',
    providerItemId: id,
    goodreadsId: id,
    ...splitTitle(asString(book.title)),
    authors: uniqueStrings(authors),
    description: htmlToText(book.description),
    seriesName: asString(series?.title),
    seriesNumber: position,
    categories: uniqueStrings(genres),
    pageCount: asInt(details.numPages),
    publishedDate: publicationTime?.slice(0, 10),
    publisher: asString(details.publisher),
    isbn13: isbn13?.length === 13 ? isbn13 : undefined,
    isbn10: isbn10?.length === 10 ? isbn10 : undefined,
    asin: asString(details.asin),
    language: languageOf(asString(deref(details.language)?.name)),
    thumbnailUrl: asString(book.imageUrl),
    goodreadsRating: asNumber(stats.averageRating),
    goodreadsReviewCount: asInt(stats.ratingsCount),
    externalUrl: asString(book.webUrl) ?? `${baseUrl}/book/show/${id}`,
    bookReviews: parseGoodreadsReviews(state, deref),
  });
}

/** The reviews the page carries (the first page of the work's reviews), those without text skipped. */
function parseGoodreadsReviews(state: Json, deref: (v: unknown) => Json | undefined): CandidateReview[] {
  const reviews: CandidateReview[] = [];
  for (const [key, value] of Object.entries(state)) {
    if (!key.startsWith('Review:') || !isObject(value)) continue;
    const body = htmlToText(value.text);
    if (!body) continue;
    const creator = deref(value.creator);
    const rating = asNumber(value.rating);
    reviews.push(
      compact<CandidateReview>({
        metadataProvider: 'GoodReads',
        reviewerName: asString(creator?.name),
        rating: rating !== undefined && rating > 0 ? rating : undefined,
        date: epochInstant(value.updatedAt) ?? epochInstant(value.createdAt),
        body,
        spoiler: value.spoilerStatus === true,
        followersCount: asInt(creator?.followersCount),
        textReviewsCount: asInt(creator?.textReviewsCount),
      }),
    );
  }
  return reviews;
}

async function details(itemId: string, ctx: ProviderContext): Promise<MetadataCandidate | null> {
  // Ids are stored as "123", "123-the-title" or "123.The_Title"; the number is what the site needs.
  const id = /^(\d+)/.exec(itemId.trim())?.[1];
  if (!id) throw new ProviderError(NAME, 'NOT_FOUND', `"${itemId}" is not a Goodreads book id`);
  return pageOrNull(async () => parseGoodreadsBookPage(await ctx.getText(`/book/show/${id}`, { headers: HEADERS }), id, ctx.baseUrl));
}

function byIsbn(isbn: string, ctx: ProviderContext): Promise<MetadataCandidate[]> {
  // An unknown ISBN lands on the search page instead of a book.
  return isbnByRedirect(ctx, NAME, { path: `/book/isbn/${isbn}`, headers: HEADERS, bookPath: BOOK_PATH }, (html, id) => parseGoodreadsBookPage(html, id, ctx.baseUrl));
}

export const goodreadsProvider: MetadataProvider = {
  id: 'GoodReads',
  settingsKey: 'goodReads',
  displayName: NAME,
  defaultBaseUrl: () => 'https://www.goodreads.com',
  // A page a second and a half, as Grimmory spaces its book pages.
  minIntervalMs: 1500,
  timeoutMs: 20_000,
  async search(query: ProviderQuery, ctx: ProviderContext): Promise<MetadataCandidate[]> {
    const known = query.knownIds?.goodreadsId;
    if (known) {
      const record = await details(known, ctx);
      if (record) return [record];
    }
    const isbn = cleanIsbn(query.isbn);
    if (isbn) return byIsbn(isbn, ctx);
    if (!query.title) return [];
    const limit = Math.min(Math.max(query.limit ?? 10, 1), 20);
    // The search box matches titles; adding the author makes it worse, so the author only orders the results.
    let found = parseGoodreadsAutocomplete(await ctx.getJson('/book/auto_complete', { query: { format: 'json', q: query.title }, headers: { 'accept-language': HEADERS['accept-language'] } }), ctx.baseUrl);
    const author = query.author?.trim().toLowerCase();
    if (author) found = [...found.filter((c) => c.authors?.some((a) => a.toLowerCase() === author)), ...found.filter((c) => !c.authors?.some((a) => a.toLowerCase() === author))];
    return withDetails(found.slice(0, limit), DETAILED_RESULTS, (light) => details(light.providerItemId, ctx));
  },
  details,
};
