// The contract every metadata provider implements: who it is, what it is asked, what it answers, and what it is given
// to answer with. Providers live in ./providers/ and are listed in ./providers/index.ts.
import type { ComicValues } from '../books/comic-values.ts';
import { CodedError } from '../coded-error.ts';
import type { HttpClient, OutgoingRequest, OutgoingResponse } from '../net/http-client.ts';
import type { BookMetadataValues } from './book-metadata-values.ts';

/**
 * Provider ids exactly as they appear on the wire (Grimmory's MetadataProvider enum), plus `OpenLibrary`, which
 * Grimmory does not have: Bindery accepts and emits `OpenLibrary` wherever a MetadataProvider goes (fieldOptions
 * p1..p4, FetchMetadataRequest.providers, BookMetadata.provider, the detail route's `{provider}`), and reads its
 * settings from `openLibrary` in METADATA_PROVIDER_SETTINGS.
 */
export const PROVIDER_IDS = ['Amazon', 'GoodReads', 'Google', 'Hardcover', 'Comicvine', 'Douban', 'Lubimyczytac', 'Ranobedb', 'Audible', 'OpenLibrary'] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

export function isProviderId(value: unknown): value is ProviderId {
  return typeof value === 'string' && (PROVIDER_IDS as readonly string[]).includes(value);
}

/** The provider's property in METADATA_PROVIDER_SETTINGS. */
export type ProviderSettingsKey = 'amazon' | 'goodReads' | 'google' | 'hardcover' | 'comicvine' | 'douban' | 'lubimyczytac' | 'ranobedb' | 'audible' | 'openLibrary';

/**
 * What a provider is asked. The framework calls `search` with `isbn` set first (when the book has one), then, if that
 * found nothing, again with `title`/`author` and no `isbn`. A provider that cannot search by ISBN returns [] for the
 * first call. Everything else is a hint the provider may use.
 */
export interface ProviderQuery {
  isbn?: string;
  title?: string;
  author?: string;
  asin?: string;
  /** Ids the book already has, e.g. `{ goodreadsId: '123' }`, for providers that can go straight to the item. */
  knownIds?: Partial<Record<ExternalIdField, string>>;
  seriesName?: string;
  seriesNumber?: number;
  /** Most candidates wanted; providers may return fewer. Default 10. */
  limit?: number;
}

export type ExternalIdField = 'asin' | 'goodreadsId' | 'googleId' | 'hardcoverId' | 'hardcoverBookId' | 'comicvineId' | 'doubanId' | 'lubimyczytacId' | 'ranobedbId' | 'audibleId';

/** One review as BookReview (Grimmory DTO) has it. `date` is an ISO instant. */
export interface CandidateReview {
  metadataProvider?: ProviderId;
  reviewerName?: string;
  title?: string;
  rating?: number;
  date?: string;
  body?: string;
  country?: string;
  spoiler?: boolean;
  followersCount?: number;
  textReviewsCount?: number;
}

export type CandidateComic = ComicValues;

/**
 * A provider's answer: the fields of Grimmory's BookMetadata DTO a provider can fill, under the same names, plus
 * `providerItemId` (what `details(itemId)` and the detail route take; not part of BookMetadata on the wire).
 * Absent = the provider does not know. Dates are `yyyy-MM-dd` (a year alone becomes `yyyy-01-01`), ratings as the
 * provider gives them (0–5 for most; 0–10 for Douban), `language` as the provider gives it (ISO 639-1 preferred).
 */
export interface MetadataCandidate extends BookMetadataValues {
  provider: ProviderId;
  providerItemId: string;
  comicMetadata?: CandidateComic;
  bookReviews?: CandidateReview[];
}

/** Waits so that calls to one provider keep their spacing; shared by every caller in the process. */
export interface RateLimiter {
  /** Resolves when the next request may go out. */
  acquire(): Promise<void>;
}

export interface ProviderRequestOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Query parameters appended to the URL (undefined values skipped). */
  query?: Record<string, string | number | undefined>;
  /** Overrides the provider's timeout for this call. */
  timeoutMs?: number;
}

/**
 * What a provider gets for one call. Use `getJson`/`getText`: they resolve paths against `baseUrl`, wait for the rate
 * limiter, apply the timeout and turn every failure into a ProviderError (403/429/captcha/HTML-instead-of-JSON →
 * BLOCKED or RATE_LIMITED, slow → TIMEOUT, 5xx/network → UNAVAILABLE, 404 → NOT_FOUND). `request` is the same
 * pipeline for anything else (e.g. images), returning the raw response.
 */
export interface ProviderContext {
  readonly provider: ProviderId;
  /** The provider's object from METADATA_PROVIDER_SETTINGS (`{}` when the setting is null). */
  readonly settings: Readonly<Record<string, unknown>>;
  /** Without a trailing slash; the default or the `metadataProviderBaseUrls` override. */
  readonly baseUrl: string;
  readonly http: HttpClient;
  readonly limiter: RateLimiter;
  readonly timeoutMs: number;
  /** A path (`/volumes`) or an absolute URL → the parsed JSON body. Refuses anything but a JSON answer. */
  getJson(pathOrUrl: string, options?: ProviderRequestOptions): Promise<unknown>;
  /** A path or an absolute URL → the body as text (HTML pages). */
  getText(pathOrUrl: string, options?: ProviderRequestOptions): Promise<string>;
  request(req: OutgoingRequest): Promise<OutgoingResponse>;
  /** `pathOrUrl` resolved against `baseUrl`, with `query` appended. */
  url(pathOrUrl: string, query?: ProviderRequestOptions['query']): string;
}

/** One provider. Keep it stateless: everything per call comes through the context. */
export interface MetadataProvider {
  readonly id: ProviderId;
  readonly settingsKey: ProviderSettingsKey;
  readonly displayName: string;
  /** The public base URL; may depend on settings (e.g. Amazon's domain). */
  defaultBaseUrl(settings: Readonly<Record<string, unknown>>): string;
  /** Minimum spacing between two requests to this provider, in ms (politeness / documented quota). */
  readonly minIntervalMs: number;
  /** Per-request timeout in ms. */
  readonly timeoutMs: number;
  /** Settings properties that must be non-empty before the provider can be used (e.g. `apiKey`). */
  readonly requiredSettings?: readonly string[];
  /** Candidates for the query, best first; [] when nothing matches. Throws ProviderError when the provider fails. */
  search(query: ProviderQuery, ctx: ProviderContext): Promise<MetadataCandidate[]>;
  /** The full record of one item (by `providerItemId`); null (or ProviderError NOT_FOUND) when there is no such item. */
  details?(itemId: string, ctx: ProviderContext): Promise<MetadataCandidate | null>;
}

export type ProviderErrorCode =
  | 'UNKNOWN_PROVIDER'
  | 'DISABLED'
  | 'NOT_CONFIGURED'
  | 'BLOCKED'
  | 'RATE_LIMITED'
  | 'TIMEOUT'
  | 'UNAVAILABLE'
  | 'NOT_FOUND'
  | 'CHANGED';

/** A provider could not answer; the message names the provider and says why in words a user can act on. */
export class ProviderError extends CodedError<ProviderErrorCode> {
  readonly provider: string;
  constructor(provider: string, code: ProviderErrorCode, message: string) {
    super(code, `${provider}: ${message}`);
    this.provider = provider;
  }
}

/** Throw when a response no longer has the shape the parser knows (the provider changed its API or pages). */
export function providerChanged(provider: string, what: string): ProviderError {
  return new ProviderError(provider, 'CHANGED', `unexpected response (${what}); the provider may have changed its API or pages`);
}
