// Audible's public catalog API (`https://api.audible.<domain>/1.0/catalog/products`), the JSON its apps read: keyword
// search, and a product by ASIN with the response groups that carry contributors (authors and narrators), series,
// rating, categories, runtime and cover. The store's country comes from the `domain` setting. Audible lists no ISBNs,
// so an ISBN-only query finds nothing here and the title search decides.
import { ProviderError, providerChanged, type MetadataCandidate, type MetadataProvider, type ProviderContext, type ProviderQuery } from '../provider.ts';
import { asArray, asInt, asNumber, asString, cleanIsbn, compact, htmlToText, isObject, parseLooseDate, uniqueStrings, type Json } from '../values.ts';
import { languageOf, searchWords } from './page-parsing.ts';

const NAME = 'Audible';
const DOMAINS = new Set(['com', 'co.uk', 'de', 'fr', 'it', 'es', 'ca', 'com.au', 'co.jp', 'in']);
const RESPONSE_GROUPS = ['contributors', 'media', 'product_attrs', 'product_desc', 'product_extended_attrs', 'series', 'rating', 'category_ladders'].join(',');
const IMAGE_SIZES = '500,1000';
const ASIN = /^[A-Z0-9]{10}$/;

/** What a candidate from Audible carries beyond MetadataCandidate: the runtime, as BookMetadata.audiobookMetadata has it. */
export interface AudibleCandidate extends MetadataCandidate {
  audiobookMetadata?: { durationSeconds?: number };
}

export function audibleDomain(settings: Readonly<Record<string, unknown>>): string {
  const domain = asString(settings.domain)?.toLowerCase().replace(/^\./, '');
  return domain && DOMAINS.has(domain) ? domain : 'com';
}

const names = (list: unknown): string[] => asArray(list).map((c) => (isObject(c) ? asString(c.name) : undefined)).filter((n): n is string => n !== undefined);

/** One catalog product → a candidate; undefined for podcasts and records without a title (unknown ASINs). */
export function parseAudibleProduct(product: unknown, storeUrl = 'https://www.audible.com'): AudibleCandidate | undefined {
  if (!isObject(product)) return undefined;
  const asin = asString(product.asin);
  const title = asString(product.title);
  if (!asin || !title || /podcast/i.test(asString(product.content_type) ?? '') || /podcast/i.test(asString(product.content_delivery_type) ?? '')) return undefined;
  const series = asArray(product.series).find(isObject) as Json | undefined;
  const rating = isObject(product.rating) ? product.rating : {};
  const overall = isObject(rating.overall_distribution) ? rating.overall_distribution : {};
  const ladder = asArray(product.category_ladders).find(isObject) as Json | undefined;
  const images = isObject(product.product_images) ? product.product_images : {};
  const minutes = asInt(product.runtime_length_min);
  const narrators = uniqueStrings(names(product.narrators));
  const format = asString(product.format_type)?.toLowerCase();
  return compact<AudibleCandidate>({
    provider: 'Audible',
    providerItemId: asin,
    audibleId: asin,
    asin,
    title,
    subtitle: asString(product.subtitle),
    authors: uniqueStrings(names(product.authors)),
    narrator: narrators.length > 0 ? narrators.join(', ') : undefined,
    abridged: format ? format !== 'unabridged' : undefined,
    description: htmlToText(product.publisher_summary) ?? htmlToText(product.merchandising_summary),
    publisher: asString(product.publisher_name),
    publishedDate: parseLooseDate(product.release_date) ?? parseLooseDate(product.issue_date),
    language: languageOf(asString(product.language)),
    seriesName: asString(series?.title),
    seriesNumber: asNumber(series?.sequence),
    categories: uniqueStrings(names(ladder?.ladder)),
    thumbnailUrl: asString(images['1000']) ?? asString(images['500']) ?? Object.values(images).map(asString).find((u) => u !== undefined),
    audibleRating: asNumber(overall.average_rating),
    audibleReviewCount: asInt(rating.num_reviews),
    externalUrl: `${storeUrl}/pd/${asin}`,
    audiobookMetadata: minutes !== undefined ? { durationSeconds: minutes * 60 } : undefined,
  });
}

export function parseAudibleSearch(body: unknown, storeUrl?: string): AudibleCandidate[] {
  if (!isObject(body) || !Array.isArray(body.products)) throw providerChanged(NAME, 'the catalog answer has no "products"');
  return body.products.map((p) => parseAudibleProduct(p, storeUrl)).filter((c): c is AudibleCandidate => c !== undefined);
}

function storeUrl(ctx: ProviderContext): string {
  return `https://www.audible.${audibleDomain(ctx.settings)}`;
}

async function details(itemId: string, ctx: ProviderContext): Promise<MetadataCandidate | null> {
  const asin = itemId.trim().toUpperCase();
  if (!ASIN.test(asin)) throw new ProviderError(NAME, 'NOT_FOUND', `"${itemId}" is not an ASIN (10 letters and digits)`);
  let body: unknown;
  try {
    body = await ctx.getJson(`/1.0/catalog/products/${asin}`, { query: { response_groups: RESPONSE_GROUPS, image_sizes: IMAGE_SIZES } });
  } catch (error) {
    if (error instanceof ProviderError && error.code === 'NOT_FOUND') return null;
    throw error;
  }
  if (!isObject(body) || !isObject(body.product)) throw providerChanged(NAME, 'the product answer has no "product"');
  // An unknown ASIN comes back as a product with nothing but its asin.
  return parseAudibleProduct(body.product, storeUrl(ctx)) ?? null;
}

export const audibleProvider: MetadataProvider = {
  id: 'Audible',
  settingsKey: 'audible',
  displayName: NAME,
  defaultBaseUrl: (settings) => `https://api.audible.${audibleDomain(settings)}`,
  minIntervalMs: 500,
  timeoutMs: 15_000,
  async search(query: ProviderQuery, ctx: ProviderContext): Promise<MetadataCandidate[]> {
    const known = (query.knownIds?.audibleId ?? query.asin)?.trim().toUpperCase();
    if (known && ASIN.test(known)) {
      const record = await details(known, ctx);
      if (record) return [record];
    }
    // The catalog has no ISBNs: the ISBN round finds nothing, the title round that follows decides.
    if (cleanIsbn(query.isbn) || !query.title) return [];
    const keywords = searchWords(query.title, query.author);
    if (!keywords) return [];
    const limit = Math.min(Math.max(query.limit ?? 10, 1), 50);
    const body = await ctx.getJson('/1.0/catalog/products', {
      query: { keywords, num_results: limit, products_sort_by: 'Relevance', response_groups: RESPONSE_GROUPS, image_sizes: IMAGE_SIZES },
    });
    return parseAudibleSearch(body, storeUrl(ctx)).slice(0, limit);
  },
  details,
};
