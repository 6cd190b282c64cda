// Matching authors with a metadata source, as Grimmory does: search by name or look up an ASIN; match to a chosen
// result; quick-match to the first result for the author's name; auto-match many authors one after the other.
// A match sets the description and the ASIN unless they are locked, and the photo (downloaded through the shared
// client) unless it is locked.
import { ProviderError } from '../metadata/provider.ts';
import type { HttpClient } from '../net/http-client.ts';
import type { Db } from '../store/store.ts';
import { AuthorError, authorNotFound } from './author-error.ts';
import { makeAuthorImages, saveAuthorImages } from './author-photos.ts';
import { createAuthorSourceContext, isAuthorMetadataSource, type AuthorSearchResult, type AuthorSource, type AuthorSourceRuntime } from './author-source.ts';
import { MAX_ASIN_LENGTH } from './author-edit.ts';
import { AUTHOR_SOURCES, authorSourceById } from './sources/index.ts';

/** Audible's stores, as Audnexus names them. */
export const AUTHOR_REGIONS = ['us', 'uk', 'ca', 'au', 'de', 'fr', 'it', 'es', 'in', 'jp'] as const;

export interface AuthorMatchDeps {
  db: Db;
  /** For photos; the sources get theirs from `runtime`. */
  http: HttpClient;
  imagesRoot: string;
  runtime: AuthorSourceRuntime;
  /** Largest photo downloaded. */
  maxPhotoBytes: number;
  /** A photo that could not be had does not fail the match; it is reported here. */
  onPhotoProblem?: (authorId: number, url: string, error: unknown) => void;
}

export function normalizeRegion(region: string | null | undefined): string {
  const value = (region ?? '').trim().toLowerCase() || 'us';
  if (!(AUTHOR_REGIONS as readonly string[]).includes(value)) throw new AuthorError('INVALID', `Unknown region "${region}"; one of ${AUTHOR_REGIONS.join(', ')}`);
  return value;
}

function checkedAsin(asin: string | null | undefined): string {
  const value = (asin ?? '').trim();
  if (!/^[A-Za-z0-9]+$/.test(value) || value.length > MAX_ASIN_LENGTH) throw new AuthorError('INVALID', 'asin: must be an ASIN such as B000APZGGS');
  return value;
}

const contextFor = (source: AuthorSource, deps: Pick<AuthorMatchDeps, 'runtime'>) => createAuthorSourceContext(source, deps.runtime);

/** Every source's candidates for a name (each with its details), source by source. */
export async function searchAuthorMetadata(deps: Pick<AuthorMatchDeps, 'runtime'>, query: string, region: string): Promise<AuthorSearchResult[]> {
  const name = query.trim();
  if (name === '') throw new AuthorError('INVALID', "Either 'q' or 'asin' parameter is required");
  const results: AuthorSearchResult[] = [];
  for (const source of AUTHOR_SOURCES) results.push(...(await source.search(name, normalizeRegion(region), contextFor(source, deps))));
  return results;
}

/** Every source's author with the ASIN (none, or one per source). */
export async function lookupAuthorByAsin(deps: Pick<AuthorMatchDeps, 'runtime'>, asin: string, region: string): Promise<AuthorSearchResult[]> {
  const checked = checkedAsin(asin);
  const results: AuthorSearchResult[] = [];
  for (const source of AUTHOR_SOURCES) {
    const found = await source.byAsin(checked, normalizeRegion(region), contextFor(source, deps));
    if (found) results.push(found);
  }
  return results;
}

/** Downloads an image (public addresses only, image types only, bounded) and makes it the author's photo. */
export async function setAuthorPhotoFromUrl(deps: Pick<AuthorMatchDeps, 'http' | 'imagesRoot' | 'maxPhotoBytes'>, authorId: number, url: string): Promise<void> {
  const response = await deps.http.request({ url, accept: ['image/'], maxBytes: deps.maxPhotoBytes, timeoutMs: 30_000 });
  await saveAuthorImages(deps.imagesRoot, authorId, await makeAuthorImages(response.body));
}

export type PhotoOutcome = 'saved' | 'locked' | 'none' | 'failed';

/** The result's description and ASIN (unless locked), then its photo (unless locked). */
async function applyResult(deps: AuthorMatchDeps, authorId: number, result: AuthorSearchResult): Promise<PhotoOutcome> {
  const author = await deps.db.selectFrom('author').select(['description_locked', 'asin_locked', 'photo_locked']).where('id', '=', authorId).executeTakeFirst();
  if (!author) throw authorNotFound(authorId);
  const changes: { description?: string | null; asin?: string | null } = {};
  if (author.description_locked !== 1) changes.description = result.description ?? null;
  if (author.asin_locked !== 1) changes.asin = result.asin.slice(0, MAX_ASIN_LENGTH);
  if (Object.keys(changes).length > 0) await deps.db.updateTable('author').set(changes).where('id', '=', authorId).execute();
  if (author.photo_locked === 1) return 'locked';
  if (!result.imageUrl) return 'none';
  try {
    await setAuthorPhotoFromUrl(deps, authorId, result.imageUrl);
    return 'saved';
  } catch (error) {
    deps.onPhotoProblem?.(authorId, result.imageUrl, error);
    return 'failed';
  }
}

export interface AuthorMatchRequest {
  source?: string | null;
  asin?: string | null;
  region?: string | null;
}

/** Matches the author to the source's record with the ASIN. */
export async function matchAuthor(deps: AuthorMatchDeps, authorId: number, request: AuthorMatchRequest): Promise<PhotoOutcome> {
  const exists = await deps.db.selectFrom('author').select('id').where('id', '=', authorId).executeTakeFirst();
  if (!exists) throw authorNotFound(authorId);
  const source = isAuthorMetadataSource(request.source) ? authorSourceById(request.source) : undefined;
  if (!source) throw new AuthorError('UNSUPPORTED_SOURCE', `Unsupported author metadata source: ${request.source ?? null}`);
  const result = await source.byAsin(checkedAsin(request.asin), normalizeRegion(request.region), contextFor(source, deps));
  if (!result) throw new AuthorError('NO_RESULT', 'Failed to fetch author metadata');
  return applyResult(deps, authorId, result);
}

/** Matches the author to the first result for their name, trying the sources in turn. */
export async function quickMatchAuthor(deps: AuthorMatchDeps, authorId: number, region: string | null | undefined): Promise<{ result: AuthorSearchResult; photo: PhotoOutcome }> {
  const author = await deps.db.selectFrom('author').select(['id', 'name']).where('id', '=', authorId).executeTakeFirst();
  if (!author) throw authorNotFound(authorId);
  const checkedRegion = normalizeRegion(region);
  for (const source of AUTHOR_SOURCES) {
    const result = await source.quickSearch(author.name, checkedRegion, contextFor(source, deps));
    if (result) return { result, photo: await applyResult(deps, authorId, result) };
  }
  throw new AuthorError('NO_RESULT', `No metadata found for author: ${author.name}`);
}

export type AutoMatchEvent =
  | { authorId: number; outcome: 'matched'; photo: PhotoOutcome }
  | { authorId: number; outcome: 'no-match' }
  | { authorId: number; outcome: 'failed'; error: unknown };

export interface AutoMatchOptions {
  region?: string;
  /** Pause between two authors, on top of each source's own rate limit. */
  spacingMs?: number;
  /** Checked before each author: true stops the run. */
  cancelled?: () => boolean;
}

/** Between authors, as Grimmory pauses: a community API is asked at a walking pace. */
export const AUTO_MATCH_SPACING_MS = 500;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Quick-matches the authors one after the other, reporting each. One author's failure does not stop the run; a
 * source that refuses or throttles us does (the rest would fail the same way).
 */
export async function* autoMatchAuthors(deps: AuthorMatchDeps, authorIds: readonly number[], options: AutoMatchOptions = {}): AsyncGenerator<AutoMatchEvent> {
  const spacing = options.spacingMs ?? AUTO_MATCH_SPACING_MS;
  for (const [index, authorId] of authorIds.entries()) {
    if (options.cancelled?.()) return;
    if (index > 0 && spacing > 0) await sleep(spacing);
    try {
      const { photo } = await quickMatchAuthor(deps, authorId, options.region);
      yield { authorId, outcome: 'matched', photo };
    } catch (error) {
      if (error instanceof AuthorError && error.code === 'NO_RESULT') {
        yield { authorId, outcome: 'no-match' };
        continue;
      }
      if (error instanceof AuthorError && error.code === 'NOT_FOUND') continue;
      yield { authorId, outcome: 'failed', error };
      if (error instanceof ProviderError && (error.code === 'BLOCKED' || error.code === 'RATE_LIMITED')) return;
    }
  }
}
