// Public reviews of a book, fetched from the metadata providers that show them (Amazon, Goodreads, Douban,
// Lubimyczytac) as METADATA_PUBLIC_REVIEWS_SETTINGS says — which providers, how many each — and kept in
// public_book_review until refreshed or deleted.
import type { Selectable } from 'kysely';
import { CodedError } from '../coded-error.ts';
import { readSetting } from '../settings/app-settings.ts';
import type { PublicBookReviewTable } from '../store/db-types.ts';
import type { Db } from '../store/store.ts';
import { queryFor } from './book-match.ts';
import { readCurrentMetadata } from './metadata-apply.ts';
import { createProviderContext, providerSettingsOf, type ProviderRuntime } from './provider-context.ts';
import { isProviderId, ProviderError, type CandidateReview, type MetadataCandidate, type MetadataProvider, type ProviderId, type ProviderQuery } from './provider.ts';
import { providerById } from './providers/index.ts';
import { cleanIsbn, isObject } from './values.ts';

/** Grimmory's BookReview DTO; absent properties are left out of the JSON, as its NON_NULL inclusion does. */
export interface BookReview extends Omit<CandidateReview, 'metadataProvider'> {
  id?: number;
  metadataProvider?: string;
}

export interface ReviewProviderConfig {
  provider: ProviderId;
  enabled: boolean;
  maxReviews: number;
}

export interface ReviewSettings {
  downloadEnabled: boolean;
  autoDownloadEnabled: boolean;
  providers: ReviewProviderConfig[];
}

export type ReviewErrorCode = 'BOOK_NOT_FOUND' | 'REVIEW_NOT_FOUND' | 'DOWNLOADS_DISABLED' | 'PROVIDERS_FAILED';

export class ReviewError extends CodedError<ReviewErrorCode> {}

/** Upper bound on what one provider may store per book, whatever maxReviews says. */
const MAX_PER_PROVIDER = 50;
/** Column sizes of Grimmory's table; longer text is cut. */
const SHORT_TEXT = 512;
const BODY_TEXT = 65_535;

export async function reviewSettings(db: Db): Promise<ReviewSettings> {
  const raw = await readSetting(db, 'METADATA_PUBLIC_REVIEWS_SETTINGS');
  const settings: Record<string, unknown> = isObject(raw) ? raw : {};
  const providers: ReviewProviderConfig[] = [];
  for (const entry of Array.isArray(settings.providers) ? settings.providers : []) {
    if (!isObject(entry) || !isProviderId(entry.provider) || providers.some((p) => p.provider === entry.provider)) continue;
    const max = typeof entry.maxReviews === 'number' && Number.isFinite(entry.maxReviews) ? Math.trunc(entry.maxReviews) : 5;
    providers.push({ provider: entry.provider, enabled: entry.enabled === true, maxReviews: Math.max(0, Math.min(MAX_PER_PROVIDER, max)) });
  }
  return { downloadEnabled: settings.downloadEnabled === true, autoDownloadEnabled: settings.autoDownloadEnabled === true, providers };
}

type ReviewRow = Omit<Selectable<PublicBookReviewTable>, 'book_id'>;

function toDto(row: ReviewRow): BookReview {
  const out: BookReview = { id: row.id, metadataProvider: row.metadata_provider };
  if (row.reviewer_name !== null) out.reviewerName = row.reviewer_name;
  if (row.title !== null) out.title = row.title;
  if (row.rating !== null) out.rating = row.rating;
  if (row.date !== null) out.date = row.date;
  if (row.body !== null) out.body = row.body;
  if (row.country !== null) out.country = row.country;
  if (row.spoiler !== null) out.spoiler = row.spoiler === 1;
  if (row.followers_count !== null) out.followersCount = row.followers_count;
  if (row.text_reviews_count !== null) out.textReviewsCount = row.text_reviews_count;
  return out;
}

async function requireBook(db: Db, bookId: number): Promise<void> {
  const book = await db.selectFrom('book').select('id').where('id', '=', bookId).executeTakeFirst();
  if (!book) throw new ReviewError('BOOK_NOT_FOUND', `Book not found with ID: ${bookId}`);
}

export async function listBookReviews(db: Db, bookId: number): Promise<BookReview[]> {
  await requireBook(db, bookId);
  const rows = await db
    .selectFrom('public_book_review')
    .select(['id', 'metadata_provider', 'reviewer_name', 'title', 'rating', 'date', 'body', 'country', 'spoiler', 'followers_count', 'text_reviews_count'])
    .where('book_id', '=', bookId)
    .orderBy('id')
    .execute();
  return rows.map(toDto);
}

export async function deleteReview(db: Db, id: number): Promise<void> {
  const result = await db.deleteFrom('public_book_review').where('id', '=', id).executeTakeFirst();
  if (Number(result.numDeletedRows) === 0) throw new ReviewError('REVIEW_NOT_FOUND', `Review not found: ${id}`);
}

export async function deleteBookReviews(db: Db, bookId: number): Promise<void> {
  await requireBook(db, bookId);
  await db.deleteFrom('public_book_review').where('book_id', '=', bookId).execute();
}

async function reviewsLocked(db: Db, bookId: number): Promise<boolean> {
  const row = await db.selectFrom('book_metadata').select(['reviews_locked', 'all_fields_locked']).where('book_id', '=', bookId).executeTakeFirst();
  return row?.reviews_locked === 1 || row?.all_fields_locked === 1;
}

/** What one provider gave: its reviews (possibly none), or why it could not be asked. */
export interface ReviewFetch {
  provider: ProviderId;
  reviews: CandidateReview[];
  error?: ProviderError;
}

/**
 * The provider's record of the book: the item it already has an id for, else the first match by ISBN, else by title
 * and author. A light search result (no description, no reviews) is completed from the item's page.
 */
async function bookRecord(provider: MetadataProvider, query: ProviderQuery, runtime: ProviderRuntime): Promise<MetadataCandidate | undefined> {
  const ctx = createProviderContext(provider, runtime);
  const isbn = cleanIsbn(query.isbn);
  let found: MetadataCandidate[] = isbn ? await provider.search({ ...query, isbn, limit: 1 }, ctx) : [];
  if (found.length === 0 && query.title) {
    const { isbn: _isbn, ...byTitle } = query;
    found = await provider.search({ ...byTitle, limit: 1 }, ctx);
  }
  const first = found[0];
  if (first && first.bookReviews === undefined && first.description === undefined && provider.details) return (await provider.details(first.providerItemId, ctx)) ?? first;
  return first;
}

/** Newest first (undated last), at most `max`, text cut to the column sizes. */
export function pickReviews(provider: ProviderId, reviews: readonly CandidateReview[], max: number): CandidateReview[] {
  const cut = (s: string | undefined, n: number): string | undefined => (s === undefined ? undefined : s.slice(0, n));
  return reviews
    .filter((r) => r.body !== undefined && r.body.trim() !== '')
    .map((r, index) => ({ r, index }))
    .sort((a, b) => (b.r.date ?? '').localeCompare(a.r.date ?? '') || a.index - b.index)
    .slice(0, max)
    .map(({ r }) => ({ ...r, metadataProvider: provider, reviewerName: cut(r.reviewerName, SHORT_TEXT), title: cut(r.title, SHORT_TEXT), country: cut(r.country, SHORT_TEXT), body: cut(r.body, BODY_TEXT) }));
}

/** Asks every provider the settings enable for reviews, in parallel (each keeps its own rate limit). */
export async function fetchReviews(db: Db, bookId: number, settings: ReviewSettings, runtime: ProviderRuntime): Promise<ReviewFetch[]> {
  const current = await readCurrentMetadata(db, bookId);
  if (!current) throw new ReviewError('BOOK_NOT_FOUND', `Book not found with ID: ${bookId}`);
  const query = queryFor(current);
  return Promise.all(
    settings.providers
      .filter((p) => p.enabled)
      .map(async ({ provider: id, maxReviews }): Promise<ReviewFetch> => {
        const provider = providerById(id);
        if (!provider) return { provider: id, reviews: [], error: new ProviderError(id, 'UNKNOWN_PROVIDER', 'is not a metadata provider Bindery knows') };
        // The reviews setting is the switch here, as in Grimmory; only missing credentials stop a provider.
        const missing = (provider.requiredSettings ?? []).find((key) => {
          const value = providerSettingsOf(provider, runtime)[key];
          return typeof value !== 'string' || value.trim() === '';
        });
        if (missing) return { provider: id, reviews: [], error: new ProviderError(provider.displayName, 'NOT_CONFIGURED', `needs "${missing}" in the metadata provider settings`) };
        try {
          const record = await bookRecord(provider, query, runtime);
          return { provider: id, reviews: pickReviews(id, record?.bookReviews ?? [], maxReviews) };
        } catch (error) {
          const failure = error instanceof ProviderError ? error : new ProviderError(provider.displayName, 'CHANGED', `could not read the answer (${error instanceof Error ? error.message : String(error)})`);
          return { provider: id, reviews: [], error: failure };
        }
      }),
  );
}

/**
 * Stores what the providers gave: each provider that answered has its reviews replaced; one that failed keeps the
 * reviews it had; providers no longer enabled lose theirs.
 */
export async function storeFetchedReviews(db: Db, bookId: number, settings: ReviewSettings, fetched: readonly ReviewFetch[]): Promise<void> {
  const enabled = new Set(settings.providers.filter((p) => p.enabled).map((p) => p.provider as string));
  const answered = fetched.filter((f) => !f.error);
  await db.transaction().execute(async (trx) => {
    // The book may have no metadata row yet (reviews hang off it, as in Grimmory).
    await trx.insertInto('book_metadata').values({ book_id: bookId }).onConflict((oc) => oc.column('book_id').doNothing()).execute();
    const stale = await trx.selectFrom('public_book_review').select(['id', 'metadata_provider']).where('book_id', '=', bookId).execute();
    const replaced = new Set(answered.map((f) => f.provider as string));
    const gone = stale.filter((r) => replaced.has(r.metadata_provider) || !enabled.has(r.metadata_provider)).map((r) => r.id);
    if (gone.length > 0) await trx.deleteFrom('public_book_review').where('id', 'in', gone).execute();
    const rows = answered.flatMap((f) =>
      f.reviews.map((r) => ({
        book_id: bookId,
        metadata_provider: f.provider,
        reviewer_name: r.reviewerName ?? null,
        title: r.title ?? null,
        rating: r.rating ?? null,
        date: r.date ?? null,
        body: r.body ?? null,
        country: r.country ?? null,
        spoiler: r.spoiler === undefined ? null : r.spoiler ? 1 : 0,
        followers_count: r.followersCount ?? null,
        text_reviews_count: r.textReviewsCount ?? null,
      })),
    );
    if (rows.length > 0) await trx.insertInto('public_book_review').values(rows).execute();
  });
}

export interface RefreshOutcome {
  reviews: BookReview[];
  /** Providers that could not be asked; their earlier reviews were kept. */
  errors: ProviderError[];
}

/**
 * `POST /reviews/book/{id}/refresh`: fetches anew and stores. Reviews that are locked stay as they are. When every
 * provider asked failed, nothing is touched and PROVIDERS_FAILED says why.
 */
export async function refreshBookReviews(db: Db, bookId: number, runtime: ProviderRuntime): Promise<RefreshOutcome> {
  await requireBook(db, bookId);
  if (await reviewsLocked(db, bookId)) return { reviews: await listBookReviews(db, bookId), errors: [] };
  const settings = await reviewSettings(db);
  if (!settings.downloadEnabled) throw new ReviewError('DOWNLOADS_DISABLED', 'Downloading public reviews is turned off in the metadata settings.');
  const fetched = await fetchReviews(db, bookId, settings, runtime);
  const errors = fetched.flatMap((f) => (f.error ? [f.error] : []));
  if (fetched.length > 0 && errors.length === fetched.length) {
    throw new ReviewError('PROVIDERS_FAILED', `Could not refresh reviews: ${errors.map((e) => e.message).join('; ')}`);
  }
  await storeFetchedReviews(db, bookId, settings, fetched);
  return { reviews: await listBookReviews(db, bookId), errors };
}

/**
 * `GET /reviews/book/{id}`: the stored reviews; for a book that has none, fetched first when the settings turn on
 * automatic downloads and the caller may trigger them (admins and library managers, as in Grimmory). A failed
 * automatic download is not the reader's problem: it leaves the list empty and reports the errors.
 */
export async function reviewsForBook(db: Db, bookId: number, options: { mayDownload: boolean; runtime: ProviderRuntime }): Promise<RefreshOutcome> {
  const existing = await listBookReviews(db, bookId);
  if (existing.length > 0 || !options.mayDownload) return { reviews: existing, errors: [] };
  const settings = await reviewSettings(db);
  if (!settings.downloadEnabled || !settings.autoDownloadEnabled || (await reviewsLocked(db, bookId))) return { reviews: existing, errors: [] };
  const fetched = await fetchReviews(db, bookId, settings, options.runtime);
  const errors = fetched.flatMap((f) => (f.error ? [f.error] : []));
  if (fetched.some((f) => !f.error && f.reviews.length > 0)) await storeFetchedReviews(db, bookId, settings, fetched);
  return { reviews: await listBookReviews(db, bookId), errors };
}
