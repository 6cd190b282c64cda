// RanobeDB (https://ranobedb.org/api/docs/v0), the light-novel database, through its public JSON API: `/books?q=` to
// search by title, `/releases?q=<isbn13>` (release search matches ISBN-13s) then `/release/<id>` for the books an ISBN
// belongs to, and `/book/<id>` for a book with its titles, editions (staff), releases, publishers and series.
// Its ratings are out of 10; they are halved to the 0–5 scale, as Grimmory stores them.
import { ProviderError, providerChanged, type MetadataCandidate, type MetadataProvider, type ProviderContext, type ProviderQuery } from '../provider.ts';
import { asArray, asInt, asNumber, asString, cleanIsbn, compact, isObject, normalizeLanguage, uniqueStrings, type Json } from '../values.ts';

const NAME = 'RanobeDB';
const IMAGES = 'https://images.ranobedb.org';
const SITE = 'https://ranobedb.org';
const DETAILED_RESULTS = 5;

const objects = (v: unknown): Json[] => asArray(v).filter(isObject);

/** RanobeDB dates are integers yyyymmdd (99 for an unknown month or day). */
export function ranobeDate(raw: unknown): string | undefined {
  const n = asInt(raw);
  if (n === undefined || n <= 0) return undefined;
  const year = Math.floor(n / 10000);
  let month = Math.floor(n / 100) % 100;
  let day = n % 100;
  if (year < 1000) return undefined;
  if (month < 1 || month > 12) month = 1;
  if (day < 1 || day > 31) day = 1;
  const text = `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
  return Number.isNaN(new Date(`${text}T00:00:00Z`).getTime()) ? undefined : text;
}

/** "slice of life" → "Slice Of Life", as Grimmory capitalises genre tags. */
const capitalised = (tag: string): string => tag.replace(/\b(\p{L})(\p{L}*)/gu, (_m, first: string, rest: string) => first.toUpperCase() + rest.toLowerCase());

/** `/book/<id>` → a candidate; its English title, release and publisher are preferred when it has them. */
export function parseRanobeBook(body: unknown): MetadataCandidate | undefined {
  if (!isObject(body)) throw providerChanged(NAME, 'the book answer is not an object');
  const book = body.book;
  if (book === null || book === undefined) return undefined;
  if (!isObject(book)) throw providerChanged(NAME, 'the book answer has no "book" object');
  const id = asString(book.id);
  if (!id) throw providerChanged(NAME, 'the book has no id');
  const english = objects(book.titles).find((t) => asString(t.lang) === 'en' && t.official === true);
  let title = asString(english?.title) ?? asString(book.title) ?? asString(book.romaji);
  if (!title) throw providerChanged(NAME, 'the book has no title');
  const series = isObject(book.series) ? book.series : undefined;
  const seriesTitle = asString(series?.title);
  let subtitle: string | undefined;
  // "Series Title Volume 3: The Subtitle" → title before the colon, subtitle after it.
  if (seriesTitle && title.startsWith(seriesTitle)) {
    const colon = title.indexOf(':', seriesTitle.length);
    if (colon > 0) {
      subtitle = title.slice(colon + 1).trim() || undefined;
      title = title.slice(0, colon).trim();
    }
  }
  const releases = objects(book.releases);
  const englishRelease = releases.find((r) => asString(r.lang) === 'en');
  const publisher = objects(book.publishers).find((p) => asString(p.lang) === 'en' && asString(p.publisher_type) === 'publisher') ?? objects(book.publishers).find((p) => asString(p.publisher_type) === 'publisher');
  const seriesBooks = objects(series?.books);
  const position = seriesBooks.findIndex((b) => asString(b.id) === id);
  const authors = objects(book.editions)
    .flatMap((e) => objects(e.staff))
    .filter((s) => asString(s.role_type) === 'author')
    .map((s) => asString(s.romaji) ?? asString(s.name))
    .filter((n): n is string => n !== undefined);
  const genres = objects(series?.tags)
    .filter((t) => asString(t.ttype) === 'genre')
    .map((t) => asString(t.name))
    .filter((n): n is string => n !== undefined)
    .map(capitalised);
  const isbn = cleanIsbn(asString(englishRelease?.isbn13) ?? releases.map((r) => asString(r.isbn13)).find((i) => i !== undefined));
  const image = isObject(book.image) ? asString(book.image.filename) : undefined;
  const score = isObject(book.rating) ? asNumber(book.rating.score) : undefined;
  return compact<MetadataCandidate>({
    provider: 'Ranobedb',
    providerItemId: id,
    ranobedbId: id,
    title,
    subtitle,
    authors: uniqueStrings(authors),
    description: asString(book.description),
    publisher: asString(publisher?.name),
    publishedDate: ranobeDate(englishRelease?.release_date) ?? ranobeDate(book.c_release_date),
    language: normalizeLanguage(asString(englishRelease?.lang) ?? asString(book.lang)),
    pageCount: asInt(englishRelease?.pages),
    isbn13: isbn?.length === 13 ? isbn : undefined,
    seriesName: seriesTitle,
    seriesNumber: position >= 0 ? position + 1 : undefined,
    seriesTotal: seriesBooks.length > 0 ? seriesBooks.length : undefined,
    categories: uniqueStrings(genres),
    thumbnailUrl: image ? `${IMAGES}/${image}` : undefined,
    ranobedbRating: score !== undefined && score > 0 ? Math.round((score / 2) * 100) / 100 : undefined,
    externalUrl: `${SITE}/book/${id}`,
  });
}

/** `/books?q=` → the book ids in relevance order. */
export function parseRanobeSearch(body: unknown): string[] {
  if (!isObject(body) || !Array.isArray(body.books)) throw providerChanged(NAME, 'the search answer has no "books"');
  return objects(body.books).map((b) => asString(b.id)).filter((id): id is string => id !== undefined);
}

async function details(itemId: string, ctx: ProviderContext): Promise<MetadataCandidate | null> {
  const id = itemId.trim();
  if (!/^\d+$/.test(id)) throw new ProviderError(NAME, 'NOT_FOUND', `"${itemId}" is not a RanobeDB book id`);
  try {
    return parseRanobeBook(await ctx.getJson(`/book/${id}`)) ?? null;
  } catch (error) {
    if (error instanceof ProviderError && error.code === 'NOT_FOUND') return null;
    throw error;
  }
}

async function books(ids: readonly string[], ctx: ProviderContext): Promise<MetadataCandidate[]> {
  const out: MetadataCandidate[] = [];
  for (const id of ids) {
    const book = await details(id, ctx);
    if (book) out.push(book);
  }
  return out;
}

/** ISBN-10 → its ISBN-13 (978 prefix, check digit recomputed). */
export function isbn13Of(isbn: string): string {
  if (isbn.length === 13) return isbn;
  const core = `978${isbn.slice(0, 9)}`;
  const sum = [...core].reduce((acc, digit, i) => acc + Number(digit) * (i % 2 === 0 ? 1 : 3), 0);
  return `${core}${(10 - (sum % 10)) % 10}`;
}

async function byIsbn(raw: string, ctx: ProviderContext): Promise<MetadataCandidate[]> {
  // Release search matches ISBN-13s only.
  const isbn = isbn13Of(raw);
  const body = await ctx.getJson('/releases', { query: { q: isbn, limit: 5 } });
  if (!isObject(body) || !Array.isArray(body.releases)) throw providerChanged(NAME, 'the release search answer has no "releases"');
  const release = objects(body.releases).find((r) => cleanIsbn(asString(r.isbn13)) === isbn);
  const releaseId = asString(release?.id);
  if (!releaseId) return [];
  const full = await ctx.getJson(`/release/${releaseId}`);
  const bookIds = isObject(full) && isObject(full.release) ? objects(full.release.books).map((b) => asString(b.id)).filter((id): id is string => id !== undefined) : [];
  return books(bookIds.slice(0, 1), ctx);
}

export const ranobedbProvider: MetadataProvider = {
  id: 'Ranobedb',
  settingsKey: 'ranobedb',
  displayName: NAME,
  defaultBaseUrl: () => `${SITE}/api/v0`,
  // Grimmory keeps to two requests a second.
  minIntervalMs: 500,
  timeoutMs: 15_000,
  async search(query: ProviderQuery, ctx: ProviderContext): Promise<MetadataCandidate[]> {
    const known = query.knownIds?.ranobedbId;
    if (known && /^\d+$/.test(known.trim())) {
      const record = await details(known, ctx);
      if (record) return [record];
    }
    const isbn = cleanIsbn(query.isbn);
    if (isbn) return byIsbn(isbn, ctx);
    if (!query.title) return [];
    const limit = Math.min(Math.max(query.limit ?? 10, 1), DETAILED_RESULTS);
    const ids = parseRanobeSearch(await ctx.getJson('/books', { query: { q: query.title.trim(), limit } }));
    return books(ids.slice(0, limit), ctx);
  },
  details,
};
