// BookReviewController: the public reviews metadata providers hold for a book — listed, refreshed from the
// providers METADATA_PUBLIC_REVIEWS_SETTINGS enables, deleted one by one or all at once.
import Type from 'typebox';
import { hasAny } from '../../core/auth/principal.ts';
import { deleteBookReviews, deleteReview, refreshBookReviews, reviewsForBook, ReviewError, type ReviewErrorCode } from '../../core/metadata/reviews.ts';
import { requireBookAccess } from '../access.ts';
import { principalOf } from '../authenticate.ts';
import { ApiError } from '../http-errors.ts';
import { providerRuntimeFor } from '../metadata-runtime.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

const STATUS: Record<ReviewErrorCode, number> = { BOOK_NOT_FOUND: 404, REVIEW_NOT_FOUND: 404, DOWNLOADS_DISABLED: 400, PROVIDERS_FAILED: 502 };

async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ReviewError) throw new ApiError(STATUS[error.code], error.message);
    throw error;
  }
}

const BookParams = Type.Object({ bookId: Type.Integer({ minimum: 1 }) });

export const reviewRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/reviews/book/{bookId}',
    auth: 'jwt',
    schema: { params: BookParams },
    handler: async (request, reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      const principal = principalOf(request);
      await requireBookAccess(ctx, principal, bookId);
      const { reviews, errors } = await mapped(async () =>
        reviewsForBook(ctx.store.db, bookId, { mayDownload: hasAny(principal, ['admin', 'canManageLibrary']), runtime: await providerRuntimeFor(ctx) }),
      );
      for (const error of errors) request.log.warn({ bookId, provider: error.provider, code: error.code }, `automatic review download: ${error.message}`);
      if (reviews.length === 0) return reply.status(204).send();
      return reviews;
    },
  },
  {
    method: 'POST',
    url: '/api/v1/reviews/book/{bookId}/refresh',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: Type.Object({ bookId: Type.Integer() }) },
    handler: async (request, _reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      await requireBookAccess(ctx, principalOf(request), bookId);
      const { reviews, errors } = await mapped(async () => refreshBookReviews(ctx.store.db, bookId, await providerRuntimeFor(ctx)));
      // Providers that failed keep their earlier reviews; the others were refreshed.
      for (const error of errors) request.log.warn({ bookId, provider: error.provider, code: error.code }, `review refresh: ${error.message}`);
      return reviews;
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/reviews/{id}',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: Type.Object({ id: Type.Integer() }) },
    handler: async (request, reply, ctx) => {
      const { id } = request.params as { id: number };
      const review = await ctx.store.db.selectFrom('public_book_review').select('book_id').where('id', '=', id).executeTakeFirst();
      if (review) await requireBookAccess(ctx, principalOf(request), review.book_id);
      await mapped(() => deleteReview(ctx.store.db, id));
      return reply.status(204).send();
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/reviews/book/{bookId}',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: Type.Object({ bookId: Type.Integer() }) },
    handler: async (request, reply, ctx) => {
      const { bookId } = request.params as { bookId: number };
      await requireBookAccess(ctx, principalOf(request), bookId);
      await mapped(() => deleteBookReviews(ctx.store.db, bookId));
      return reply.status(204).send();
    },
  },
];
