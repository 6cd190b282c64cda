// BookCoverController's cover search: candidate covers for a book as server-sent events, one `data:` line per
// CoverImage, from the metadata providers that are on and DuckDuckGo's image search (as Grimmory searches).
import { Readable } from 'node:stream';
import Type from 'typebox';
import { metadataProviderBaseUrls } from '../../core/config.ts';
import { queryFor } from '../../core/metadata/book-match.ts';
import { searchCovers, type CoverEvent, type CoverFetchRequest } from '../../core/metadata/cover-search.ts';
import { DUCKDUCKGO_URL } from '../../core/metadata/duckduckgo-images.ts';
import { readCurrentMetadata } from '../../core/metadata/metadata-apply.ts';
import { sharedRateLimiter } from '../../core/metadata/rate-limiter.ts';
import { requireBookAccess } from '../access.ts';
import { principalOf } from '../authenticate.ts';
import { badRequest } from '../http-errors.ts';
import { providerRuntimeFor } from '../metadata-runtime.ts';
import { adminOr, type RouteSpec, type RouteRequest } from '../route-spec.ts';

const optionalText = Type.Optional(Type.Union([Type.String(), Type.Null()]));
const CoverFetchRequestSchema = Type.Object({
  bookId: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  isbn: optionalText,
  title: optionalText,
  author: optionalText,
  coverType: optionalText,
});
type CoverFetchBody = Partial<Record<'isbn' | 'title' | 'author' | 'coverType', string | null>>;

/** DuckDuckGo is asked four times per search at most; half a second apart keeps it from throttling. */
const IMAGE_SEARCH_INTERVAL_MS = 500;
const IMAGE_SEARCH_TIMEOUT_MS = 15_000;

const text = (v: string | null | undefined): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/** SSE lines: an image as `data:`; a source that failed as a comment, which clients skip. */
async function* sse(events: AsyncGenerator<CoverEvent>, request: RouteRequest): AsyncGenerator<string> {
  for await (const event of events) {
    if ('image' in event) {
      yield `data:${JSON.stringify(event.image)}\n\n`;
    } else {
      request.log.warn({ provider: event.problem.provider, code: event.problem.code }, `cover search: ${event.problem.message}`);
      yield `: ${event.problem.message.replace(/[\r\n]+/g, ' ')}\n\n`;
    }
  }
}

export const coverSearchRoutes: RouteSpec[] = [
  {
    method: 'POST',
    url: '/api/v1/books/{bookId}/metadata/covers',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: Type.Object({ bookId: Type.Integer() }), body: Type.Union([CoverFetchRequestSchema, Type.Null()]) },
    handler: async (request, reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      await requireBookAccess(ctx, principalOf(request), bookId);
      const body = (request.body ?? {}) as CoverFetchBody;
      // What the request leaves out comes from the book itself.
      const current = await readCurrentMetadata(ctx.store.db, bookId);
      const fromBook = current ? queryFor(current) : {};
      const search: CoverFetchRequest = {};
      const isbn = text(body.isbn) ?? fromBook.isbn;
      const title = text(body.title) ?? fromBook.title;
      const author = text(body.author) ?? (text(body.title) ? undefined : fromBook.author);
      if (isbn) search.isbn = isbn;
      if (title) search.title = title;
      if (author) search.author = author;
      const coverType = text(body.coverType);
      if (coverType) search.coverType = coverType;
      if (!search.title && !search.isbn) throw badRequest('A title or an ISBN is needed to search for covers.');

      const baseUrls = metadataProviderBaseUrls(ctx.config);
      const images = {
        http: ctx.http,
        baseUrl: (baseUrls.DuckDuckGo ?? DUCKDUCKGO_URL).replace(/\/+$/, ''),
        limiter: sharedRateLimiter(`DuckDuckGo:${IMAGE_SEARCH_INTERVAL_MS}`, IMAGE_SEARCH_INTERVAL_MS),
        timeoutMs: IMAGE_SEARCH_TIMEOUT_MS,
      };
      let gone = false;
      // The response closes when it is done or when the client goes away; either way, no new work is started.
      reply.raw.on('close', () => {
        gone = true;
      });
      const events = searchCovers(search, { runtime: await providerRuntimeFor(ctx), http: ctx.http, images, cancelled: () => gone });
      reply.header('cache-control', 'no-cache');
      return reply.type('text/event-stream').send(Readable.from(sse(events, request), { objectMode: false }));
    },
  },
];
