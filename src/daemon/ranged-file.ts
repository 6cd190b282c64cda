// Sends a file from disk the way readers and players need it: ETag, conditional requests and byte ranges.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { decideRange } from '../core/media/byte-range.ts';
import { ifRangeHolds, isNotModified } from '../core/media/conditional-requests.ts';
import { ApiError } from './http-errors.ts';

function contentEtag(size: number, mtime: Date): string {
  return `"${size.toString(36)}-${Math.trunc(mtime.getTime()).toString(36)}"`;
}

/** Streams `path` as `type`, honouring If-None-Match/If-Modified-Since, Range and If-Range; 404 when it is gone. */
export async function sendRangedFile(request: FastifyRequest, reply: FastifyReply, path: string | undefined, type: string, missing: string): Promise<FastifyReply> {
  const info = path ? await stat(path).catch(() => undefined) : undefined;
  if (!path || !info?.isFile()) throw new ApiError(404, `File not found: ${missing}`);
  const etag = contentEtag(info.size, info.mtime);
  reply.header('Accept-Ranges', 'bytes').header('Cache-Control', 'no-cache, private').header('ETag', etag).header('Last-Modified', info.mtime.toUTCString());
  const headers = request.headers;
  if (isNotModified(headers['if-none-match'], headers['if-modified-since'], etag, info.mtime)) return reply.status(304).send();
  const rangeHeader = ifRangeHolds(headers['if-range'] as string | undefined, etag, info.mtime) ? headers.range : undefined;
  const range = decideRange(rangeHeader, info.size);
  if (range.kind === 'unsatisfiable') return reply.status(416).header('Content-Range', `bytes */${info.size}`).send();
  if (range.kind === 'partial') {
    return reply
      .status(206)
      .type(type)
      .header('Content-Range', `bytes ${range.start}-${range.end}/${info.size}`)
      .header('Content-Length', range.end - range.start + 1)
      .send(createReadStream(path, { start: range.start, end: range.end }));
  }
  return reply.type(type).header('Content-Length', info.size).send(createReadStream(path));
}
