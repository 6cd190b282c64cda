// Matching one book: the query its metadata makes, the providers its refresh options name, the candidate each
// provider has for it, the merged result and the plan that writing it would carry out.
import type { HttpClient } from '../net/http-client.ts';
import { readSetting } from '../settings/app-settings.ts';
import type { Db } from '../store/store.ts';
import { FIELD_SPECS } from './fields.ts';
import { fetchedMetadata, planMerge, providersToQuery, refreshOptionsFrom, type FetchedMetadata, type MergePlan, type RefreshOptions } from './merge.ts';
import { readCurrentMetadata, type StoredMetadata } from './metadata-apply.ts';
import { isUsable, type ProviderRuntime } from './provider-context.ts';
import type { ExternalIdField, MetadataCandidate, ProviderId, ProviderQuery } from './provider.ts';
import { providerById } from './providers/index.ts';
import { bestCandidate, searchProviders, type ProviderOutcome } from './search.ts';

export interface RuntimeOverrides {
  baseUrls?: Readonly<Record<string, string>>;
  minIntervalMs?: number;
  timeoutMs?: number;
}

/** The provider runtime with METADATA_PROVIDER_SETTINGS as stored now. */
export async function loadProviderRuntime(db: Db, http: HttpClient, overrides: RuntimeOverrides = {}): Promise<ProviderRuntime> {
  const settings = (await readSetting(db, 'METADATA_PROVIDER_SETTINGS')) as Record<string, unknown> | null;
  return { http, providerSettings: settings ?? {}, ...overrides };
}

export function usableProviders(runtime: ProviderRuntime): (id: ProviderId) => boolean {
  return (id) => {
    const provider = providerById(id);
    return provider !== undefined && isUsable(provider, runtime);
  };
}

const ID_FIELDS: ExternalIdField[] = ['asin', 'goodreadsId', 'googleId', 'hardcoverId', 'hardcoverBookId', 'comicvineId', 'doubanId', 'lubimyczytacId', 'ranobedbId', 'audibleId'];

/** What a book's metadata lets providers search by. */
export function queryFor(current: Pick<StoredMetadata, 'values'>): ProviderQuery {
  const v = current.values;
  const text = (x: unknown): string | undefined => (typeof x === 'string' && x.trim() !== '' ? x.trim() : undefined);
  const knownIds: Partial<Record<ExternalIdField, string>> = {};
  for (const id of ID_FIELDS) {
    const value = text(v[id]);
    if (value) knownIds[id] = value;
  }
  const authors = Array.isArray(v.authors) ? (v.authors as string[]) : [];
  const query: ProviderQuery = { knownIds };
  const isbn = text(v.isbn13) ?? text(v.isbn10);
  if (isbn) query.isbn = isbn;
  const title = text(v.title);
  if (title) query.title = title;
  if (authors.length > 0) query.author = authors.join(', ');
  const asin = text(v.asin);
  if (asin) query.asin = asin;
  const series = text(v.seriesName);
  if (series) query.seriesName = series;
  if (typeof v.seriesNumber === 'number') query.seriesNumber = v.seriesNumber;
  return query;
}

/** The options a refresh of a book in this library uses when the request brings none. */
export async function storedRefreshOptions(db: Db, libraryId: number | null): Promise<RefreshOptions> {
  if (libraryId !== null) {
    const perLibrary = await readSetting(db, 'LIBRARY_METADATA_REFRESH_OPTIONS');
    if (Array.isArray(perLibrary)) {
      const own = perLibrary.find((o) => typeof o === 'object' && o !== null && (o as { libraryId?: unknown }).libraryId === libraryId);
      if (own) return refreshOptionsFrom(own);
    }
  }
  return refreshOptionsFrom(await readSetting(db, 'QUICK_BOOK_MATCH'));
}

export interface BookMatch {
  bookId: number;
  current: StoredMetadata;
  query: ProviderQuery;
  asked: ProviderId[];
  outcomes: ProviderOutcome[];
  /** The candidate taken from each provider that had the book. */
  chosen: Map<ProviderId, MetadataCandidate>;
  fetched: FetchedMetadata;
  plan: MergePlan;
}

/** Everything short of writing: undefined when there is no such book. A book with allMetadataLocked asks no one. */
export async function matchBook(db: Db, bookId: number, options: RefreshOptions, runtime: ProviderRuntime): Promise<BookMatch | undefined> {
  const current = await readCurrentMetadata(db, bookId);
  if (!current) return undefined;
  const query = queryFor(current);
  const asked = current.allLocked ? [] : providersToQuery(options, usableProviders(runtime));
  const outcomes = asked.length > 0 && (query.isbn || query.title) ? await searchProviders(asked, query, runtime) : [];
  const chosen = new Map<ProviderId, MetadataCandidate>();
  for (const outcome of outcomes) {
    const best = bestCandidate(outcome, query);
    if (best) chosen.set(outcome.provider, best);
  }
  const fetched = fetchedMetadata(chosen, options);
  const plan = planMerge(current, fetched, { replaceMode: options.replaceMode, mergeCategories: options.mergeCategories, refreshCovers: options.refreshCovers });
  return { bookId, current, query, asked, outcomes, chosen, fetched, plan };
}

/** The BookMetadata a review shows for a match: what the providers found, with the book's id and its current locks. */
export function proposalMetadata(match: Pick<BookMatch, 'bookId' | 'current' | 'fetched'>): Record<string, unknown> {
  const out: Record<string, unknown> = { bookId: match.bookId, ...match.fetched.metadata };
  for (const spec of FIELD_SPECS) if (match.current.locked.has(spec.field)) out[spec.field === 'thumbnailUrl' ? 'coverLocked' : `${spec.field}Locked`] = true;
  if (match.current.allLocked) out.allMetadataLocked = true;
  return out;
}
