// Candidate covers for a book (BookCoverController's `/metadata/covers`): the cover URLs of the metadata providers
// that are switched on, plus DuckDuckGo's image search as Grimmory does it (Amazon and Goodreads images first, then the
// web at large). Each image is given with its size; only book-shaped ones (taller than wide, or about square for an
// audiobook) big enough to use are kept. Results come as they are found, numbered from 1.
import type { HttpClient } from '../net/http-client.ts';
import { searchImages, type ImageHit, type ImageSearchClient } from './duckduckgo-images.ts';
import { isUsable, type ProviderRuntime } from './provider-context.ts';
import { ProviderError, type ProviderId, type ProviderQuery } from './provider.ts';
import { providerById, providerIds } from './providers/index.ts';
import { searchProviders } from './search.ts';
import { loadSharp } from '../covers/sharp-loader.ts';

export interface CoverFetchRequest {
  isbn?: string;
  title?: string;
  author?: string;
  /** `audiobook` asks for square covers; anything else for book covers. */
  coverType?: string;
}

/** Grimmory's CoverImage. */
export interface CoverImage {
  url: string;
  width: number;
  height: number;
  index: number;
}

/** An image to show, or a source that could not be asked (reported, the search goes on). */
export type CoverEvent = { image: CoverImage } | { problem: ProviderError };

export interface CoverSearchDeps {
  runtime: ProviderRuntime;
  http: HttpClient;
  /** DuckDuckGo's image search; absent: providers only. */
  images?: ImageSearchClient;
  /** Stops starting new work once true (the client went away). */
  cancelled?: () => boolean;
}

/** DuckDuckGo's own limits, as Grimmory keeps them. */
const SITE_RESULTS = 7;
const WEB_RESULTS = 10;
const MIN_WEB_WIDTH = 350;
/** Provider covers are often smaller (Google's thumbnails); anything under this is not worth offering. */
const MIN_PROVIDER_WIDTH = 150;
const PER_PROVIDER = 5;
/** Images sized at once (each is downloaded to read its size). */
const MEASURING = 4;
const IMAGE_MAX_BYTES = 8 * 1024 * 1024;
const IMAGE_TIMEOUT_MS = 10_000;

export function isAudiobook(request: CoverFetchRequest): boolean {
  return request.coverType?.toLowerCase() === 'audiobook';
}

/** Taller than wide for a book; within 15 % of square for an audiobook. */
export function coverShapeFits(width: number, height: number, audiobook: boolean, minWidth: number): boolean {
  if (width < minWidth || height <= 0) return false;
  if (audiobook) {
    const ratio = width / height;
    return ratio >= 0.85 && ratio <= 1.15;
  }
  return width < height;
}

/** Hosts of the stores whose images are book covers (ranked first, as Grimmory does). */
const COVER_HOSTS = /amazon|goodreads|gr-assets/i;

/** Sites first, then the rest, each in DuckDuckGo's order; the wrong shapes and small images left out. */
export function rankWebImages(hits: readonly ImageHit[], audiobook: boolean): ImageHit[] {
  const fitting = hits.filter((h) => coverShapeFits(h.width, h.height, audiobook, MIN_WEB_WIDTH));
  return [...fitting.filter((h) => COVER_HOSTS.test(h.url)), ...fitting.filter((h) => !COVER_HOSTS.test(h.url))];
}

/** Width and height of an image at a URL (downloaded through the shared client, so only public addresses). */
async function measure(http: HttpClient, url: string): Promise<{ width: number; height: number } | undefined> {
  try {
    const response = await http.request({ url, accept: ['image/'], maxBytes: IMAGE_MAX_BYTES, timeoutMs: IMAGE_TIMEOUT_MS });
    const sharp = await loadSharp();
    const meta = await sharp(response.body).metadata();
    if (!meta.width || !meta.height) return undefined;
    // EXIF orientations 5–8 swap the sides as displayed.
    return (meta.orientation ?? 1) >= 5 ? { width: meta.height, height: meta.width } : { width: meta.width, height: meta.height };
  } catch {
    return undefined;
  }
}

function searchTerm(request: CoverFetchRequest): string {
  const kind = isAudiobook(request) ? 'audiobook' : 'book';
  return [request.title, request.author, kind].filter((p) => p && p.trim() !== '').join(' ');
}

/** Every candidate cover, as it is found and checked. */
export async function* searchCovers(request: CoverFetchRequest, deps: CoverSearchDeps): AsyncGenerator<CoverEvent> {
  const audiobook = isAudiobook(request);
  const cancelled = deps.cancelled ?? (() => false);
  const events: CoverEvent[] = [];
  const pending = new Set<Promise<unknown>>();
  const seen = new Set<string>();
  let index = 1;
  let wake: (() => void) | undefined;
  const push = (event: CoverEvent): void => {
    events.push(event);
    wake?.();
  };
  const track = (work: Promise<unknown>): void => {
    const done = work.catch((error: unknown) => push({ problem: error instanceof ProviderError ? error : new ProviderError('Cover search', 'UNAVAILABLE', String(error)) })).finally(() => {
      pending.delete(done);
      wake?.();
    });
    pending.add(done);
  };
  const offer = (url: string, width: number, height: number): void => {
    if (cancelled()) return;
    push({ image: { url, width, height, index: index++ } });
  };

  // Provider covers: sized by downloading them, a few at a time.
  let measuring = 0;
  const waiting: (() => void)[] = [];
  const slot = async (): Promise<void> => {
    while (measuring >= MEASURING) await new Promise<void>((resolve) => waiting.push(resolve));
    measuring++;
  };
  const release = (): void => {
    measuring--;
    waiting.shift()?.();
  };
  const consider = (url: string): void => {
    if (seen.has(url)) return;
    seen.add(url);
    track(
      (async () => {
        await slot();
        try {
          if (cancelled()) return;
          const size = await measure(deps.http, url);
          if (size && coverShapeFits(size.width, size.height, audiobook, MIN_PROVIDER_WIDTH)) offer(url, size.width, size.height);
        } finally {
          release();
        }
      })(),
    );
  };

  const query: ProviderQuery = { limit: PER_PROVIDER };
  if (request.isbn?.trim()) query.isbn = request.isbn.trim();
  if (request.title?.trim()) query.title = request.title.trim();
  if (request.author?.trim()) query.author = request.author.trim();
  const usable = (id: ProviderId): boolean => {
    const provider = providerById(id);
    return provider !== undefined && isUsable(provider, deps.runtime);
  };
  const providers = providerIds().filter(usable);
  if (query.isbn || query.title) {
    for (const id of providers) {
      track(
        searchProviders([id], query, deps.runtime).then(([outcome]) => {
          if (outcome?.error) push({ problem: outcome.error });
          for (const candidate of (outcome?.candidates ?? []).slice(0, PER_PROVIDER)) if (candidate.thumbnailUrl) consider(candidate.thumbnailUrl);
        }),
      );
    }
  }

  // The web: the store sites first, then everything, DuckDuckGo's sizes taken as given.
  const images = deps.images;
  const term = searchTerm(request);
  if (images && request.title?.trim()) {
    const filters = audiobook ? 'size:Large,layout:Square' : 'size:Large,layout:Tall';
    track(
      (async () => {
        const sites = rankWebImages(await searchImages(images, `${term} (site:amazon.com OR site:goodreads.com)`, filters), audiobook).filter((h) => !seen.has(h.url)).slice(0, SITE_RESULTS);
        for (const hit of sites) {
          seen.add(hit.url);
          offer(hit.url, hit.width, hit.height);
        }
        if (cancelled()) return;
        const web = rankWebImages(await searchImages(images, term, filters), audiobook).filter((h) => !seen.has(h.url)).slice(0, WEB_RESULTS);
        for (const hit of web) {
          seen.add(hit.url);
          offer(hit.url, hit.width, hit.height);
        }
      })(),
    );
  }

  while (events.length > 0 || pending.size > 0) {
    const next = events.shift();
    if (next) {
      yield next;
      continue;
    }
    await new Promise<void>((resolve) => {
      wake = resolve;
    });
    wake = undefined;
  }
}
