// Book bytes: downloads (one file, a folder audiobook or all files as a streamed ZIP) and the reader's ranged content.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import { bookFiles, type BookFiles } from '../../core/books/file-locations.ts';
import { BOOK_FILE_TYPES } from '../../core/formats/types.ts';
import { decideRange } from '../../core/media/byte-range.ts';
import { ifRangeHolds, isNotModified } from '../../core/media/conditional-requests.ts';
import { attachmentDisposition, contentTypeOf } from '../../core/media/content-types.ts';
import { planBookDownload, planFileDownload, type DownloadPlan } from '../../core/media/download-plan.ts';
import { zipStream } from '../../core/media/zip-stream.ts';
import { requireBookAccess } from '../access.ts';
import { principalOf } from '../authenticate.ts';
import type { DaemonContext } from '../context.ts';
import { ApiError, badRequest, bookNotFound } from '../http-errors.ts';
import type { RouteRequest } from '../route-spec.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

const BookParams = Type.Object({ bookId: Type.Integer() });
/** `token` is how `<a href>` downloads authenticate; it is declared so the schema documents it. */
const TokenQuery = Type.Object({ token: Type.Optional(Type.String()) });

const failedDownload = (id: number): ApiError => new ApiError(500, `Error while downloading file, bookId: ${id}`);

async function accessibleBookFiles(request: RouteRequest, ctx: DaemonContext, bookId: number): Promise<BookFiles> {
  await requireBookAccess(ctx, principalOf(request), bookId);
  const files = await bookFiles(ctx.store.db, bookId);
  if (!files) throw bookNotFound(bookId);
  return files;
}

function sendDownload(reply: FastifyReply, plan: Exclude<DownloadPlan, { kind: 'missing' }>): FastifyReply {
  reply.header('Cache-Control', 'no-cache, no-store, must-revalidate').header('Pragma', 'no-cache').header('Expires', '0');
  reply.header('Content-Disposition', attachmentDisposition(plan.fileName));
  if (plan.kind === 'zip') return reply.type('application/zip').send(zipStream(plan.entries));
  return reply.type('application/octet-stream').header('Content-Length', plan.size).send(createReadStream(plan.path));
}

function contentEtag(size: number, mtime: Date): string {
  return `"${size.toString(36)}-${Math.trunc(mtime.getTime()).toString(36)}"`;
}

export const bookFileRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/books/{bookId}/download',
    auth: 'jwt-or-query',
    rule: adminOr('canDownload'),
    schema: { params: BookParams, querystring: TokenQuery },
    handler: async (request, reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      const files = await accessibleBookFiles(request, ctx, bookId);
      const plan = await planFileDownload(files.primary);
      if (plan.kind === 'missing') throw failedDownload(bookId);
      return sendDownload(reply, plan);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/books/{bookId}/download-all',
    auth: 'jwt-or-query',
    rule: adminOr('canDownload'),
    schema: { params: BookParams, querystring: TokenQuery },
    handler: async (request, reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      const files = await accessibleBookFiles(request, ctx, bookId);
      if (files.files.length === 0) throw new ApiError(404, `File not found: ${bookId}`);
      const plan = await planBookDownload(files);
      if (plan.kind === 'missing') throw failedDownload(bookId);
      return sendDownload(reply, plan);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/books/{bookId}/files/{fileId}/download',
    auth: 'jwt-or-query',
    schema: { params: Type.Object({ bookId: Type.Integer(), fileId: Type.Integer() }), querystring: TokenQuery },
    handler: async (request, reply, ctx) => {
      const { bookId, fileId } = request.params as { bookId: number; fileId: number };
      const files = await accessibleBookFiles(request, ctx, bookId);
      const file = files.files.find((f) => f.id === fileId);
      if (!file) return reply.status(404).send();
      if (files.primary?.id === fileId) throw badRequest(`Primary book file cannot be processed as an additional file: ${fileId}`);
      const plan = await planFileDownload(file);
      if (plan.kind === 'missing') return reply.status(404).send();
      return sendDownload(reply, plan);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/books/{bookId}/content',
    auth: 'jwt',
    schema: { params: BookParams, querystring: Type.Object({ bookType: Type.Optional(Type.String()) }) },
    handler: async (request, reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      const { bookType } = request.query as { bookType?: string };
      const files = await accessibleBookFiles(request, ctx, bookId);
      let file = files.primary;
      if (bookType !== undefined) {
        const wanted = bookType.toUpperCase();
        if (!(BOOK_FILE_TYPES as readonly string[]).includes(wanted)) throw badRequest(`No enum constant BookFileType.${wanted}`);
        file = files.files.find((f) => f.bookType === wanted);
        if (!file) throw new ApiError(404, `File not found: No file of type ${bookType} found for book`);
      }
      const info = file?.path ? await stat(file.path).catch(() => undefined) : undefined;
      if (!file?.path || !info?.isFile()) throw new ApiError(404, `File not found: ${file?.path ?? file?.fileName ?? bookId}`);

      const etag = contentEtag(info.size, info.mtime);
      reply.header('Accept-Ranges', 'bytes').header('Cache-Control', 'no-cache, private').header('ETag', etag).header('Last-Modified', info.mtime.toUTCString());
      const headers = request.headers;
      if (isNotModified(headers['if-none-match'], headers['if-modified-since'], etag, info.mtime)) return reply.status(304).send();

      const type = contentTypeOf(file.fileName);
      const rangeHeader = ifRangeHolds(headers['if-range'] as string | undefined, etag, info.mtime) ? headers.range : undefined;
      const range = decideRange(rangeHeader, info.size);
      if (range.kind === 'unsatisfiable') return reply.status(416).header('Content-Range', `bytes */${info.size}`).send();
      if (range.kind === 'partial') {
        return reply
          .status(206)
          .type(type)
          .header('Content-Range', `bytes ${range.start}-${range.end}/${info.size}`)
          .header('Content-Length', range.end - range.start + 1)
          .send(createReadStream(file.path, { start: range.start, end: range.end }));
      }
      return reply.type(type).header('Content-Length', info.size).send(createReadStream(file.path));
    },
  },
];
