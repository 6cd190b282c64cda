// Whole answers of the paged device and app feeds (OPDS 1.2 and 2.0, the Komga API, the app API's book pages), as
// sent, per caller and request, until anything in the catalog changes: the second reader paging through the same
// catalog, or a client refreshing, gets the bytes without a query, a sign-in check or serialization. Applied around
// the routes (app.ts), so the feed builders know nothing of it. See CatalogBytesCache for when an answer is kept.
import { hash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseBasic } from '../core/opds/users.ts';
import { RememberedAnswers } from '../core/remembered-answers.ts';
import { CatalogBytesCache } from '../core/store/catalog-bytes-cache.ts';
import { readingAware } from '../core/store/reading-state.ts';
import { sameGeneration, type Generation, type GenerationSource } from '../core/store/snapshot.ts';
import { keepCompressedCopies } from './compression.ts';
import type { DaemonContext } from './context.ts';
import { noteReleased } from './idle-memory.ts';
import type { RouteHead } from './route-manifest.ts';
import type { RouteRequest } from './route-spec.ts';
import { signInPolicy } from './sign-in-policy.ts';

/**
 * GET routes whose answer is a function of the catalog, the caller and the request alone. Not here: files, covers
 * and page images (large, streamed, cached by clients), answers read from the book file itself (Komga's page list),
 * random picks (`surprise`, `random`), Kobo sync (each answer moves the device's sync state), and anything that writes.
 */
const PAGE_ROUTES = new Set([
  ...['', '/libraries', '/shelves', '/magic-shelves', '/authors', '/series', '/catalog', '/recent', '/search.opds'].flatMap((path) => [`/api/v1/opds${path}`, `/api/v2/opds${path}`, `/api/opds${path}`]),
  ...[
    '/libraries',
    '/libraries/{libraryId}',
    '/series',
    '/series/{seriesId}',
    '/series/{seriesId}/books',
    '/books',
    '/books/{bookId}',
    '/collections',
    '/collections/{collectionId}',
    '/collections/{collectionId}/series',
    '/readlists',
    '/genres',
    '/tags',
    '/publishers',
    '/authors',
    '/authors/names',
    '/authors/roles',
    '/books/latest',
    '/books/ondeck',
    '/books/{bookId}/readlists',
    '/series/new',
    '/series/updated',
    '/series/{seriesId}/collections',
    '/series/release-dates',
    '/age-ratings',
    '/languages',
    '/sharing-labels',
    '/tags/book',
    '/tags/series',
  ].map((path) => `/komga/api/v1${path}`),
  '/komga/api/v2/authors',
  '/komga/api/v2/series/{seriesId}/read-progress/tachiyomi',
  ...[
    '/books',
    '/books/search',
    '/books/continue-reading',
    '/books/continue-listening',
    '/books/recently-added',
    '/books/recently-scanned',
    '/books/{bookId}',
    '/authors',
    '/authors/{authorId}',
    '/series',
    '/series/{seriesName}/books',
    '/libraries',
    '/filter-options',
    '/shelves',
    '/shelves/magic',
    '/shelves/magic/{magicShelfId}/books',
  ].map((path) => `/api/v1/app${path}`),
]);

/**
 * Komga's lists of names (genres, tags, authors…) show nothing of anyone's reading: kept while the catalog is unchanged
 * whatever is read meanwhile. Every other page shows or filters by the caller's reading state (progress, read status,
 * read counts, OPDS comic streams' last page read, magic shelves' read-status rules) and is also dropped when reading
 * state changes.
 */
const CONTENT_ONLY_ROUTES = new Set([
  ...['/libraries', '/libraries/{libraryId}', '/genres', '/tags', '/publishers', '/authors', '/authors/names', '/authors/roles', '/age-ratings', '/languages', '/sharing-labels', '/tags/book', '/tags/series', '/series/release-dates'].map(
    (path) => `/komga/api/v1${path}`,
  ),
  '/komga/api/v2/authors',
]);

export function isCachedPageRoute(head: Pick<RouteHead, 'method' | 'url'>): boolean {
  return head.method === 'GET' && PAGE_ROUTES.has(head.url);
}

/** Where a route's pages are kept: apart from reading state (lists of names), or dropped with it too. */
export type ShelfKind = 'content' | 'reading';

export function shelfKindOf(head: Pick<RouteHead, 'url'>): ShelfKind {
  return CONTENT_ONLY_ROUTES.has(head.url) ? 'content' : 'reading';
}

/** The request parts an answer may depend on besides the caller and the URL (content negotiation, links). */
const KEYED_HEADERS = ['accept', 'accept-language', 'host', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-prefix', 'x-forwarded-port'] as const;
/** The answer's own headers, replayed with the bytes; the ones every response gets (CORS, isolation) are set anew. */
const KEPT_HEADERS = ['content-type', 'cache-control', 'vary', 'etag', 'last-modified', 'content-language', 'link'] as const;
/** Only text: a page of JSON or XML, never an image or a file. */
const TEXT_TYPE = /^application\/([\w.+-]*\+)?(json|xml)\b|^text\//;

const CACHE_BYTES = 32 * 1024 * 1024;
/** Some feeds also depend on the time of day ("recent": the last N days); none is served older than this. */
const MAX_AGE_MS = 60_000;

/**
 * Pages built at once. A page is a few ms of synchronous work split by awaits; with 64 clients asking, the builds
 * interleave and every one of them finishes late, some seconds late. Built two at a time in arrival order, each waits
 * at most for the ones ahead of it, and kept pages (answered before the gate) never wait behind a build.
 */
const BUILD_SLOTS = 2;

/** Feeds whose last build is remembered (the oldest forgotten first): enough for every reader's feeds at once. */
const FEEDS_REMEMBERED = 2048;

type Headers = Partial<Record<(typeof KEPT_HEADERS)[number], string>>;

/** Where pages of one kind are kept, and the generation they are kept under. */
interface PageShelf {
  cache: CatalogBytesCache<Headers>;
  source: GenerationSource;
}

interface Pending {
  key: string;
  shelf: PageShelf;
  feed: string;
  since: Generation | undefined;
  /** The generation the build started at (kept or not). */
  startedAt: Generation | undefined;
  released: boolean;
}

/** A first-in, first-out gate with a fixed number of slots. */
class BuildGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  enter(): Promise<void> {
    if (this.running < BUILD_SLOTS) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  leave(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}

/**
 * Per daemon: the gate, and the pages being built or waiting for a slot, by key. A request for a page already on its
 * way waits for that one build instead of queueing a build of its own behind every other page: 64 clients asking for
 * the same page cost one build, and none of them waits for the pages queued after it.
 */
interface Builds {
  gate: BuildGate;
  underway: Map<string, Promise<void>>;
  /**
   * Per feed (a page's key without its page number): the first build of one of its pages since the catalog changed,
   * while it runs. That build does the work every page of the feed shares (the feed's ordered id list, its totals,
   * kept by generation in the feed builders); other pages of the feed wait for it rather than doing that work again
   * at the same time (a second 70-100 ms list at 100,000 books, run on the same thread, that every request waits for).
   */
  firstBuilds: Map<string, Promise<void>>;
  /** Per feed: the generation a page of it was last built at, the oldest first. */
  builtAt: Map<string, Generation>;
  /** Pages built (figures, tests). */
  count: number;
}

const shelves = new WeakMap<DaemonContext, { content: PageShelf; reading: PageShelf }>();
const builds = new WeakMap<DaemonContext, Builds>();
const hits = new WeakMap<DaemonContext, number>();
const pending = new WeakMap<FastifyRequest, Pending>();
/** Ends the wait of the requests that share a build (once the page is kept, or the build ended without a page). */
const buildEnds = new WeakMap<FastifyRequest, () => void>();

function buildsOf(ctx: DaemonContext): Builds {
  let state = builds.get(ctx);
  if (!state) builds.set(ctx, (state = { gate: new BuildGate(), underway: new Map(), firstBuilds: new Map(), builtAt: new Map(), count: 0 }));
  return state;
}

function shelvesOf(ctx: DaemonContext): { content: PageShelf; reading: PageShelf } {
  let known = shelves.get(ctx);
  if (!known) {
    // The budget split: the lists of names are few and small, the pages of books many.
    const cache = (bytes: number): CatalogBytesCache<Headers> => new CatalogBytesCache<Headers>(bytes, CACHE_BYTES / 16, MAX_AGE_MS, noteReleased);
    shelves.set(ctx, (known = { content: { cache: cache(CACHE_BYTES / 4), source: ctx.store }, reading: { cache: cache((CACHE_BYTES * 3) / 4), source: readingAware(ctx.store) } }));
  }
  return known;
}

/**
 * Who is asking: the signed-in user, or for the routes that sign in themselves (HTTP Basic on OPDS and Komga) the
 * credentials, hashed. An answer kept for credentials was a 200 for exactly those credentials at this very state of
 * the catalog (which holds the accounts, their passwords and the switches), so replaying it admits nobody new.
 * A promise when the sign-in policy has to look the address and name up (the route's own check then finds them
 * remembered).
 */
function callerOf(request: RouteRequest, ctx: DaemonContext): string | undefined | Promise<string | undefined> {
  if (request.principal) return `u${request.principal.userId}`;
  const authorization = request.headers.authorization;
  if (!authorization) return undefined;
  const caller = `c${hash('sha256', authorization, 'base64url')}`;
  // An address or name the sign-in policy refuses gets its refusal from the route, even with the right credentials.
  const policy = signInPolicy(ctx);
  const ip = request.ip ?? 'unknown';
  const name = nameIn(caller, authorization);
  const blocked = policy.knownBlocked(ip, 'basic', name);
  if (blocked !== undefined) return blocked ? undefined : caller;
  return policy.isBlocked(ip, 'basic', name).then((refused) => (refused ? undefined : caller));
}

/**
 * The account name in HTTP Basic credentials, remembered by the credentials' digest (never by the credentials
 * themselves): a reader sends the same header with every request, and decoding it allocated more than the rest of the
 * lookup. Emptied when full.
 */
const namesByCaller = new RememberedAnswers<string, string | undefined>(1024);

const usernameIn = (_caller: string, authorization: string): string | undefined => parseBasic(authorization)?.username;

function nameIn(caller: string, authorization: string): string | undefined {
  return namesByCaller.get(caller, usernameIn, authorization);
}

/** The feed a page belongs to: its key without the page number (`page=` in the query). */
export function feedOf(key: string): string {
  return key.replace(/([?&])page=[^&\s]*&?/, '$1');
}

function keyOf(request: RouteRequest, caller: string): string {
  let key = `${caller} ${request.url}`;
  for (const name of KEYED_HEADERS) {
    const value = request.headers[name];
    if (value !== undefined) key += `\n${name}:${String(value)}`;
  }
  return key;
}

function answerKept(reply: FastifyReply, ctx: DaemonContext, shelf: PageShelf, key: string): boolean {
  const hit = shelf.cache.lookup(shelf.source, key);
  if (!hit) return false;
  hits.set(ctx, (hits.get(ctx) ?? 0) + 1);
  // One header at a time: reply.headers() makes an array of the names on every answer.
  const meta = hit.meta;
  if (meta) for (const name in meta) reply.header(name, meta[name as keyof Headers]);
  keepCompressedCopies(hit.value);
  reply.send(hit.value);
  return true;
}

/**
 * preHandler: answers from the cache when it holds this page; otherwise waits for the build of the same page already
 * underway, or for a build slot (the page may have been kept meanwhile by a request ahead in the queue), and notes what
 * to keep once the page is built.
 */
export function answerFromPageCache(request: RouteRequest, reply: FastifyReply, ctx: DaemonContext, kind: ShelfKind, done: (error?: Error) => void): void {
  const shelf = shelvesOf(ctx)[kind];
  const caller = callerOf(request, ctx);
  if (caller instanceof Promise) caller.then((known) => answerFor(request, reply, ctx, shelf, known, done), done);
  else answerFor(request, reply, ctx, shelf, caller, done);
}

function answerFor(request: RouteRequest, reply: FastifyReply, ctx: DaemonContext, shelf: PageShelf, caller: string | undefined, done: () => void): void {
  if (caller === undefined) return done();
  answerOrBuild(request, reply, ctx, shelf, keyOf(request, caller), done);
}

/** `waited`: this request already waited for a first build of its feed (it waits for one at most). */
function answerOrBuild(request: RouteRequest, reply: FastifyReply, ctx: DaemonContext, shelf: PageShelf, key: string, done: () => void, waited = false): void {
  if (answerKept(reply, ctx, shelf, key)) return;
  const underway = buildsOf(ctx).underway.get(key);
  if (!underway) return build(request, reply, ctx, shelf, key, done, waited);
  // When that build kept no page (an error, a change meanwhile), the first of its waiters builds it again.
  void underway.then(() => {
    if (!request.raw.destroyed && !reply.raw.destroyed) answerOrBuild(request, reply, ctx, shelf, key, done, waited);
  });
}

function build(request: RouteRequest, reply: FastifyReply, ctx: DaemonContext, shelf: PageShelf, key: string, done: () => void, waited: boolean): void {
  const state = buildsOf(ctx);
  const feed = feedOf(key);
  // Once only: when the catalog keeps changing faster than a first build ends, waiting again after each change would
  // build the feed's pages one at a time, each redoing the shared work.
  const warm = waited || isWarm(state, feed, shelf.cache.generationNow(shelf.source));
  const first = warm ? undefined : state.firstBuilds.get(feed);
  if (first) {
    void first.then(() => {
      if (!request.raw.destroyed && !reply.raw.destroyed) answerOrBuild(request, reply, ctx, shelf, key, done, true);
    });
    return;
  }
  let ended!: () => void;
  const end = new Promise<void>((resolve) => (ended = resolve));
  state.underway.set(key, end);
  if (!warm) state.firstBuilds.set(feed, end);
  void end.then(() => {
    if (state.underway.get(key) === end) state.underway.delete(key);
    if (state.firstBuilds.get(feed) === end) state.firstBuilds.delete(feed);
  });
  void state.gate.enter().then(() => {
    // A client that gave up while waiting gets nothing built; neither does a page kept meanwhile.
    if (request.raw.destroyed || reply.raw.destroyed || answerKept(reply, ctx, shelf, key)) {
      state.gate.leave();
      ended();
      return;
    }
    state.count++;
    const since = shelf.cache.generationNow(shelf.source);
    pending.set(request, { key, shelf, feed, since, startedAt: since, released: false });
    buildEnds.set(request, ended);
    done();
  });
}

function isWarm(state: Builds, feed: string, now: Generation | undefined): boolean {
  const builtAt = state.builtAt.get(feed);
  return builtAt !== undefined && now !== undefined && sameGeneration(builtAt, now);
}

/** Notes that a page of `feed` was built at `generation`: the feed's shared work is then done for that generation. */
function noteBuilt(state: Builds, feed: string, generation: Generation): void {
  state.builtAt.delete(feed);
  state.builtAt.set(feed, generation);
  if (state.builtAt.size > FEEDS_REMEMBERED) state.builtAt.delete(state.builtAt.keys().next().value as string);
}

/** onResponse and onRequestAbort: frees the build slot of a request that had one (once). */
export function leaveBuild(request: FastifyRequest, ctx: DaemonContext): void {
  const wanted = pending.get(request);
  if (!wanted || wanted.released) return;
  wanted.released = true;
  builds.get(ctx)?.gate.leave();
  buildEnds.get(request)?.();
}

/**
 * onSend: keeps a page just built (200, text, whole) if the catalog did not change while it was being built. Returns
 * the payload to send: the kept bytes themselves when kept, so that their compressed forms are made once, for this
 * answer and every later one.
 */
export function keepPage(request: FastifyRequest, reply: FastifyReply, ctx: DaemonContext, payload: unknown): unknown {
  const wanted = pending.get(request);
  if (!wanted) return payload;
  // Answered (kept or not): what the feed's pages share was worked out at that generation.
  if (wanted.startedAt && !wanted.released) noteBuilt(buildsOf(ctx), wanted.feed, wanted.startedAt);
  // Kept before the slot is left: the requests waiting for this build then find the page.
  const kept = offerPage(reply, ctx, wanted, payload);
  leaveBuild(request, ctx);
  if (!kept) return payload;
  keepCompressedCopies(kept, copiesCounted(wanted, kept));
  return kept;
}

/** A kept page's compressed copies live as long as it does: they count in the cache's size. */
function copiesCounted(wanted: Pending, page: Buffer): (delta: number) => void {
  return (delta) => wanted.shelf.cache.grow(wanted.key, page, delta);
}

function offerPage(reply: FastifyReply, ctx: DaemonContext, wanted: Pending, payload: unknown): Buffer | undefined {
  if (!wanted.since || reply.statusCode !== 200 || !(typeof payload === 'string' || Buffer.isBuffer(payload))) return undefined;
  const type = reply.getHeader('content-type');
  if (typeof type !== 'string' || !TEXT_TYPE.test(type)) return undefined;
  const headers: Headers = {};
  for (const name of KEPT_HEADERS) {
    const value = reply.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  const kept = wanted.shelf.cache.offer(wanted.shelf.source, wanted.key, wanted.since, payload, headers);
  wanted.since = undefined;
  return kept;
}

/** What the cache holds, how many answers it gave and how many pages were built (tests, figures). */
export function pageCacheSize(ctx: DaemonContext): { entries: number; bytes: number; hits: number; builds: number } {
  const { content, reading } = shelvesOf(ctx);
  return { entries: content.cache.size.entries + reading.cache.size.entries, bytes: content.cache.size.bytes + reading.cache.size.bytes, hits: hits.get(ctx) ?? 0, builds: builds.get(ctx)?.count ?? 0 };
}
