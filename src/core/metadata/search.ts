// Asking providers: ISBN first, then title and author; every provider on its own (one failing does not stop the
// others); picking the candidate that is really the book.
import { assertUsable, createProviderContext, type ProviderRuntime } from './provider-context.ts';
import { ProviderError, type MetadataCandidate, type MetadataProvider, type ProviderId, type ProviderQuery } from './provider.ts';
import { providerById } from './providers/index.ts';
import { cleanIsbn } from './values.ts';

export type SearchedBy = 'isbn' | 'title';

export interface ProviderOutcome {
  provider: ProviderId;
  candidates: MetadataCandidate[];
  /** Which search found the candidates (none when nothing was found). */
  searchedBy?: SearchedBy;
  error?: ProviderError;
}

export function requireProvider(id: string): MetadataProvider {
  const provider = providerById(id);
  if (!provider) throw new ProviderError(id, 'UNKNOWN_PROVIDER', 'is not a metadata provider Bindery knows');
  return provider;
}

/** ISBN search first when there is an ISBN; title and author when that found nothing (or there was no ISBN). */
export async function searchProvider(provider: MetadataProvider, query: ProviderQuery, runtime: ProviderRuntime): Promise<{ candidates: MetadataCandidate[]; searchedBy?: SearchedBy }> {
  assertUsable(provider, runtime);
  const ctx = createProviderContext(provider, runtime);
  const isbn = cleanIsbn(query.isbn);
  if (isbn) {
    const found = await provider.search({ ...query, isbn }, ctx);
    if (found.length > 0) return { candidates: found, searchedBy: 'isbn' };
  }
  if (!query.title?.trim()) return { candidates: [] };
  const { isbn: _isbn, ...byTitle } = query;
  const found = await provider.search(byTitle, ctx);
  return found.length > 0 ? { candidates: found, searchedBy: 'title' } : { candidates: [] };
}

function asProviderError(provider: MetadataProvider, error: unknown): ProviderError {
  if (error instanceof ProviderError) return error;
  // A parser that tripped over an unexpected shape.
  return new ProviderError(provider.displayName, 'CHANGED', `could not read the answer (${error instanceof Error ? error.message : String(error)}); the provider may have changed its API or pages`);
}

/** Asks every provider in parallel (each keeps its own rate limit); failures are reported per provider. */
export async function searchProviders(ids: readonly ProviderId[], query: ProviderQuery, runtime: ProviderRuntime): Promise<ProviderOutcome[]> {
  return Promise.all(
    ids.map(async (id): Promise<ProviderOutcome> => {
      const provider = providerById(id);
      if (!provider) return { provider: id, candidates: [], error: new ProviderError(id, 'UNKNOWN_PROVIDER', 'is not a metadata provider Bindery knows') };
      try {
        return { provider: id, ...(await searchProvider(provider, query, runtime)) };
      } catch (error) {
        return { provider: id, candidates: [], error: asProviderError(provider, error) };
      }
    }),
  );
}

export async function providerDetails(id: string, itemId: string, runtime: ProviderRuntime): Promise<MetadataCandidate | null> {
  const provider = requireProvider(id);
  assertUsable(provider, runtime);
  const ctx = createProviderContext(provider, runtime);
  try {
    if (provider.details) return await provider.details(itemId, ctx);
    // Without a details call, a search by the id is the best a provider can do.
    const found = await provider.search({ title: itemId, limit: 5 }, ctx);
    return found.find((c) => c.providerItemId === itemId) ?? null;
  } catch (error) {
    if (error instanceof ProviderError && error.code === 'NOT_FOUND') return null;
    throw asProviderError(provider, error);
  }
}

/** Lower case, accents and punctuation gone, words single-spaced. */
export function normalizeText(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

const STOP_WORDS = new Set(['the', 'a', 'an', 'of', 'and', 'le', 'la', 'les', 'der', 'die', 'das']);

function words(text: string): Set<string> {
  return new Set(normalizeText(text).split(' ').filter((w) => w !== '' && !STOP_WORDS.has(w)));
}

/** Share of the words two titles have in common (Dice coefficient over words), 0–1. */
export function titleSimilarity(a: string, b: string): number {
  const x = words(a);
  const y = words(b);
  if (x.size === 0 || y.size === 0) return normalizeText(a) === normalizeText(b) ? 1 : 0;
  let common = 0;
  for (const w of x) if (y.has(w)) common++;
  return (2 * common) / (x.size + y.size);
}

/** The main title: what comes before a subtitle separator. */
function mainTitle(title: string): string {
  return title.split(/\s[:\-–—]\s|:\s/)[0] ?? title;
}

function authorsOverlap(wanted: string, authors: readonly string[] | undefined): boolean {
  if (!authors || authors.length === 0) return true;
  const want = words(wanted);
  return authors.some((a) => [...words(a)].some((w) => w.length > 1 && want.has(w)));
}

/** How well a candidate fits the query, 0–1; 0 when it is not the book. */
export function candidateFit(candidate: MetadataCandidate, query: ProviderQuery): number {
  if (!query.title || !candidate.title) return 0;
  const full = titleSimilarity(query.title, candidate.title);
  const main = titleSimilarity(mainTitle(query.title), mainTitle(candidate.title));
  const title = Math.max(full, main);
  if (title < 0.75) return 0;
  if (query.author && !authorsOverlap(query.author, candidate.authors)) return 0;
  return title;
}

/**
 * The candidate to use for a book: an ISBN hit is the book; among title hits, the best-fitting one whose title
 * resembles the book's and whose authors share a name with the book's.
 */
export function bestCandidate(outcome: Pick<ProviderOutcome, 'candidates' | 'searchedBy'>, query: ProviderQuery): MetadataCandidate | undefined {
  if (outcome.candidates.length === 0) return undefined;
  if (outcome.searchedBy === 'isbn') return outcome.candidates[0];
  let best: MetadataCandidate | undefined;
  let bestFit = 0;
  for (const c of outcome.candidates) {
    const fit = candidateFit(c, query);
    if (fit > bestFit) {
      best = c;
      bestFit = fit;
    }
  }
  return best;
}
