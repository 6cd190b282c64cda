// The mobile app's books (/api/v1/app/books): the filtered, sorted list and its ids, one book's details and the caller's
// progress in it, search, the home screen lists, a random page, and the caller's progress, status and rating updates
// (through the same core functions as the web routes).
import Type from 'typebox';
import { appPage, pageNumber, pageSize } from '../../core/app/app-page.ts';
import { LIST_FILTERS } from '../../core/app/book-filters.ts';
import { bookDetailJson, bookProgressJson } from '../../core/app/book-detail.ts';
import { allAppBookIds, appOrder, pageOfAppBooks, queryConditions, type AppBookQuery } from '../../core/app/book-query.ts';
import { bookSummaries } from '../../core/app/book-summary.ts';
import { inProgressBooks, randomBooks, recentlyAddedBooks, recentlyScannedBooks, searchBooks } from '../../core/app/home-lists.ts';
import { setPersonalRating } from '../../core/reading/personal-rating.ts';
import { carriesProgress, recordProgress, type ProgressInput } from '../../core/reading/progress.ts';
import { parseReadStatus } from '../../core/reading/read-status.ts';
import { setReadStatus } from '../../core/reading/read-status-update.ts';
import { requireBookAccess } from '../access.ts';
import { principalOf } from '../authenticate.ts';
import type { DaemonContext } from '../context.ts';
import { syncToHardcover } from '../hardcover-sync.ts';
import { badRequest, bookNotFound } from '../http-errors.ts';
import type { RouteRequest, RouteSpec } from '../route-spec.ts';
import { appWork, BookIdParams, PagingQuery } from './app-shared.ts';
import { ProgressParts } from './reading.ts';
import { nullable } from '../schema-types.ts';

/** Grimmory's default page size of the book list (also used when a size is not positive). */
const LIST_SIZE = 50;
/** The size search and random pages have when none is asked for (a size that is not positive gets LIST_SIZE). */
const SEARCH_SIZE = 20;

const BookListQuery = Type.Object({
  ...PagingQuery,
  sort: Type.Optional(Type.String()),
  dir: Type.Optional(Type.String()),
  libraryId: Type.Optional(Type.Integer()),
  shelfId: Type.Optional(Type.Integer()),
  magicShelfId: Type.Optional(Type.Integer()),
  search: Type.Optional(Type.String()),
  minRating: Type.Optional(Type.Integer()),
  maxRating: Type.Optional(Type.Integer()),
  unshelved: Type.Optional(Type.Boolean()),
  filterMode: Type.Optional(Type.String()),
  ...Object.fromEntries(LIST_FILTERS.map((name) => [name, Type.Optional(Type.Array(Type.String()))])),
});

const LimitQuery = Type.Object({ limit: Type.Optional(Type.Integer()) });

const UpdateProgressRequest = Type.Object(ProgressParts);

const bookIdOf = (request: RouteRequest): number => (request.params as { bookId: number }).bookId;

/** The limit of a home list: at most 50, 10 when missing or not positive. */
const limitOf = (request: RouteRequest): number => pageSize((request.query as { limit?: number }).limit, 10);

/** Summaries of the ids for the caller. */
const summaries = (request: RouteRequest, ids: number[], ctx: DaemonContext) => bookSummaries(ctx.store, principalOf(request).userId, ids);

export const appBookRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/app/books',
    auth: 'jwt',
    schema: { querystring: BookListQuery },
    handler: (request, _reply, ctx) =>
      appWork(async () => {
        const query = request.query as AppBookQuery & { page?: number; size?: number };
        const principal = principalOf(request);
        const page = pageNumber(query.page);
        const size = pageSize(query.size, LIST_SIZE);
        const conditions = await queryConditions(ctx.store, principal, query);
        const { ids, total } = await pageOfAppBooks(ctx.store, principal, conditions, appOrder(query.sort, query.dir), { offset: page * size, limit: size });
        return appPage(await summaries(request, ids, ctx), page, size, total);
      }),
  },
  {
    method: 'GET',
    url: '/api/v1/app/books/ids',
    auth: 'jwt',
    schema: { querystring: BookListQuery },
    handler: (request, _reply, ctx) =>
      appWork(async () => {
        const principal = principalOf(request);
        return allAppBookIds(ctx.store, principal, await queryConditions(ctx.store, principal, request.query as AppBookQuery));
      }),
  },
  {
    method: 'GET',
    url: '/api/v1/app/books/search',
    auth: 'jwt',
    schema: { querystring: Type.Object({ q: Type.String(), ...PagingQuery }) },
    handler: async (request, _reply, ctx) => {
      const query = request.query as { q: string; page?: number; size?: number };
      if (query.q.trim() === '') throw badRequest('Query parameters are required for the search.');
      const page = pageNumber(query.page);
      const size = pageSize(query.size ?? SEARCH_SIZE, LIST_SIZE);
      const { ids, total } = await searchBooks(ctx.store, principalOf(request), query.q, { offset: page * size, limit: size });
      return appPage(await summaries(request, ids, ctx), page, size, total);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/app/books/continue-reading',
    auth: 'jwt',
    schema: { querystring: LimitQuery },
    handler: async (request, _reply, ctx) => summaries(request, await inProgressBooks(ctx.store, principalOf(request), 'reading', limitOf(request)), ctx),
  },
  {
    method: 'GET',
    url: '/api/v1/app/books/continue-listening',
    auth: 'jwt',
    schema: { querystring: LimitQuery },
    handler: async (request, _reply, ctx) => summaries(request, await inProgressBooks(ctx.store, principalOf(request), 'listening', limitOf(request)), ctx),
  },
  {
    method: 'GET',
    url: '/api/v1/app/books/recently-added',
    auth: 'jwt',
    schema: { querystring: LimitQuery },
    handler: async (request, _reply, ctx) => summaries(request, await recentlyAddedBooks(ctx.store, principalOf(request), limitOf(request)), ctx),
  },
  {
    method: 'GET',
    url: '/api/v1/app/books/recently-scanned',
    auth: 'jwt',
    schema: { querystring: LimitQuery },
    handler: async (request, _reply, ctx) => summaries(request, await recentlyScannedBooks(ctx.store, principalOf(request), limitOf(request)), ctx),
  },
  {
    method: 'GET',
    url: '/api/v1/app/books/random',
    auth: 'jwt',
    schema: { querystring: Type.Object({ ...PagingQuery, libraryId: Type.Optional(Type.Integer()) }) },
    handler: (request, _reply, ctx) =>
      appWork(async () => {
        const query = request.query as { page?: number; size?: number; libraryId?: number };
        const page = pageNumber(query.page);
        const size = pageSize(query.size ?? SEARCH_SIZE, LIST_SIZE);
        const { ids, total } = await randomBooks(ctx.store, principalOf(request), size, query.libraryId);
        return appPage(await summaries(request, ids, ctx), page, size, total);
      }),
  },
  {
    method: 'GET',
    url: '/api/v1/app/books/{bookId}',
    auth: 'jwt',
    schema: { params: BookIdParams },
    handler: async (request, _reply, ctx) => {
      const principal = principalOf(request);
      await requireBookAccess(ctx, principal, bookIdOf(request));
      const detail = await bookDetailJson(ctx.store, principal, bookIdOf(request));
      if (!detail) throw bookNotFound(bookIdOf(request));
      return detail;
    },
  },
  {
    method: 'GET',
    url: '/api/v1/app/books/{bookId}/progress',
    auth: 'jwt',
    schema: { params: BookIdParams },
    handler: async (request, _reply, ctx) => {
      const principal = principalOf(request);
      await requireBookAccess(ctx, principal, bookIdOf(request));
      return bookProgressJson(ctx.store, principal.userId, bookIdOf(request));
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/app/books/{bookId}/progress',
    auth: 'jwt',
    schema: { params: BookIdParams, body: UpdateProgressRequest },
    handler: async (request, reply, ctx) => {
      const input: ProgressInput = { ...(request.body as Omit<ProgressInput, 'bookId'>), bookId: bookIdOf(request) };
      if (!carriesProgress(input)) throw badRequest('Validation error', ['progressValid: At least one progress field must be provided']);
      const principal = principalOf(request);
      await requireBookAccess(ctx, principal, input.bookId);
      const percent = await appWork(() => recordProgress(ctx.store.readingState.db, principal.userId, input));
      syncToHardcover(ctx, principal.userId, input.bookId, percent);
      return reply.status(200).send();
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/app/books/{bookId}/status',
    auth: 'jwt',
    schema: { params: BookIdParams, body: Type.Object({ status: nullable(Type.String()) }) },
    handler: async (request, reply, ctx) => {
      const { status } = request.body as { status?: string | null };
      if (status === undefined || status === null) throw badRequest('Validation error', ['status: must not be null']);
      const readStatus = parseReadStatus(status);
      if (!readStatus) throw badRequest('Request body is missing or malformed.');
      const principal = principalOf(request);
      await requireBookAccess(ctx, principal, bookIdOf(request));
      await setReadStatus(ctx.store.readingState.db, principal.userId, [bookIdOf(request)], readStatus);
      return reply.status(200).send();
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/app/books/{bookId}/rating',
    auth: 'jwt',
    schema: { params: BookIdParams, body: Type.Object({ rating: nullable(Type.Integer({ minimum: 1, maximum: 5 })) }) },
    handler: async (request, reply, ctx) => {
      const { rating = null } = request.body as { rating?: number | null };
      const principal = principalOf(request);
      await requireBookAccess(ctx, principal, bookIdOf(request));
      await setPersonalRating(ctx.store.readingState.db, principal.userId, [bookIdOf(request)], rating);
      return reply.status(200).send();
    },
  },
];
