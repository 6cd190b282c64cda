// Lubimyczytać.pl, the Polish readers' site, through its pages: the book search (`/szukaj/ksiazki?phrase=`, which
// also matches ISBNs) and the book page (`/ksiazka/<id>/<slug>`), read from its schema.org JSON-LD (authors, ISBN,
// pages, dates, rating, reviews), its Open Graph `books:` tags and a few elements (series "Cykl", publisher, tags).
// Ratings there are out of 10; they are halved to the 0–5 scale, as Grimmory stores them.
import { ProviderError, type CandidateReview, type MetadataCandidate, type MetadataProvider, type ProviderContext, type ProviderQuery } from '../provider.ts';
import { asArray, asInt, asString, cleanIsbn, compact, htmlToText, isObject, uniqueStrings, type Json } from '../values.ts';
import { pageOrNull, withDetails } from './page-lookups.ts';
import { attrOf, blockedOrChanged, cleanText, decimalOf, jsonLdObjects, languageOf, pageDate, parsePage, textOf, type Page } from './page-parsing.ts';

const NAME = 'Lubimyczytac';
const SITE = 'https://lubimyczytac.pl';
const DETAILED_RESULTS = 3;
const HEADERS = { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8', 'accept-language': 'pl-PL,pl;q=0.9,en;q=0.8' };
const BOOK_ID = /\/ksiazka\/(\d+)/;

const halved = (n: number | undefined): number | undefined => (n === undefined || n <= 0 ? undefined : Math.round((n / 2) * 100) / 100);

function absolute(href: string | undefined, baseUrl: string): string | undefined {
  if (!href) return undefined;
  if (/^https?:\/\//.test(href)) return href;
  return href.startsWith('/') ? `${baseUrl}${href}` : undefined;
}

/** The search page → light candidates; the promoted books outside the result list are left out. */
export function parseLubimyczytacSearch(html: string, baseUrl = SITE): MetadataCandidate[] {
  const root = parsePage(html);
  const list = root.querySelector('#ksiazkiPaginator');
  if (!list) {
    // A search without hits has no result list but still the site's search form; anything else is not the site.
    if (root.querySelector('input[name="phrase"]')) return [];
    throw blockedOrChanged(NAME, html, 'the search page has no result list');
  }
  const out: MetadataCandidate[] = [];
  for (const card of list.querySelectorAll('.book-card')) {
    const link = card.querySelector('a.book-card__title');
    const href = link?.getAttribute('href');
    const id = href ? BOOK_ID.exec(href)?.[1] : undefined;
    const title = textOf(link);
    if (!id || !title || !href) continue;
    out.push(
      compact<MetadataCandidate>({
        provider: 'Lubimyczytac',
        providerItemId: id,
        lubimyczytacId: id,
        title,
        authors: uniqueStrings(card.querySelectorAll('.book-card__author a').map((a) => textOf(a)).filter((n): n is string => n !== undefined)),
        thumbnailUrl: absolute(attrOf(card.querySelector('img.book-card__cover-image'), 'src'), baseUrl),
        lubimyczytacRating: halved(decimalOf(textOf(card.querySelector('.rating__avarage')))),
        externalUrl: absolute(href, baseUrl),
      }),
    );
  }
  return out;
}

function bookLd(root: Page): Json | undefined {
  return jsonLdObjects(root).find((o) => o['@type'] === 'Book');
}

function personNames(raw: unknown): string[] {
  const list = Array.isArray(raw) ? raw : [raw];
  return list.map((p) => (isObject(p) ? asString(p.name) : asString(p))).filter((n): n is string => n !== undefined);
}

/** "Wiedźmin (tom 2)" → series name and number. */
export function parseCykl(text: string | undefined): { seriesName?: string; seriesNumber?: number } {
  const raw = cleanText(text?.replace(/^Cykl:\s*/i, ''));
  if (!raw) return {};
  const m = /\(tom\s+(\d+(?:[.,]\d+)?)[^)]*\)/i.exec(raw);
  if (!m?.[1]) return { seriesName: raw };
  return { seriesName: raw.replace(m[0], '').trim(), seriesNumber: Number(m[1].replace(',', '.')) };
}

function reviewsOf(book: Json | undefined): CandidateReview[] {
  const reviews: CandidateReview[] = [];
  for (const review of asArray(book?.review)) {
    if (!isObject(review)) continue;
    const body = htmlToText(review.reviewBody);
    if (!body) continue;
    const rating = isObject(review.reviewRating) ? decimalOf(asString(review.reviewRating.ratingValue)) : undefined;
    const day = pageDate(asString(review.datePublished));
    reviews.push(
      compact<CandidateReview>({
        metadataProvider: 'Lubimyczytac',
        reviewerName: personNames(review.author)[0],
        rating: halved(rating),
        date: day ? `${day}T00:00:00Z` : undefined,
        body,
      }),
    );
  }
  return reviews;
}

export function parseLubimyczytacBook(html: string, id: string, baseUrl = SITE): MetadataCandidate {
  const root = parsePage(html);
  const book = bookLd(root);
  const title = textOf(root.querySelector('h1.book__title')) ?? asString(book?.name);
  if (!title || (!book && !root.querySelector('#book-description'))) throw blockedOrChanged(NAME, html, 'the book page has neither its title nor its book data');
  const meta = (property: string): string | undefined => attrOf(root.querySelector(`meta[property="${property}"]`), 'content');
  const isbn = cleanIsbn(meta('books:isbn') ?? asString(book?.isbn));
  const aggregate = isObject(book?.aggregateRating) ? book.aggregateRating : {};
  const genre = asString(book?.genre);
  const category = textOf(root.querySelector('.breadcrumbs a[href*="/ksiazki/k/"]')) ?? (genre ? genre.split('/').pop() : undefined);
  const cykl = root.querySelectorAll('span').find((s) => /^\s*Cykl:/.test(s.text));
  return compact<MetadataCandidate>({
    provider: 'Lubimyczytac',
    providerItemId: id,
    lubimyczytacId: id,
    title,
    authors: uniqueStrings(personNames(book?.author).length > 0 ? personNames(book?.author) : [meta('books:author')].filter((n): n is string => n !== undefined)),
    publisher: textOf(root.querySelector('a[href*="/wydawnictwo/"]')),
    publishedDate: pageDate(asString(book?.datePublished)),
    pageCount: asInt(book?.numberOfPages),
    language: languageOf(asString(book?.inLanguage)),
    isbn13: isbn?.length === 13 ? isbn : undefined,
    isbn10: isbn?.length === 10 ? isbn : undefined,
    description: htmlToText(root.querySelector('#book-description')?.innerHTML),
    ...parseCykl(textOf(cykl?.querySelector('a')) ?? textOf(cykl)),
    categories: category ? [category] : [],
    tags: uniqueStrings(root.querySelectorAll('a[href*="/ksiazki/t/"]').map((a) => textOf(a)).filter((t): t is string => t !== undefined)),
    thumbnailUrl: meta('og:image') ?? asString(book?.image) ?? absolute(attrOf(root.querySelector('.book-cover img'), 'src'), baseUrl),
    lubimyczytacRating: halved(decimalOf(meta('books:rating:value') ?? asString(aggregate.ratingValue))),
    externalUrl: asString(book?.url) ?? `${baseUrl}/ksiazka/${id}`,
    bookReviews: reviewsOf(book),
  });
}

async function details(itemId: string, ctx: ProviderContext): Promise<MetadataCandidate | null> {
  const id = /(\d+)/.exec(itemId)?.[1];
  if (!id) throw new ProviderError(NAME, 'NOT_FOUND', `"${itemId}" is not a Lubimyczytac book id`);
  // The slug after the id is cosmetic; the site answers the bare id.
  return pageOrNull(async () => parseLubimyczytacBook(await ctx.getText(`/ksiazka/${id}`, { headers: HEADERS }), id, ctx.baseUrl));
}

function detailed(found: MetadataCandidate[], ctx: ProviderContext, count: number): Promise<MetadataCandidate[]> {
  return withDetails(found, count, (light) => details(light.providerItemId, ctx));
}

export const lubimyczytacProvider: MetadataProvider = {
  id: 'Lubimyczytac',
  settingsKey: 'lubimyczytac',
  displayName: NAME,
  defaultBaseUrl: () => SITE,
  minIntervalMs: 1000,
  timeoutMs: 15_000,
  async search(query: ProviderQuery, ctx: ProviderContext): Promise<MetadataCandidate[]> {
    const known = query.knownIds?.lubimyczytacId;
    if (known) {
      const record = await details(known, ctx);
      if (record) return [record];
    }
    const limit = Math.min(Math.max(query.limit ?? 10, 1), 20);
    const isbn = cleanIsbn(query.isbn);
    if (isbn) {
      const found = parseLubimyczytacSearch(await ctx.getText('/szukaj/ksiazki', { query: { phrase: isbn }, headers: HEADERS }), ctx.baseUrl);
      // The phrase search also matches text; only editions that carry this ISBN count.
      const records = await detailed(found.slice(0, DETAILED_RESULTS), ctx, DETAILED_RESULTS);
      return records.filter((r) => r.isbn13 === isbn || r.isbn10 === isbn).slice(0, limit);
    }
    if (!query.title) return [];
    const found = parseLubimyczytacSearch(await ctx.getText('/szukaj/ksiazki', { query: { phrase: query.title.trim(), author: query.author?.trim() || undefined }, headers: HEADERS }), ctx.baseUrl);
    return detailed(found.slice(0, limit), ctx, DETAILED_RESULTS);
  },
  details,
};
