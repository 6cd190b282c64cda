// Audnexus (https://api.audnex.us), the community aggregator of Audible's author pages, as Grimmory asks it:
// `/authors?name=&region=` lists authors by name (ASIN and name only, sometimes the same ASIN twice), and
// `/authors/<asin>?region=` gives one author with description and image.
import { providerChanged } from '../../metadata/provider.ts';
import { asString, isObject } from '../../metadata/values.ts';
import type { AuthorSearchResult, AuthorSource, AuthorSourceContext } from '../author-source.ts';

const NAME = 'Audnexus';
/** Results fetched in detail for one search, as Grimmory does. */
const SEARCH_LIMIT = 10;

/** One author record → a result; undefined without an ASIN. */
export function parseAudnexusAuthor(body: unknown): AuthorSearchResult | undefined {
  if (!isObject(body)) return undefined;
  const asin = asString(body.asin);
  if (!asin) return undefined;
  const result: AuthorSearchResult = { source: 'AUDNEXUS', asin };
  const name = asString(body.name);
  const description = asString(body.description);
  const image = asString(body.image);
  if (name) result.name = name;
  if (description) result.description = description;
  if (image && /^https?:\/\//i.test(image)) result.imageUrl = image;
  return result;
}

/** The name search's list, first occurrence of each ASIN kept, in the order given. */
export function parseAudnexusSearch(body: unknown): AuthorSearchResult[] {
  if (body === undefined) return [];
  if (!Array.isArray(body)) throw providerChanged(NAME, 'the author search answer is not a list');
  const seen = new Set<string>();
  const out: AuthorSearchResult[] = [];
  for (const entry of body) {
    const result = parseAudnexusAuthor(entry);
    if (!result || seen.has(result.asin)) continue;
    seen.add(result.asin);
    out.push(result);
  }
  return out;
}

async function searchList(name: string, region: string, ctx: AuthorSourceContext): Promise<AuthorSearchResult[]> {
  return parseAudnexusSearch(await ctx.getJson('/authors', { name, region }));
}

async function byAsin(asin: string, region: string, ctx: AuthorSourceContext): Promise<AuthorSearchResult | null> {
  const body = await ctx.getJson(`/authors/${encodeURIComponent(asin)}`, { region });
  return parseAudnexusAuthor(body) ?? null;
}

export const audnexusSource: AuthorSource = {
  id: 'AUDNEXUS',
  displayName: NAME,
  baseUrlKey: 'Audnexus',
  defaultBaseUrl: 'https://api.audnex.us',
  minIntervalMs: 150,
  timeoutMs: 15_000,
  async search(name, region, ctx) {
    const found = (await searchList(name, region, ctx)).slice(0, SEARCH_LIMIT);
    const detailed: AuthorSearchResult[] = [];
    for (const hit of found) detailed.push((await byAsin(hit.asin, region, ctx)) ?? hit);
    return detailed;
  },
  byAsin,
  async quickSearch(name, region, ctx) {
    const first = (await searchList(name, region, ctx))[0];
    return first ? byAsin(first.asin, region, ctx) : null;
  },
};
