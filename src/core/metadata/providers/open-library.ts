// Open Library (https://openlibrary.org/developers/api): the Books API by ISBN (`/isbn/{isbn}.json`, an edition, with
// its authors and work fetched for names and the description) and the Search API (`/search.json?title=&author=`).
// Grimmory has no Open Library provider; Bindery calls it `OpenLibrary` on the wire (see ../provider.ts).
import { ProviderError, providerChanged, type MetadataCandidate, type MetadataProvider, type ProviderContext, type ProviderQuery } from '../provider.ts';
import { asArray, asInt, asNumber, asString, asStrings, cleanIsbn, compact, isObject, normalizeLanguage, parseLooseDate, uniqueStrings, type Json } from '../values.ts';

const NAME = 'Open Library';
const SITE = 'https://openlibrary.org';
const COVERS = 'https://covers.openlibrary.org';
const SEARCH_FIELDS = [
  'key', 'title', 'subtitle', 'author_name', 'first_publish_year', 'publish_date', 'publisher', 'isbn', 'number_of_pages_median',
  'cover_i', 'language', 'subject', 'id_goodreads', 'id_amazon', 'edition_key', 'ratings_average', 'ratings_count',
].join(',');
/** Authors looked up per edition; an edition rarely lists more that matter. */
const MAX_AUTHORS = 4;

const olid = (key: unknown): string | undefined => asString(key)?.split('/').pop();

function coverById(id: unknown): string | undefined {
  const n = asInt(id);
  return n !== undefined && n > 0 ? `${COVERS}/b/id/${n}-L.jpg` : undefined;
}

/** `description` is either a string or `{ type: '/type/text', value }`. */
function textValue(raw: unknown): string | undefined {
  if (isObject(raw)) return asString(raw.value);
  return asString(raw);
}

/** "Harry Potter #1", "Discworld ; 3", "Foundation, no. 2" → name and number. */
export function parseSeries(raw: string): { seriesName: string; seriesNumber?: number } {
  const m = /^(.*?)[\s,]*(?:#|;|\bno\.|\bvol\.|\bbook)\s*(\d+(?:\.\d+)?)\s*\)?$/i.exec(raw);
  if (m?.[1]) return { seriesName: m[1].replace(/[(,\s]+$/, '').trim(), seriesNumber: Number(m[2]) };
  return { seriesName: raw.replace(/^\(|\)$/g, '').trim() };
}

/** One `search.json` doc → a candidate. */
export function parseOpenLibraryDoc(doc: unknown): MetadataCandidate | undefined {
  if (!isObject(doc)) return undefined;
  const work = olid(doc.key);
  const title = asString(doc.title);
  if (!work || !title) return undefined;
  const isbns = asStrings(doc.isbn).map(cleanIsbn).filter((i): i is string => i !== undefined);
  const year = asInt(doc.first_publish_year);
  return compact<MetadataCandidate>({
    provider: 'OpenLibrary',
    providerItemId: work,
    title,
    subtitle: asString(doc.subtitle),
    authors: uniqueStrings(asStrings(doc.author_name)),
    publisher: asStrings(doc.publisher)[0],
    publishedDate: year !== undefined ? `${String(year).padStart(4, '0')}-01-01` : undefined,
    isbn13: isbns.find((i) => i.length === 13),
    isbn10: isbns.find((i) => i.length === 10),
    pageCount: asInt(doc.number_of_pages_median),
    language: normalizeLanguage(asStrings(doc.language)[0]),
    categories: uniqueStrings(asStrings(doc.subject).slice(0, 10)),
    goodreadsId: asStrings(doc.id_goodreads)[0],
    thumbnailUrl: coverById(doc.cover_i),
    externalUrl: `${SITE}/works/${work}`,
    rating: asNumber(doc.ratings_average),
  });
}

export function parseOpenLibrarySearch(body: unknown): MetadataCandidate[] {
  if (!isObject(body) || !Array.isArray(body.docs)) throw providerChanged(NAME, 'search answer without "docs"');
  return body.docs.map(parseOpenLibraryDoc).filter((c): c is MetadataCandidate => c !== undefined);
}

/** An edition record (`/books/OL…M.json`) plus what its work and authors add. */
export function parseOpenLibraryEdition(edition: unknown, work: unknown, authorNames: readonly string[]): MetadataCandidate | undefined {
  if (!isObject(edition)) return undefined;
  const key = olid(edition.key);
  const title = asString(edition.title) ?? (isObject(work) ? asString(work.title) : undefined);
  if (!key || !title) return undefined;
  const workKey = olid(asArray(edition.works).map((w) => (isObject(w) ? w.key : undefined))[0]) ?? (isObject(work) ? olid(work.key) : undefined);
  const series = asStrings(edition.series)[0];
  const identifiers = isObject(edition.identifiers) ? edition.identifiers : {};
  const language = asArray(edition.languages).map((l) => (isObject(l) ? l.key : undefined))[0];
  const workJson: Json = isObject(work) ? work : {};
  const subjects = asStrings(edition.subjects).length > 0 ? asStrings(edition.subjects) : asStrings(workJson.subjects);
  return compact<MetadataCandidate>({
    provider: 'OpenLibrary',
    providerItemId: key,
    title,
    subtitle: asString(edition.subtitle),
    authors: uniqueStrings(authorNames),
    publisher: asStrings(edition.publishers)[0],
    publishedDate: parseLooseDate(edition.publish_date),
    description: textValue(edition.description) ?? textValue(workJson.description),
    isbn13: asStrings(edition.isbn_13).map(cleanIsbn).find((i) => i !== undefined),
    isbn10: asStrings(edition.isbn_10).map(cleanIsbn).find((i) => i !== undefined),
    pageCount: asInt(edition.number_of_pages),
    language: normalizeLanguage(language),
    categories: uniqueStrings(subjects.slice(0, 10)),
    goodreadsId: asStrings(identifiers.goodreads)[0],
    thumbnailUrl: coverById(asArray(edition.covers)[0]) ?? coverById(asArray(workJson.covers)[0]),
    externalUrl: workKey ? `${SITE}/works/${workKey}` : `${SITE}/books/${key}`,
    ...(series ? parseSeries(series) : {}),
  });
}

async function orNull(promise: Promise<unknown>): Promise<unknown> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof ProviderError && error.code === 'NOT_FOUND') return null;
    throw error;
  }
}

async function authorNames(ctx: ProviderContext, refs: unknown[]): Promise<string[]> {
  const names: string[] = [];
  for (const ref of refs.slice(0, MAX_AUTHORS)) {
    // Editions list `{ key }`, works list `{ author: { key } }`.
    const key = olid(isObject(ref) ? (isObject(ref.author) ? ref.author.key : ref.key) : undefined);
    if (!key) continue;
    const author = await orNull(ctx.getJson(`/authors/${encodeURIComponent(key)}.json`));
    const name = isObject(author) ? (asString(author.name) ?? asString(author.personal_name)) : undefined;
    if (name) names.push(name);
  }
  return names;
}

async function editionCandidate(ctx: ProviderContext, edition: unknown): Promise<MetadataCandidate | null> {
  if (edition === null) return null;
  if (!isObject(edition)) throw providerChanged(NAME, 'the edition is not an object');
  const workKey = olid(asArray(edition.works).map((w) => (isObject(w) ? w.key : undefined))[0]);
  const work = workKey ? await orNull(ctx.getJson(`/works/${encodeURIComponent(workKey)}.json`)) : null;
  const refs = asArray(edition.authors).length > 0 ? asArray(edition.authors) : isObject(work) ? asArray(work.authors) : [];
  const candidate = parseOpenLibraryEdition(edition, work, await authorNames(ctx, refs));
  if (!candidate) throw providerChanged(NAME, 'the edition has no key or title');
  return candidate;
}

export const openLibraryProvider: MetadataProvider = {
  id: 'OpenLibrary',
  settingsKey: 'openLibrary',
  displayName: NAME,
  defaultBaseUrl: () => SITE,
  // Open Library asks API users to stay near one request a second.
  minIntervalMs: 1000,
  timeoutMs: 20_000,
  async search(query: ProviderQuery, ctx: ProviderContext): Promise<MetadataCandidate[]> {
    const isbn = cleanIsbn(query.isbn);
    if (isbn) {
      const candidate = await editionCandidate(ctx, await orNull(ctx.getJson(`/isbn/${isbn}.json`)));
      return candidate ? [candidate] : [];
    }
    if (!query.title) return [];
    const limit = Math.min(Math.max(query.limit ?? 10, 1), 50);
    const body = await ctx.getJson('/search.json', { query: { title: query.title, author: query.author, limit, fields: SEARCH_FIELDS } });
    return parseOpenLibrarySearch(body).slice(0, limit);
  },
  async details(itemId: string, ctx: ProviderContext): Promise<MetadataCandidate | null> {
    const id = itemId.replace(/^\/?(works|books)\//, '');
    if (/^OL\d+M$/.test(id)) return editionCandidate(ctx, await orNull(ctx.getJson(`/books/${id}.json`)));
    if (!/^OL\d+W$/.test(id)) throw new ProviderError(NAME, 'NOT_FOUND', `"${itemId}" is not an Open Library work (OL…W) or edition (OL…M) id`);
    const work = await orNull(ctx.getJson(`/works/${id}.json`));
    if (work === null) return null;
    if (!isObject(work)) throw providerChanged(NAME, 'the work is not an object');
    const title = asString(work.title);
    if (!title) throw providerChanged(NAME, 'the work has no title');
    return compact<MetadataCandidate>({
      provider: 'OpenLibrary',
      providerItemId: id,
      title,
      subtitle: asString(work.subtitle),
      authors: uniqueStrings(await authorNames(ctx, asArray(work.authors))),
      description: textValue(work.description),
      publishedDate: parseLooseDate(work.first_publish_date),
      categories: uniqueStrings(asStrings(work.subjects).slice(0, 10)),
      thumbnailUrl: coverById(asArray(work.covers)[0]),
      externalUrl: `${SITE}/works/${id}`,
    });
  },
};
