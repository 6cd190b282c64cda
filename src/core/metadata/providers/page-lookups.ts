// How the page-scraping providers (Amazon, Goodreads, Douban, Lubimyczytac) go from a query to records: a book's
// page that may be gone, full pages for the first few search results only, and ISBN look-ups the site answers by
// redirecting to the book.
import { ProviderError, type MetadataCandidate, type ProviderContext } from '../provider.ts';
import { blockedOrChanged, isChallengePage } from './page-parsing.ts';

/** The record of a book page, or null when the site says there is no such page. */
export async function pageOrNull(load: () => Promise<MetadataCandidate>): Promise<MetadataCandidate | null> {
  try {
    return await load();
  } catch (error) {
    if (error instanceof ProviderError && error.code === 'NOT_FOUND') return null;
    throw error;
  }
}

/**
 * The search results with the first `count` replaced by their full records (each page costs a rate-limited request;
 * the rest stay as the search found them). The first one failing is the answer (blocked, layout changed); a later
 * one only costs that result its details.
 */
export async function withDetails(found: readonly MetadataCandidate[], count: number, details: (light: MetadataCandidate) => Promise<MetadataCandidate | null>): Promise<MetadataCandidate[]> {
  const out: MetadataCandidate[] = [];
  for (const [index, light] of found.entries()) {
    if (index >= count) {
      out.push(light);
      continue;
    }
    try {
      out.push((await details(light)) ?? light);
    } catch (error) {
      if (index === 0) throw error;
      out.push(light);
    }
  }
  return out;
}

/**
 * An ISBN look-up at `path`, which the site redirects to the book's page (its id the first group of `bookPath`) or,
 * for an ISBN it does not know, to a search page: no record then, unless that page is a robot check.
 */
export async function isbnByRedirect(
  ctx: ProviderContext,
  provider: string,
  lookup: { path: string; headers: Record<string, string>; bookPath: RegExp },
  parse: (html: string, id: string) => MetadataCandidate,
): Promise<MetadataCandidate[]> {
  let response;
  try {
    response = await ctx.request({ url: ctx.url(lookup.path), headers: lookup.headers });
  } catch (error) {
    if (error instanceof ProviderError && error.code === 'NOT_FOUND') return [];
    throw error;
  }
  const id = lookup.bookPath.exec(new URL(response.url).pathname)?.[1];
  if (!id) {
    if (isChallengePage(response.text())) throw blockedOrChanged(provider, response.text(), 'the ISBN look-up answered with a robot check');
    return [];
  }
  return [parse(response.text(), id)];
}
