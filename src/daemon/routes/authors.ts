// AuthorController and BookMediaController's author photos: reading, editing, matching with Audnexus, photos from an
// upload, a URL or an image search, unmatching and deleting. Non-admins only reach authors of books they may see;
// any other author is "not found" to them.
import { createReadStream } from 'node:fs';
import { PassThrough } from 'node:stream';
import Type from 'typebox';
import { deleteAuthors, unmatchAuthors, updateAuthor, type AuthorUpdate } from '../../core/authors/author-edit.ts';
import { AuthorError } from '../../core/authors/author-error.ts';
import {
  autoMatchAuthors,
  lookupAuthorByAsin,
  matchAuthor,
  quickMatchAuthor,
  searchAuthorMetadata,
  setAuthorPhotoFromUrl,
  type AuthorMatchDeps,
  type AuthorMatchRequest,
} from '../../core/authors/author-match.ts';
import { searchAuthorPhotos } from '../../core/authors/author-photo-search.ts';
import { authorIdsWithPhoto, authorImagesRoot, authorPhotoResource, hasAuthorPhoto, makeAuthorImages, saveAuthorImages, type AuthorPhotoVariant } from '../../core/authors/author-photos.ts';
import { authorById, authorDetails, authorDetailsByName, authorNamesOfBook, authorSummary, detailsJson, listAuthors, visibleAuthor, visibleAuthorIds, type AuthorRow } from '../../core/authors/authors.ts';
import type { Principal } from '../../core/auth/principal.ts';
import { metadataProviderBaseUrls } from '../../core/config.ts';
import { CoverImageError } from '../../core/covers/cover-upload.ts';
import { isNotModified } from '../../core/media/conditional-requests.ts';
import { DUCKDUCKGO_URL } from '../../core/metadata/duckduckgo-images.ts';
import { ProviderError } from '../../core/metadata/provider.ts';
import { sharedRateLimiter } from '../../core/metadata/rate-limiter.ts';
import { requireBookAccess } from '../access.ts';
import { principalOf } from '../authenticate.ts';
import type { DaemonContext } from '../context.ts';
import { ApiError, badRequest } from '../http-errors.ts';
import { providerHttpError } from '../metadata-runtime.ts';
import { imageUrlRefusal } from '../image-url-refusal.ts';
import { imageUploadLimit, readBufferUpload, uploadLimitMb } from '../multipart-upload.ts';
import { adminOr, type RouteRequest, type RouteSpec } from '../route-spec.ts';
import { nullable } from '../schema-types.ts';

const AuthorParams = Type.Object({ authorId: Type.Integer() });
const AuthorIds = Type.Array(Type.Integer(), { maxItems: 10_000 });
const optionalText = nullable(Type.String());
const optionalFlag = nullable(Type.Boolean());
const AuthorUpdateRequest = Type.Object(
  { name: optionalText, description: optionalText, asin: optionalText, nameLocked: optionalFlag, descriptionLocked: optionalFlag, asinLocked: optionalFlag, photoLocked: optionalFlag },
  { additionalProperties: Type.Unknown() },
);
const AuthorMatchRequestSchema = Type.Object({ source: optionalText, asin: optionalText, region: optionalText }, { additionalProperties: Type.Unknown() });

const EDIT = adminOr('canEditMetadata');

const AUTHOR_STATUS = { NOT_FOUND: 404, INVALID: 400, NAME_TAKEN: 400, UNSUPPORTED_SOURCE: 400, NO_RESULT: 400 } as const;

/** Domain refusals and source failures as Grimmory-shaped HTTP errors. */
async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AuthorError) throw new ApiError(AUTHOR_STATUS[error.code], error.message);
    if (error instanceof CoverImageError) throw badRequest(error.message);
    if (error instanceof ProviderError) providerHttpError(error);
    throw error;
  }
}

const notFound = (authorId: number | string): ApiError => new ApiError(404, `Author not found with ID: ${authorId}`);

const imagesRoot = (ctx: DaemonContext): string => authorImagesRoot(ctx.config.dataDir);

/** The author, if the caller may see them; 404 otherwise, whether they exist or not. */
async function requireAuthor(ctx: DaemonContext, principal: Principal, authorId: number): Promise<AuthorRow> {
  const author = await visibleAuthor(ctx.store.db, principal, authorId);
  if (!author) throw notFound(authorId);
  return author;
}

async function detailsOf(ctx: DaemonContext, authorId: number): Promise<Record<string, unknown>> {
  const author = await authorById(ctx.store.db, authorId);
  if (!author) throw notFound(authorId);
  return detailsJson(author);
}

/** A change to one author the caller may see; the answer is the author as it is afterwards. */
function authorChange(work: (ctx: DaemonContext, authorId: number, request: RouteRequest) => Promise<unknown>): RouteSpec['handler'] {
  return async (request, _reply, ctx) => {
    const { authorId } = request.params as { authorId: number };
    await requireAuthor(ctx, principalOf(request), authorId);
    await mapped(() => work(ctx, authorId, request));
    return detailsOf(ctx, authorId);
  };
}

/**
 * The JSON list of author ids a bulk route takes; a missing body is refused as Spring refuses it. (Schema coercion
 * turns an absent body into `[0]`, so absence is told by the missing content type.)
 */
function authorIdsOf(request: RouteRequest): number[] {
  if (request.headers['content-type'] === undefined || !Array.isArray(request.body)) throw badRequest('Request body is missing or malformed.');
  return request.body as number[];
}

async function matchDeps(ctx: DaemonContext): Promise<AuthorMatchDeps> {
  return {
    db: ctx.store.db,
    http: ctx.http,
    imagesRoot: imagesRoot(ctx),
    runtime: { http: ctx.http, baseUrls: metadataProviderBaseUrls(ctx.config) },
    maxPhotoBytes: (await imageUploadLimit(ctx)).bytes,
    onPhotoProblem: (authorId, url, error) => ctx.log.warn({ authorId, url, reason: error instanceof Error ? error.message : String(error) }, 'author photo not saved'),
  };
}

/** The `file` part in memory, bounded by the photo limit. */
async function readPhotoUpload(request: RouteRequest, ctx: DaemonContext): Promise<Buffer> {
  return (await readBufferUpload(request, await imageUploadLimit(ctx))).file;
}

/** A photo from a URL: refusals of the outgoing client (a private address, not an image, too large) as 400s. */
async function photoFromUrl(ctx: DaemonContext, authorId: number, rawUrl: string): Promise<void> {
  const url = rawUrl.trim();
  if (url === '') throw badRequest('Validation error', ['url: must not be blank']);
  const deps = await matchDeps(ctx);
  try {
    await mapped(() => setAuthorPhotoFromUrl(deps, authorId, url));
  } catch (error) {
    throw imageUrlRefusal(error, 'photo', uploadLimitMb(deps.maxPhotoBytes / (1024 * 1024)));
  }
}

const sseData = (value: unknown): string => `data:${JSON.stringify(value)}\n\n`;
const sseComment = (text: string): string => `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;

/** DuckDuckGo is asked twice per search; half a second apart keeps it from throttling (shared with the cover search). */
const IMAGE_SEARCH_INTERVAL_MS = 500;

function mediaRoute(variant: AuthorPhotoVariant): RouteSpec {
  return {
    method: 'GET',
    url: `/api/v1/media/author/{authorId}/${variant}`,
    auth: 'jwt-or-query',
    schema: { params: AuthorParams },
    handler: async (request, reply, ctx) => {
      const { authorId } = request.params as { authorId: number };
      const visible = await visibleAuthor(ctx.store.db, principalOf(request), authorId);
      const image = visible ? await authorPhotoResource(imagesRoot(ctx), authorId, variant) : undefined;
      // Grimmory answers a missing photo with an empty 404.
      if (!image) return reply.status(404).send();
      // The same URL serves each new photo: the browser revalidates every time (a 304 costs nothing).
      reply.type('image/jpeg').header('ETag', image.etag).header('Last-Modified', image.lastModified.toUTCString()).header('Cache-Control', 'private, no-cache');
      if (isNotModified(request.headers['if-none-match'], request.headers['if-modified-since'], image.etag, image.lastModified)) return reply.status(304).send();
      return reply.header('Content-Length', image.size).send(createReadStream(image.path));
    },
  };
}

export const authorRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/authors',
    auth: 'jwt',
    handler: async (request, _reply, ctx) => listAuthors(ctx.store.db, principalOf(request), await authorIdsWithPhoto(imagesRoot(ctx))),
  },
  {
    method: 'GET',
    url: '/api/v1/authors/by-name',
    auth: 'jwt',
    schema: { querystring: Type.Object({ name: Type.String() }) },
    handler: async (request, _reply, ctx) => {
      const { name } = request.query as { name: string };
      const author = await authorDetailsByName(ctx.store.db, principalOf(request), name);
      if (!author) throw notFound(name);
      return author;
    },
  },
  {
    method: 'GET',
    url: '/api/v1/authors/book/{bookId}',
    auth: 'jwt',
    schema: { params: Type.Object({ bookId: Type.Integer() }) },
    handler: async (request, _reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      await requireBookAccess(ctx, principalOf(request), bookId);
      return authorNamesOfBook(ctx.store.db, bookId);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/authors/{authorId}',
    auth: 'jwt',
    schema: { params: AuthorParams },
    handler: async (request, _reply, ctx) => {
      const { authorId } = request.params as { authorId: number };
      const author = await authorDetails(ctx.store.db, principalOf(request), authorId);
      if (!author) throw notFound(authorId);
      return author;
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/authors/{authorId}',
    auth: 'jwt',
    rule: EDIT,
    schema: { params: AuthorParams, body: AuthorUpdateRequest },
    handler: authorChange((ctx, authorId, request) => updateAuthor(ctx.store.db, authorId, request.body as AuthorUpdate)),
  },
  {
    method: 'POST',
    url: '/api/v1/authors/{authorId}/photo/upload',
    auth: 'jwt',
    rule: EDIT,
    multipart: true,
    schema: { params: AuthorParams },
    handler: async (request, reply, ctx) => {
      const { authorId } = request.params as { authorId: number };
      await requireAuthor(ctx, principalOf(request), authorId);
      const image = await readPhotoUpload(request, ctx);
      const images = await mapped(() => makeAuthorImages(image));
      await saveAuthorImages(imagesRoot(ctx), authorId, images);
      return reply.status(200).send();
    },
  },
  {
    method: 'GET',
    url: '/api/v1/authors/{authorId}/search-metadata',
    auth: 'jwt',
    rule: EDIT,
    schema: { params: AuthorParams, querystring: Type.Object({ q: Type.Optional(Type.String()), asin: Type.Optional(Type.String()), region: Type.Optional(Type.String({ default: 'us' })) }) },
    handler: async (request, _reply, ctx) => {
      const { authorId } = request.params as { authorId: number };
      const { q, asin, region } = request.query as { q?: string; asin?: string; region?: string };
      await requireAuthor(ctx, principalOf(request), authorId);
      const deps = await matchDeps(ctx);
      if (asin !== undefined && asin.trim() !== '') return mapped(() => lookupAuthorByAsin(deps, asin, region ?? 'us'));
      return mapped(() => searchAuthorMetadata(deps, q ?? '', region ?? 'us'));
    },
  },
  {
    method: 'POST',
    url: '/api/v1/authors/{authorId}/match',
    auth: 'jwt',
    rule: EDIT,
    schema: { params: AuthorParams, body: AuthorMatchRequestSchema },
    handler: authorChange(async (ctx, authorId, request) => matchAuthor(await matchDeps(ctx), authorId, request.body as AuthorMatchRequest)),
  },
  {
    method: 'POST',
    url: '/api/v1/authors/{authorId}/quick-match',
    auth: 'jwt',
    rule: EDIT,
    schema: { params: AuthorParams, querystring: Type.Object({ region: Type.Optional(Type.String({ default: 'us' })) }) },
    handler: authorChange(async (ctx, authorId, request) => quickMatchAuthor(await matchDeps(ctx), authorId, (request.query as { region?: string }).region)),
  },
  {
    // Server-sent events, one `data:` AuthorSummary per matched author. The run is a background job (shutdown waits
    // for it) that stops, after the author in hand, when the client goes away.
    method: 'POST',
    url: '/api/v1/authors/auto-match',
    auth: 'jwt',
    rule: EDIT,
    schema: { body: AuthorIds },
    handler: async (request, reply, ctx) => {
      const principal = principalOf(request);
      const ids = await visibleAuthorIds(ctx.store.db, principal, authorIdsOf(request));
      const deps = await matchDeps(ctx);
      const root = imagesRoot(ctx);
      const out = new PassThrough();
      let gone = false;
      reply.raw.on('close', () => {
        gone = true;
      });
      const job = (async () => {
        let matched = 0;
        for await (const event of autoMatchAuthors(deps, ids, { region: 'us', cancelled: () => gone })) {
          if (event.outcome === 'matched') {
            matched++;
            const author = await authorById(ctx.store.db, event.authorId);
            if (author && !gone) out.write(sseData(await authorSummary(ctx.store.db, principal, author, await hasAuthorPhoto(root, author.id))));
          } else if (event.outcome === 'failed') {
            const reason = event.error instanceof Error ? event.error.message : String(event.error);
            ctx.log.warn({ authorId: event.authorId, reason }, 'auto-match: an author was skipped');
            if (!gone) out.write(sseComment(`author ${event.authorId}: ${reason}`));
          }
        }
        ctx.log.info({ authors: ids.length, matched }, 'author auto-match finished');
      })()
        .catch((error: unknown) => ctx.log.error({ err: error }, 'author auto-match failed'))
        .finally(() => out.end());
      ctx.background.add(job);
      void job.finally(() => ctx.background.delete(job));
      reply.header('cache-control', 'no-cache');
      return reply.type('text/event-stream').send(out);
    },
  },
  {
    method: 'POST',
    url: '/api/v1/authors/unmatch',
    auth: 'jwt',
    rule: EDIT,
    schema: { body: AuthorIds },
    handler: async (request, reply, ctx) => {
      const ids = await visibleAuthorIds(ctx.store.db, principalOf(request), authorIdsOf(request));
      await unmatchAuthors(ctx.store.db, imagesRoot(ctx), ids);
      return reply.status(200).send();
    },
  },
  {
    method: 'GET',
    url: '/api/v1/authors/{authorId}/search-photos',
    auth: 'jwt',
    rule: EDIT,
    schema: { params: AuthorParams, querystring: Type.Object({ q: Type.String() }) },
    handler: async (request, reply, ctx) => {
      const { authorId } = request.params as { authorId: number };
      const { q } = request.query as { q: string };
      await requireAuthor(ctx, principalOf(request), authorId);
      if (q.trim() === '') throw badRequest('Validation error', ['q: must not be blank']);
      const client = {
        http: ctx.http,
        baseUrl: (metadataProviderBaseUrls(ctx.config).DuckDuckGo ?? DUCKDUCKGO_URL).replace(/\/+$/, ''),
        limiter: sharedRateLimiter(`DuckDuckGo:${IMAGE_SEARCH_INTERVAL_MS}`, IMAGE_SEARCH_INTERVAL_MS),
        timeoutMs: 15_000,
      };
      let body: string;
      try {
        body = (await searchAuthorPhotos(client, q)).map(sseData).join('');
      } catch (error) {
        if (!(error instanceof ProviderError)) throw error;
        request.log.warn({ provider: error.provider, code: error.code }, `author photo search: ${error.message}`);
        body = sseComment(error.message);
      }
      reply.header('cache-control', 'no-cache');
      return reply.type('text/event-stream').send(body);
    },
  },
  {
    method: 'POST',
    url: '/api/v1/authors/{authorId}/photo/url',
    auth: 'jwt',
    rule: EDIT,
    schema: { params: AuthorParams, querystring: Type.Object({ url: Type.String() }) },
    handler: async (request, reply, ctx) => {
      const { authorId } = request.params as { authorId: number };
      await requireAuthor(ctx, principalOf(request), authorId);
      await photoFromUrl(ctx, authorId, (request.query as { url: string }).url);
      return reply.status(200).send();
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/authors',
    auth: 'jwt',
    rule: adminOr('canDeleteBook'),
    schema: { body: AuthorIds },
    handler: async (request, reply, ctx) => {
      const ids = await visibleAuthorIds(ctx.store.db, principalOf(request), authorIdsOf(request));
      const { deleted, books } = await deleteAuthors(ctx.store.db, imagesRoot(ctx), ids);
      if (deleted > 0) ctx.log.info({ authors: deleted, books: books.length }, 'authors deleted');
      return reply.status(200).send();
    },
  },
  mediaRoute('photo'),
  mediaRoute('thumbnail'),
];
