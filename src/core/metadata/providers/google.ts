// Google Books, volumes API (https://developers.google.com/books/docs/v1/reference/volumes): `GET /volumes?q=` to
// search (`isbn:` for ISBNs, `intitle:`/`inauthor:` otherwise) and `GET /volumes/{id}` for one volume. The API key is
// optional (anonymous calls share a small quota); `language` restricts results (langRestrict).
import { providerChanged, type MetadataCandidate, type MetadataProvider, type ProviderContext, type ProviderQuery } from '../provider.ts';
import { asArray, asInt, asNumber, asString, asStrings, cleanIsbn, compact, htmlToText, httpsUrl, isObject, normalizeLanguage, parseLooseDate, uniqueStrings, type Json } from '../values.ts';

const IMAGE_SIZES = ['extraLarge', 'large', 'medium', 'small', 'thumbnail', 'smallThumbnail'];

function coverUrl(links: unknown): string | undefined {
  if (!isObject(links)) return undefined;
  for (const size of IMAGE_SIZES) {
    const url = httpsUrl(links[size]);
    if (url) return url.replace(/&edge=curl/g, '');
  }
  return undefined;
}

function categories(raw: unknown): string[] {
  // Google nests categories as "Fiction / Fantasy / Epic".
  return uniqueStrings(asStrings(raw).flatMap((c) => c.split(' / ')).map((c) => c.trim()));
}

/** One `volumes` item → a candidate; undefined for items without a title. */
export function parseGoogleVolume(item: unknown): MetadataCandidate | undefined {
  if (!isObject(item)) return undefined;
  const id = asString(item.id);
  const info = item.volumeInfo;
  if (!id || !isObject(info)) return undefined;
  const title = asString(info.title);
  if (!title) return undefined;
  const ids: Record<string, string> = {};
  for (const entry of asArray(info.industryIdentifiers)) {
    if (!isObject(entry)) continue;
    const isbn = cleanIsbn(asString(entry.identifier));
    if (isbn && entry.type === 'ISBN_13') ids.isbn13 = isbn;
    if (isbn && entry.type === 'ISBN_10') ids.isbn10 = isbn;
  }
  const printed = asInt(info.printedPageCount);
  const pages = printed && printed > 0 ? printed : asInt(info.pageCount);
  const series = isObject(info.seriesInfo) ? info.seriesInfo : undefined;
  const seriesNumber = series ? asNumber(asArray(series.volumeSeries).map((v) => (isObject(v) ? v.orderNumber : undefined))[0]) ?? asNumber(series.bookDisplayNumber) : undefined;
  return compact<MetadataCandidate>({
    provider: 'Google',
    providerItemId: id,
    googleId: id,
    title,
    subtitle: asString(info.subtitle),
    authors: uniqueStrings(asStrings(info.authors)),
    publisher: asString(info.publisher),
    publishedDate: parseLooseDate(info.publishedDate),
    description: htmlToText(info.description),
    isbn13: ids.isbn13,
    isbn10: ids.isbn10,
    pageCount: pages && pages > 0 ? pages : undefined,
    categories: categories(info.categories),
    language: normalizeLanguage(info.language),
    thumbnailUrl: coverUrl(info.imageLinks),
    externalUrl: httpsUrl(info.canonicalVolumeLink) ?? httpsUrl(info.infoLink),
    seriesName: series ? asString(series.shortSeriesBookTitle) : undefined,
    seriesNumber,
  });
}

export function parseGoogleVolumes(body: unknown): MetadataCandidate[] {
  if (!isObject(body)) throw providerChanged('Google Books', 'the answer is not an object');
  if (body.items === undefined) return [];
  if (!Array.isArray(body.items)) throw providerChanged('Google Books', '"items" is not a list');
  return body.items.map(parseGoogleVolume).filter((c): c is MetadataCandidate => c !== undefined);
}

/** Strips the punctuation Google's query syntax would misread. */
function term(text: string): string {
  return text.replace(/[.,\-[\]{}()!@#$%^&*_=+|~`<>?/";:]/g, ' ').replace(/\s+/g, ' ').trim();
}

function commonParams(ctx: ProviderContext): Record<string, string | undefined> {
  return { key: asString(ctx.settings.apiKey), langRestrict: asString(ctx.settings.language) };
}

export const googleProvider: MetadataProvider = {
  id: 'Google',
  settingsKey: 'google',
  displayName: 'Google Books',
  defaultBaseUrl: () => 'https://www.googleapis.com/books/v1',
  // Anonymous quota is small; one request a second keeps a library refresh inside it.
  minIntervalMs: 1000,
  timeoutMs: 15_000,
  async search(query: ProviderQuery, ctx: ProviderContext): Promise<MetadataCandidate[]> {
    const limit = Math.min(Math.max(query.limit ?? 10, 1), 40);
    const isbn = cleanIsbn(query.isbn);
    let q: string | undefined;
    if (isbn) q = `isbn:${isbn}`;
    else if (query.title) q = `intitle:${term(query.title)}${query.author ? ` inauthor:${term(query.author)}` : ''}`;
    if (!q) return [];
    const body = await ctx.getJson('/volumes', { query: { q, maxResults: isbn ? Math.min(limit, 5) : limit, printType: 'books', ...commonParams(ctx) } });
    return parseGoogleVolumes(body).slice(0, limit);
  },
  async details(itemId: string, ctx: ProviderContext): Promise<MetadataCandidate | null> {
    const body = (await ctx.getJson(`/volumes/${encodeURIComponent(itemId)}`, { query: commonParams(ctx) })) as Json;
    const candidate = parseGoogleVolume(body);
    if (!candidate) throw providerChanged('Google Books', 'the volume has no title');
    return candidate;
  },
};
