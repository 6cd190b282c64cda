// Book bytes: downloads (one file, a folder audiobook or all files as a streamed ZIP) and the reader's ranged content.
import { createReadStream } from 'node:fs';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import { attachmentDisposition, contentTypeOf } from '../../core/media/content-types.ts';
import { planBookDownload, planFileDownload, type DownloadPlan } from '../../core/media/download-plan.ts';
import { zipStream } from '../../core/media/zip-stream.ts';
import { accessibleBookFiles, fileOfType } from '../book-file-access.ts';
import { ApiError, badRequest } from '../http-errors.ts';
import { sendRangedFile } from '../ranged-file.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

const BookParams = Type.Object({ bookId: Type.Integer() });
/** `token` is how `<a href>` downloads authenticate; it is declared so the schema documents it. */
const TokenQuery = Type.Object({ token: Type.Optional(Type.String()) });

const failedDownload = (id: number): ApiError => new ApiError(500, `Error while downloading file, bookId: ${id}`);


function sendDownload(reply: FastifyReply, plan: Exclude<DownloadPlan, { kind: 'missing' }>): FastifyReply {
  reply.header('Cache-Control', 'no-cache, no-store, must-revalidate').header('Pragma', 'no-cache').header('Expires', '0');
  reply.header('Content-Disposition', attachmentDisposition(plan.fileName));
  if (plan.kind === 'zip') return reply.type('application/zip').send(zipStream(plan.entries));
  return reply.type('application/octet-stream').header('Content-Length', plan.size).send(createReadStream(plan.path));
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
    // Grimmory leaves this route open to every reader of the book; a whole file is a download, so it takes canDownload.
    rule: adminOr('canDownload'),
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
      const file = fileOfType(await accessibleBookFiles(request, ctx, bookId), bookType);
      return sendRangedFile(request, reply, file?.path, contentTypeOf(file?.fileName ?? ''), file?.path ?? file?.fileName ?? String(bookId));
    },
  },
];
