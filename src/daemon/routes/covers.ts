// BookCoverController (all but the cover search): covers and audiobook covers from an upload, a URL, the book's own
// file or generated from its title; the same for many books at once, in the background.
import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import Type from 'typebox';
import type { Principal } from '../../core/auth/principal.ts';
import type { CoverKind } from '../../core/covers/cover-images.ts';
import { coverJobBooks, runCoverJob, type CoverSelection } from '../../core/covers/cover-jobs.ts';
import { CoverChangeError, coverLocked, generateCover, regenerateCover, setCoverImage } from '../../core/covers/cover-update.ts';
import { CoverImageError, checkCoverImage, MAX_COVER_BYTES } from '../../core/covers/cover-upload.ts';
import { updateMatchScore } from '../../core/metadata/match-scores.ts';
import { OutgoingRequestError } from '../../core/net/http-client.ts';
import { readSetting } from '../../core/settings/app-settings.ts';
import { checkBookAccess } from '../access.ts';
import { principalOf } from '../authenticate.ts';
import type { DaemonContext } from '../context.ts';
import { ApiError, badRequest } from '../http-errors.ts';
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

/** The cover size limit: the upload limit setting, but never above what a cover could reasonably need. */
async function coverLimit(ctx: DaemonContext): Promise<{ bytes: number; mb: number }> {
  const setting = await readSetting(ctx.store.db, 'MAX_FILE_UPLOAD_SIZE_IN_MB');
  const mb = Math.max(1, Math.min(typeof setting === 'number' && setting > 0 ? setting : 100, MAX_COVER_BYTES / (1024 * 1024)));
  return { bytes: mb * 1024 * 1024, mb };
}

const tooLarge = (mb: number): ApiError => badRequest(`File size exceeds the limit: ${mb} MB`);

type MultipartRequest = RouteRequest & { isMultipart(): boolean; parts(options?: object): AsyncIterableIterator<MultipartFile | MultipartValue> };

interface CoverUpload {
  image: Buffer;
  fields: Record<string, string>;
}

/** The `file` part in memory (bounded) and the text fields; the image is checked to be a real cover image. */
async function readCoverUpload(request: RouteRequest, ctx: DaemonContext): Promise<CoverUpload> {
  const req = request as MultipartRequest;
  if (!req.isMultipart()) throw badRequest('Uploaded file is missing.');
  const limit = await coverLimit(ctx);
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit.bytes + 1024 * 1024) throw tooLarge(limit.mb);
  let image: Buffer | undefined;
  const fields: Record<string, string> = {};
  try {
    for await (const part of req.parts({ limits: { fileSize: limit.bytes } })) {
      if (part.type === 'field') {
        if (typeof part.value === 'string') fields[part.fieldname] = part.value;
      } else if (part.fieldname === 'file' && !image) {
        image = await part.toBuffer();
      } else {
        part.file.resume();
      }
    }
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge(limit.mb);
    if (code?.startsWith('FST_')) throw badRequest((error as Error).message);
    throw error;
  }
  if (!image) throw badRequest('Uploaded file is missing.');
  await mapped(() => checkCoverImage(image));
  return { image, fields };
}

/** Downloads an image through the shared client: public addresses only, image types only, bounded. */
async function downloadCover(ctx: DaemonContext, rawUrl: unknown): Promise<Buffer> {
  if (typeof rawUrl !== 'string' || rawUrl.trim() === '') throw badRequest('Validation error', ['url: must not be blank']);
  const limit = await coverLimit(ctx);
  let body: Buffer;
  try {
    body = (await ctx.http.request({ url: rawUrl.trim(), accept: ['image/'], maxBytes: limit.bytes, timeoutMs: 30_000 })).body;
  } catch (error) {
    if (!(error instanceof OutgoingRequestError)) throw error;
    switch (error.code) {
      case 'INVALID_URL':
        throw badRequest(`The cover URL is not valid: ${error.message}`);
      case 'BLOCKED_ADDRESS':
        throw badRequest(`The cover URL was refused: ${error.message}`);
      case 'TOO_LARGE':
        throw tooLarge(limit.mb);
      case 'BAD_CONTENT_TYPE':
        throw badRequest('The cover URL did not return an image');
      default:
        throw new ApiError(502, `The cover could not be downloaded: ${error.message}`);
    }
  }
  await mapped(() => checkCoverImage(body));
  return body;
}

async function changed(ctx: DaemonContext, bookId: number): Promise<Record<string, unknown>> {
  await updateMatchScore(ctx.store.db, bookId);
  return metadataOf(ctx, bookId);
}

function coverFromUpload(kind: CoverKind): RouteSpec['handler'] {
  return async (request, _reply, ctx) => {
    const { bookId } = request.params as { bookId: number };
    checkBookAccess(ctx, principalOf(request), bookId);
    // A locked cover is refused before the upload is read, as in Grimmory.
    if (await coverLocked(ctx.store.db, bookId, kind)) throw new ApiError(403, 'Attempt to update locked metadata');
    const { image } = await readCoverUpload(request, ctx);
    await mapped(() => setCoverImage(ctx.store.db, ctx.paths.covers, bookId, kind, image));
    return changed(ctx, bookId);
  };
}

function coverFromUrl(kind: CoverKind): RouteSpec['handler'] {
  return async (request, _reply, ctx) => {
    const { bookId } = request.params as { bookId: number };
    checkBookAccess(ctx, principalOf(request), bookId);
    if (await coverLocked(ctx.store.db, bookId, kind)) throw new ApiError(403, 'Attempt to update locked metadata');
    const image = await downloadCover(ctx, (request.body as { url?: unknown } | undefined)?.url);
    await mapped(() => setCoverImage(ctx.store.db, ctx.paths.covers, bookId, kind, image));
    return changed(ctx, bookId);
  };
}

function singleBook(work: (ctx: DaemonContext, bookId: number) => Promise<void>): RouteSpec['handler'] {
  return async (request, _reply, ctx) => {
    const { bookId } = request.params as { bookId: number };
    checkBookAccess(ctx, principalOf(request), bookId);
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

export const coverRoutes: RouteSpec[] = [
  {
    method: 'POST',
    url: '/api/v1/books/{bookId}/metadata/cover/upload',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    multipart: true,
    schema: { params: BookParams },
    handler: coverFromUpload('book'),
  },
  {
    method: 'POST',
    url: '/api/v1/books/{bookId}/metadata/cover/from-url',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: BookParams, body: UrlBody },
    handler: coverFromUrl('book'),
  },
  {
    method: 'POST',
    url: '/api/v1/books/{bookId}/metadata/audiobook-cover/upload',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    multipart: true,
    schema: { params: BookParams },
    handler: coverFromUpload('audiobook'),
  },
  {
    method: 'POST',
    url: '/api/v1/books/{bookId}/metadata/audiobook-cover/from-url',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: BookParams, body: UrlBody },
    handler: coverFromUrl('audiobook'),
  },
  {
    method: 'POST',
    url: '/api/v1/books/{bookId}/regenerate-audiobook-cover',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: BookParams },
    handler: singleBook((ctx, bookId) => regenerateCover(ctx.store.db, ctx.paths.covers, bookId, 'audiobook')),
  },
  {
    method: 'POST',
    url: '/api/v1/books/{bookId}/generate-custom-audiobook-cover',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: BookParams },
    handler: singleBook((ctx, bookId) => generateCover(ctx.store.db, ctx.paths.covers, bookId, 'audiobook')),
  },
  {
    method: 'POST',
    url: '/api/v1/books/regenerate-covers',
    auth: 'jwt',
    rule: adminOr('canBulkRegenerateCover'),
    schema: { querystring: Type.Object({ missingOnly: Type.Optional(Type.Boolean({ default: false })) }) },
    handler: async (request, reply, ctx) => {
      const { missingOnly } = request.query as { missingOnly?: boolean };
      await startJob(ctx, principalOf(request), missingOnly ? 'regenerating missing covers' : 'regenerating all covers', { missingOnly: missingOnly === true, withFile: true }, (bookId) =>
        regenerateCover(ctx.store.db, ctx.paths.covers, bookId, 'book'),
      );
      return reply.status(200).send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/books/{bookId}/regenerate-cover',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: BookParams },
    handler: singleBook((ctx, bookId) => regenerateCover(ctx.store.db, ctx.paths.covers, bookId, 'book')),
  },
  {
    method: 'POST',
    url: '/api/v1/books/{bookId}/generate-custom-cover',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: BookParams },
    handler: singleBook((ctx, bookId) => generateCover(ctx.store.db, ctx.paths.covers, bookId, 'book')),
  },
  {
    method: 'POST',
    url: '/api/v1/books/bulk-regenerate-covers',
    auth: 'jwt',
    rule: adminOr('canBulkRegenerateCover'),
    schema: { body: BulkBookIdsRequest },
    handler: async (request, reply, ctx) => {
      const { bookIds } = request.body as { bookIds: number[] };
      await startJob(ctx, principalOf(request), 'regenerating covers', { bookIds, withFile: true }, (bookId) => regenerateCover(ctx.store.db, ctx.paths.covers, bookId, 'book'));
      return reply.status(200).send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/books/bulk-generate-custom-covers',
    auth: 'jwt',
    rule: adminOr('canBulkRegenerateCover'),
    schema: { body: BulkBookIdsRequest },
    handler: async (request, reply, ctx) => {
      const { bookIds } = request.body as { bookIds: number[] };
      await startJob(ctx, principalOf(request), 'generating custom covers', { bookIds }, (bookId) => generateCover(ctx.store.db, ctx.paths.covers, bookId, 'book'));
      return reply.status(200).send();
    },
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
