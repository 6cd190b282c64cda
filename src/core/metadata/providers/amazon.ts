// Amazon has no public book API, so this reads its pages as a browser would: the search results page
// (`/s?k=<isbn or title and author>`) for item ids (ASINs), and each product page (`/dp/<ASIN>`) for the record and the
// reviews shown on it. The store's country comes from the `domain` setting; a `cookie` setting, when given, is sent so
// a signed-in session can get past robot checks.
import type { HTMLElement } from 'node-html-parser';
import { ProviderError, type CandidateReview, type MetadataCandidate, type MetadataProvider, type ProviderContext, type ProviderQuery } from '../provider.ts';
import { asString, cleanIsbn, compact, htmlToText, isObject, uniqueStrings } from '../values.ts';
import { pageOrNull, withDetails } from './page-lookups.ts';
import { attrOf, blockedOrChanged, cleanText, countOf, dayInstant, decimalOf, firstText, languageOf, pageDate, parsePage, searchWords, splitTitle, textOf, type Page } from './page-parsing.ts';

const NAME = 'Amazon';
/** Full records fetched per search (each is one more page); the rest of the results come from the search page alone. */
const DETAILED_RESULTS = 3;
const ASIN = /^[A-Z0-9]{10}$/;
const DOMAINS = new Set(['com', 'co.uk', 'de', 'fr', 'it', 'es', 'ca', 'com.au', 'co.jp', 'in', 'com.br', 'com.mx', 'nl', 'se', 'pl', 'ae', 'sa', 'cn', 'sg', 'tr', 'eg', 'com.be']);
const ACCEPT_LANGUAGE: Record<string, string> = {
  com: 'en-US,en;q=0.9', ca: 'en-US,en;q=0.9', 'co.uk': 'en-GB,en;q=0.9', 'com.au': 'en-GB,en;q=0.9', in: 'en-GB,en;q=0.9', sg: 'en-GB,en;q=0.9',
  de: 'en-GB,en;q=0.9,de;q=0.8', fr: 'en-GB,en;q=0.9,fr;q=0.8', it: 'en-GB,en;q=0.9,it;q=0.8', es: 'en-GB,en;q=0.9,es;q=0.8',
  'co.jp': 'en-GB,en;q=0.9,ja;q=0.8', 'com.br': 'en-GB,en;q=0.9,pt;q=0.8', 'com.mx': 'en-US,en;q=0.9,es;q=0.8', nl: 'en-GB,en;q=0.9,nl;q=0.8',
  se: 'en-GB,en;q=0.9,sv;q=0.8', pl: 'en-GB,en;q=0.9,pl;q=0.8', cn: 'zh-CN,zh;q=0.9', tr: 'en-GB,en;q=0.9,tr;q=0.8',
};
const BROWSER_AGENT = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/137.0.0.0 Safari/537.36';

export function amazonDomain(settings: Readonly<Record<string, unknown>>): string {
  const domain = asString(settings.domain)?.toLowerCase().replace(/^\./, '');
  return domain && DOMAINS.has(domain) ? domain : 'com';
}

function headers(ctx: ProviderContext): Record<string, string> {
  const cookie = asString(ctx.settings.cookie);
  return {
    'user-agent': BROWSER_AGENT,
    accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8',
    'accept-language': ACCEPT_LANGUAGE[amazonDomain(ctx.settings)] ?? 'en-US,en;q=0.9',
    ...(cookie ? { cookie } : {}),
  };
}

/** A thumbnail URL with Amazon's size/crop suffix (`._AC_UY218_`) removed: the full-size image. */
export function fullSizeImage(url: string | undefined): string | undefined {
  if (!url || !/^https?:\/\//.test(url)) return undefined;
  return url.replace(/\._[^/]*_(\.[a-z]+)$/i, '$1');
}

function asinFromHref(href: string | undefined): string | undefined {
  return href ? /\/(?:dp|gp\/product)\/([A-Z0-9]{10})/.exec(href)?.[1] : undefined;
}

const SKIPPED_TITLES = /\b(?:books? set|box set|collection set|summary & study guide)\b/i;

/** One search result; the print edition's ASIN is preferred over the item's own (often the Kindle edition). */
function parseSearchItem(item: HTMLElement, baseUrl: string): MetadataCandidate | undefined {
  const recipe = item.querySelector('[data-cy="title-recipe"]');
  const title = textOf(recipe?.querySelector('h2') ?? recipe) ?? undefined;
  if (!title || SKIPPED_TITLES.test(title) || /Collects books from/i.test(item.text)) return undefined;
  let asin: string | undefined;
  for (const link of item.querySelectorAll('a')) {
    const label = textOf(link) ?? '';
    if (/^(Paperback|Hardcover|Mass Market Paperback)$/i.test(label)) {
      asin = asinFromHref(link.getAttribute('href'));
      if (asin) break;
    }
  }
  const dataAsin = item.getAttribute('data-asin');
  asin ??= dataAsin && ASIN.test(dataAsin) ? dataAsin : undefined;
  if (!asin) return undefined;
  const authors = recipe
    ? recipe
        .querySelectorAll('a')
        .filter((a) => /\/(?:e|stores|author)\//.test(a.getAttribute('href') ?? '') || /field-author/.test(a.getAttribute('href') ?? ''))
        .map((a) => textOf(a))
        .filter((n): n is string => n !== undefined)
    : [];
  const rating = decimalOf(textOf(item.querySelector('i[class*="a-star"] .a-icon-alt')));
  const reviewCount = countOf(textOf(item.querySelector('a[href*="customerReviews"] span, [data-csa-c-content-id*="ratings-count"] span')));
  return compact<MetadataCandidate>({
    provider: 'Amazon',
    providerItemId: asin,
    asin,
    ...splitTitle(title),
    authors: uniqueStrings(authors),
    thumbnailUrl: fullSizeImage(attrOf(item.querySelector('img.s-image'), 'src')),
    amazonRating: rating,
    amazonReviewCount: reviewCount,
    externalUrl: `${baseUrl}/dp/${asin}`,
  });
}

/** The search results page → candidates in Amazon's order (sponsored duplicates and box sets dropped). */
export function parseAmazonSearch(html: string, baseUrl = 'https://www.amazon.com'): MetadataCandidate[] {
  const root = parsePage(html);
  const results = root.querySelector('[data-component-type="s-search-results"]');
  if (!results) throw blockedOrChanged(NAME, html, 'the search page has no result list');
  const seen = new Set<string>();
  const out: MetadataCandidate[] = [];
  for (const item of results.querySelectorAll('div[data-component-type="s-search-result"], div[role="listitem"][data-index]')) {
    const candidate = parseSearchItem(item, baseUrl);
    if (!candidate || seen.has(candidate.providerItemId)) continue;
    seen.add(candidate.providerItemId);
    out.push(candidate);
  }
  return out;
}

/** The value of a "Label : value" line of the product details list. */
function detailBullet(root: Page, label: RegExp): string | undefined {
  for (const li of root.querySelectorAll('#detailBullets_feature_div li, #detailBulletsWrapper_feature_div li')) {
    const bold = li.querySelector('.a-text-bold');
    const key = textOf(bold);
    if (key && label.test(key)) return textOf(bold?.nextElementSibling);
  }
  return undefined;
}

function rpiValue(root: Page, attribute: string): string | undefined {
  return textOf(root.querySelector(`#rpi-attribute-${attribute} .rpi-attribute-value span`) ?? root.querySelector(`#rpi-attribute-${attribute} .rpi-attribute-value`));
}

function authorsOf(root: Page): string[] {
  const byline = root.querySelector('#bylineInfo') ?? root.querySelector('#bylineInfo_feature_div');
  const names: string[] = [];
  for (const author of byline?.querySelectorAll('.author') ?? []) {
    const role = textOf(author.querySelector('.contribution'));
    // Illustrators, narrators and translators are listed in the byline too; a role-less entry is an author.
    if (role && !/author|autor|auteur|autore|著/i.test(role)) continue;
    const name = textOf(author.querySelector('a'));
    if (name) names.push(name);
  }
  return uniqueStrings(names);
}

function coverOf(root: Page): string | undefined {
  const image = root.querySelector('#landingImage') ?? root.querySelector('#imgBlkFront') ?? root.querySelector('#ebooksImgBlkFront');
  if (!image) return undefined;
  const hires = attrOf(image, 'data-old-hires');
  if (hires && /^https?:\/\//.test(hires)) return hires;
  const dynamic = attrOf(image, 'data-a-dynamic-image');
  if (dynamic) {
    try {
      const sizes = JSON.parse(dynamic) as unknown;
      if (isObject(sizes)) {
        // `{ "<url>": [width, height], ... }`: the widest.
        const best = Object.entries(sizes).sort((a, b) => (Array.isArray(b[1]) ? Number(b[1][0]) : 0) - (Array.isArray(a[1]) ? Number(a[1][0]) : 0))[0];
        if (best && /^https?:\/\//.test(best[0])) return best[0];
      }
    } catch {
      // fall back to src
    }
  }
  const src = attrOf(image, 'src');
  return src && /^https?:\/\//.test(src) ? src : undefined;
}

function seriesOf(root: Page): { seriesName?: string; seriesNumber?: number; seriesTotal?: number } {
  const name = textOf(root.querySelector('#rpi-attribute-book_details-series .rpi-attribute-value a span') ?? root.querySelector('#rpi-attribute-book_details-series .rpi-attribute-value'));
  const label = textOf(root.querySelector('#rpi-attribute-book_details-series .rpi-attribute-label span'));
  const m = label ? /(\d+(?:\.\d+)?)\D+(\d+)/.exec(label) : null;
  return compact({ seriesName: name, seriesNumber: m?.[1] ? Number(m[1]) : undefined, seriesTotal: m?.[2] ? Number(m[2]) : undefined });
}

/** "Mariner Books; Reprint edition (September 18, 2012)" → the publisher and the date. */
function publisherLine(line: string | undefined): { publisher?: string; date?: string } {
  if (!line) return {};
  const publisher = cleanText(line.split(';')[0]?.replace(/\(.*?\)/g, ''));
  const inParens = /\(([^)]*\d{4}[^)]*)\)/.exec(line)?.[1];
  return compact({ publisher, date: pageDate(inParens) });
}

const REVIEWED_IN = /(?:Reviewed in|Rezension aus|Beoordeeld in|Recensie uit|Commenté en|Recensito in|Revisado en)\s+(?:the\s+)?(.+?)\s+(?:on|vom|op|le|il|el)\s+(.+)$/i;

/** The reviews on the product page, in page order, those without a body skipped. */
export function parseAmazonReviews(root: Page): CandidateReview[] {
  const reviews: CandidateReview[] = [];
  for (const el of root.querySelectorAll('[data-hook="review"]')) {
    let body = textOf(el.querySelector('[data-hook="review-body"]'));
    if (!body) continue;
    body = body.replace(/\s*Read more\s*$/i, '').trim();
    const titleSpans = el.querySelectorAll('[data-hook="review-title"] span').map((s) => textOf(s)).filter((t): t is string => t !== undefined && !/out of \d stars/i.test(t));
    const ratingText = textOf(el.querySelector('[data-hook="review-star-rating"] .a-icon-alt, [data-hook="cmps-review-star-rating"] .a-icon-alt'));
    const dateLine = textOf(el.querySelector('[data-hook="review-date"]'));
    const where = dateLine ? REVIEWED_IN.exec(dateLine) : null;
    reviews.push(
      compact<CandidateReview>({
        metadataProvider: 'Amazon',
        reviewerName: textOf(el.querySelector('.a-profile-name')),
        title: titleSpans.at(-1),
        rating: decimalOf(ratingText),
        country: cleanText(where?.[1]),
        date: dayInstant(pageDate(where?.[2] ?? dateLine)),
        body,
      }),
    );
  }
  return reviews;
}

/** A product page → the full record, or a CodedError when the page is a robot check or no longer looks as expected. */
export function parseAmazonProduct(html: string, asin: string, baseUrl = 'https://www.amazon.com'): MetadataCandidate {
  const root = parsePage(html);
  const fullTitle = firstText(root, ['#productTitle', '#ebooksProductTitle', 'h1#title']);
  if (!fullTitle) throw blockedOrChanged(NAME, html, 'the product page has no title');
  const descriptionEl = root.querySelector('[data-a-expander-name="book_description_expander"] .a-expander-content') ?? root.querySelector('#bookDescription_feature_div noscript') ?? root.querySelector('#bookDescription_feature_div');
  const publisher = publisherLine(detailBullet(root, /^(Publisher|Herausgeber|Éditeur|Editore|Editorial|Uitgever|Wydawca|出版社|Editora)/i));
  const popover = root.querySelector('#acrPopover');
  const categories = root.querySelectorAll('.zg_hrsr .a-list-item a').map((a) => cleanText(textOf(a)?.replace(/\(Books\)|\(Kindle Store\)/g, '')));
  const reviews = parseAmazonReviews(root);
  return compact<MetadataCandidate>({
    provider: 'Amazon',
    providerItemId: asin,
    asin,
    ...splitTitle(fullTitle),
    authors: authorsOf(root),
    description: htmlToText(descriptionEl?.innerHTML),
    isbn13: cleanIsbn(rpiValue(root, 'book_details-isbn13') ?? detailBullet(root, /ISBN-13/)),
    isbn10: cleanIsbn(rpiValue(root, 'book_details-isbn10') ?? detailBullet(root, /ISBN-10/)),
    publisher: rpiValue(root, 'book_details-publisher') ?? publisher.publisher,
    publishedDate: pageDate(rpiValue(root, 'book_details-publication_date')) ?? publisher.date ?? pageDate(detailBullet(root, /Publication date|Erscheinungstermin|Date de publication/i)),
    language: languageOf(rpiValue(root, 'language') ?? detailBullet(root, /^(Language|Sprache|Langue|Lingua|Idioma)/i)),
    pageCount: countOf(rpiValue(root, 'book_details-fiona_pages') ?? rpiValue(root, 'book_details-ebook_pages') ?? detailBullet(root, /Print length|Paperback|Hardcover|Seitenzahl|pages/i)),
    ...seriesOf(root),
    categories: uniqueStrings(categories.filter((c): c is string => c !== undefined)),
    thumbnailUrl: coverOf(root),
    amazonRating: decimalOf(attrOf(popover, 'title') ?? textOf(popover?.querySelector('span.a-size-base.a-color-base, span.a-size-small.a-color-base'))),
    amazonReviewCount: countOf(textOf(root.querySelector('#acrCustomerReviewText'))),
    externalUrl: `${baseUrl}/dp/${asin}`,
    bookReviews: reviews,
  });
}

function asinOf(query: ProviderQuery): string | undefined {
  const raw = (query.knownIds?.asin ?? query.asin)?.trim().toUpperCase();
  return raw && ASIN.test(raw) ? raw : undefined;
}

async function details(asin: string, ctx: ProviderContext): Promise<MetadataCandidate | null> {
  const id = asin.trim().toUpperCase();
  if (!ASIN.test(id)) throw new ProviderError(NAME, 'NOT_FOUND', `"${asin}" is not an ASIN (10 letters and digits)`);
  return pageOrNull(async () => parseAmazonProduct(await ctx.getText(`/dp/${id}`, { headers: headers(ctx) }), id, ctx.baseUrl));
}

export const amazonProvider: MetadataProvider = {
  id: 'Amazon',
  settingsKey: 'amazon',
  displayName: NAME,
  defaultBaseUrl: (settings) => `https://www.amazon.${amazonDomain(settings)}`,
  // Amazon answers quick successions with robot checks; Grimmory waits 0.5–1.5 s between product pages.
  minIntervalMs: 1500,
  timeoutMs: 20_000,
  async search(query: ProviderQuery, ctx: ProviderContext): Promise<MetadataCandidate[]> {
    const limit = Math.min(Math.max(query.limit ?? 10, 1), 20);
    const isbn = cleanIsbn(query.isbn);
    const known = asinOf(query);
    if (known) {
      const record = await details(known, ctx);
      if (record) return [record];
    }
    const term = isbn ?? searchWords(query.title, query.author);
    if (!term) return [];
    const found = parseAmazonSearch(await ctx.getText('/s', { query: { k: term, i: 'stripbooks' }, headers: headers(ctx) }), ctx.baseUrl).slice(0, limit);
    return withDetails(found, DETAILED_RESULTS, (light) => details(light.providerItemId, ctx));
  },
  details,
};
