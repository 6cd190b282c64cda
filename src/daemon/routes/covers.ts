// BookCoverController (all but the cover search): covers and audiobook covers from an upload, a URL, the book's own
// file or generated from its title; the same for many books at once, in the background.
import Type from 'typebox';
import type { Principal } from '../../core/auth/principal.ts';
import type { CoverKind } from '../../core/covers/cover-images.ts';
import { coverJobBooks, runCoverJob, type CoverSelection } from '../../core/covers/cover-jobs.ts';
import { CoverChangeError, coverLocked, generateCover, regenerateCover, setCoverImage } from '../../core/covers/cover-update.ts';
import { CoverImageError, checkCoverImage } from '../../core/covers/cover-upload.ts';
import { updateMatchScore } from '../../core/metadata/match-scores.ts';
import { requireBookAccess } from '../access.ts';
import { principalOf } from '../authenticate.ts';
import type { DaemonContext } from '../context.ts';
import { ApiError, badRequest } from '../http-errors.ts';
import { imageUrlRefusal } from '../image-url-refusal.ts';
import { imageUploadLimit, readBufferUpload } from '../multipart-upload.ts';
import { adminOr, type RouteRequest, type RouteSpec } from '../route-spec.ts';
import { inBackground } from './metadata-background.ts';
import { metadataOf } from './metadata-edit.ts';

const BookParams = Type.Object({ bookId: Type.Integer() });
const UrlBody = Type.Object({ url: Type.Optional(Type.Union([Type.String(), Type.Null()])) }, { additionalProperties: Type.Unknown() });
const BulkBookIdsRequest = Type.Object({ bookIds: Type.Array(Type.Integer(), { minItems: 1 }) });

const CHANGE_STATUS = { NOT_FOUND: 404, LOCKED: 403, NO_FILE: 400, NO_COVER: 400, BAD_IMAGE: 400 } as const;

async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof CoverChangeError) throw new ApiError(CHANGE_STATUS[error.code], error.message);
    if (error instanceof CoverImageError) throw badRequest(error.message);
    throw error;
  }
}

/** The `file` part in memory (bounded) and the text fields; the image is checked to be a real cover image. */
async function readCoverUpload(request: RouteRequest, ctx: DaemonContext): Promise<{ image: Buffer; fields: Record<string, string> }> {
  const { file: image, fields } = await readBufferUpload(request, await imageUploadLimit(ctx));
  await mapped(() => checkCoverImage(image));
  return { image, fields };
}

/** Downloads an image through the shared client: public addresses only, image types only, bounded. */
async function downloadCover(ctx: DaemonContext, rawUrl: unknown): Promise<Buffer> {
  if (typeof rawUrl !== 'string' || rawUrl.trim() === '') throw badRequest('Validation error', ['url: must not be blank']);
  const limit = await imageUploadLimit(ctx);
  let body: Buffer;
  try {
    body = (await ctx.http.request({ url: rawUrl.trim(), accept: ['image/'], maxBytes: limit.bytes, timeoutMs: 30_000 })).body;
  } catch (error) {
    throw imageUrlRefusal(error, 'cover', limit);
  }
  await mapped(() => checkCoverImage(body));
  return body;
}

async function changed(ctx: DaemonContext, bookId: number): Promise<Record<string, unknown>> {
  await updateMatchScore(ctx.store.db, bookId);
  return metadataOf(ctx, bookId);
}

/** A new cover of `kind` from the image `imageOf` brings; a locked cover is refused before that is read, as in Grimmory. */
function coverFrom(kind: CoverKind, imageOf: (request: RouteRequest, ctx: DaemonContext) => Promise<Buffer>): RouteSpec['handler'] {
  return async (request, _reply, ctx) => {
    const { bookId } = request.params as { bookId: number };
    await requireBookAccess(ctx, principalOf(request), bookId);
    if (await coverLocked(ctx.store.db, bookId, kind)) throw new ApiError(403, 'Attempt to update locked metadata');
    const image = await imageOf(request, ctx);
    await mapped(() => setCoverImage(ctx.store.db, ctx.paths.covers, bookId, kind, image));
    return changed(ctx, bookId);
  };
}

const coverFromUpload = (kind: CoverKind): RouteSpec['handler'] => coverFrom(kind, async (request, ctx) => (await readCoverUpload(request, ctx)).image);
const coverFromUrl = (kind: CoverKind): RouteSpec['handler'] => coverFrom(kind, (request, ctx) => downloadCover(ctx, (request.body as { url?: unknown } | undefined)?.url));

const regenerate =
  (kind: CoverKind) =>
  (ctx: DaemonContext, bookId: number): Promise<void> =>
    regenerateCover(ctx.store.db, ctx.paths.covers, bookId, kind);
const generate =
  (kind: CoverKind) =>
  (ctx: DaemonContext, bookId: number): Promise<void> =>
    generateCover(ctx.store.db, ctx.paths.covers, bookId, kind);

function singleBook(work: (ctx: DaemonContext, bookId: number) => Promise<void>): RouteSpec['handler'] {
  return async (request, _reply, ctx) => {
    const { bookId } = request.params as { bookId: number };
    await requireBookAccess(ctx, principalOf(request), bookId);
    await mapped(() => work(ctx, bookId));
    return changed(ctx, bookId);
  };
}

/** Starts cover work over the selected books after the response; each book's failure is logged and skipped. */
async function startJob(ctx: DaemonContext, principal: Principal, what: string, selection: CoverSelection, work: (bookId: number) => Promise<void>): Promise<number> {
  const ids = await coverJobBooks(ctx.store.db, principal, selection);
  inBackground(ctx, what, async () => {
    const result = await runCoverJob(ids, async (bookId) => {
      await work(bookId);
      await updateMatchScore(ctx.store.db, bookId);
    });
    for (const failure of result.failed) ctx.log.warn({ bookId: failure.bookId, reason: failure.reason }, `${what}: a book was skipped`);
    ctx.log.info({ books: ids.length, done: result.done, failed: result.failed.length }, `${what} finished`);
  });
  return ids.length;
}

/** A bulk route: the job over the books `selectionOf` names starts, and the empty 200 does not wait for it. */
function bulkJob(what: string, selectionOf: (request: RouteRequest) => CoverSelection, work: (ctx: DaemonContext, bookId: number) => Promise<void>): RouteSpec['handler'] {
  return async (request, reply, ctx) => {
    await startJob(ctx, principalOf(request), what, selectionOf(request), (bookId) => work(ctx, bookId));
    return reply.status(200).send();
  };
}

const bookIdsBody = (request: RouteRequest): { bookIds: number[] } => ({ bookIds: (request.body as { bookIds: number[] }).bookIds });

/** `bookIds` of the bulk upload: a form field or query parameter, comma-separated or repeated. */
function bookIdsOf(...values: unknown[]): number[] {
  const out: number[] = [];
  for (const value of values.flat()) {
    if (value === undefined || value === null) continue;
    for (const part of String(value).split(',')) {
      const trimmed = part.trim();
      if (trimmed === '') continue;
      if (!/^\d{1,15}$/.test(trimmed)) throw badRequest('Validation error', [`bookIds: '${trimmed}' is not a number`]);
      out.push(Number(trimmed));
    }
  }
  return [...new Set(out)];
}

/**
 * The four routes of one cover kind (the book's cover or its audiobook cover): from an upload, from a URL, from the
 * book's own file, and generated from its title.
 */
function singleCoverRoutes(kind: CoverKind): RouteSpec[] {
  const name = kind === 'book' ? 'cover' : 'audiobook-cover';
  const spec = (url: string, handler: RouteSpec['handler'], extra: Partial<RouteSpec> = {}): RouteSpec => ({
    method: 'POST',
    url,
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: BookParams },
    handler,
    ...extra,
  });
  return [
    spec(`/api/v1/books/{bookId}/metadata/${name}/upload`, coverFromUpload(kind), { multipart: true }),
    spec(`/api/v1/books/{bookId}/metadata/${name}/from-url`, coverFromUrl(kind), { schema: { params: BookParams, body: UrlBody } }),
    spec(`/api/v1/books/{bookId}/regenerate-${name}`, singleBook(regenerate(kind))),
    spec(`/api/v1/books/{bookId}/generate-custom-${name}`, singleBook(generate(kind))),
  ];
}

export const coverRoutes: RouteSpec[] = [
  ...singleCoverRoutes('book'),
  ...singleCoverRoutes('audiobook'),
  {
    method: 'POST',
    url: '/api/v1/books/regenerate-covers',
    auth: 'jwt',
    rule: adminOr('canBulkRegenerateCover'),
    schema: { querystring: Type.Object({ missingOnly: Type.Optional(Type.Boolean({ default: false })) }) },
    handler: async (request, reply, ctx) => {
      const { missingOnly } = request.query as { missingOnly?: boolean };
      const what = missingOnly ? 'regenerating missing covers' : 'regenerating all covers';
      await startJob(ctx, principalOf(request), what, { missingOnly: missingOnly === true, withFile: true }, (bookId) => regenerate('book')(ctx, bookId));
      return reply.status(200).send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/books/bulk-regenerate-covers',
    auth: 'jwt',
    rule: adminOr('canBulkRegenerateCover'),
    schema: { body: BulkBookIdsRequest },
    handler: bulkJob('regenerating covers', (request) => ({ ...bookIdsBody(request), withFile: true }), regenerate('book')),
  },
  {
    method: 'POST',
    url: '/api/v1/books/bulk-generate-custom-covers',
    auth: 'jwt',
    rule: adminOr('canBulkRegenerateCover'),
    schema: { body: BulkBookIdsRequest },
    handler: bulkJob('generating custom covers', bookIdsBody, generate('book')),
  },
  {
    method: 'POST',
    url: '/api/v1/books/bulk-upload-cover',
    auth: 'jwt',
    rule: adminOr('canBulkEditMetadata'),
    multipart: true,
    schema: { querystring: Type.Object({ bookIds: Type.Optional(Type.Unknown()) }) },
    handler: async (request, reply, ctx) => {
      const { image, fields } = await readCoverUpload(request, ctx);
      const bookIds = bookIdsOf((request.query as { bookIds?: unknown }).bookIds, fields.bookIds);
      if (bookIds.length === 0) throw badRequest('Validation error', ['bookIds: must not be empty']);
      await startJob(ctx, principalOf(request), 'setting an uploaded cover', { bookIds }, (bookId) => setCoverImage(ctx.store.db, ctx.paths.covers, bookId, 'book', image));
      return reply.status(200).send();
    },
  },
];
