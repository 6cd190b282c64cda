// BookMediaController's covers: book and audiobook covers and thumbnails, cacheable and revalidated by ETag.
import { createReadStream } from 'node:fs';
import Type from 'typebox';
import type { CoverKind } from '../../core/covers/cover-images.ts';
import { isNotModified } from '../../core/media/conditional-requests.ts';
import { coverResource, type CoverVariant } from '../../core/media/cover-media.ts';
import { requireBookAccess } from '../access.ts';
import { principalOf } from '../authenticate.ts';
import type { RouteSpec } from '../route-spec.ts';

/** A URL carrying anything besides the token (the UI appends `?<coverUpdatedOn>`) names one version of the cover. */
function hasCacheBuster(query: unknown): boolean {
  return Object.keys((query as Record<string, unknown> | undefined) ?? {}).some((key) => key !== 'token');
}

const YEAR = 365 * 24 * 3600;

function coverRoute(path: string, kind: CoverKind, variant: CoverVariant): RouteSpec {
  return {
    method: 'GET',
    url: `/api/v1/media/book/{bookId}/${path}`,
    auth: 'jwt-or-query',
    schema: { params: Type.Object({ bookId: Type.Integer() }) },
    handler: async (request, reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      await requireBookAccess(ctx, principalOf(request), bookId);
      const image = await coverResource(ctx.store.db, ctx.paths.covers, bookId, kind, variant);
      reply.type('image/jpeg').header('ETag', image.etag);
      if (image.kind === 'placeholder') {
        // No cover yet: a stand-in the browser should ask for again, so a cover added later shows up.
        reply.header('Cache-Control', 'no-cache, private');
        if (isNotModified(request.headers['if-none-match'], undefined, image.etag, undefined)) return reply.status(304).send();
        return reply.header('Content-Length', image.data.length).send(image.data);
      }
      reply
        .header('Last-Modified', image.lastModified.toUTCString())
        .header('Cache-Control', hasCacheBuster(request.query) ? `private, max-age=${YEAR}, immutable` : 'private, max-age=3600');
      if (isNotModified(request.headers['if-none-match'], request.headers['if-modified-since'], image.etag, image.lastModified)) return reply.status(304).send();
      return reply.header('Content-Length', image.size).send(createReadStream(image.path));
    },
  };
}

export const mediaRoutes: RouteSpec[] = [
  coverRoute('thumbnail', 'book', 'thumbnail'),
  coverRoute('cover', 'book', 'cover'),
  coverRoute('audiobook-thumbnail', 'audiobook', 'thumbnail'),
  coverRoute('audiobook-cover', 'audiobook', 'cover'),
];
