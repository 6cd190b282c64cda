// The mobile app's catalog browsing: authors, series and their books, libraries, and the filter options of the book
// list.
import Type from 'typebox';
import { appPage, pageNumber, pageSize } from '../../core/app/app-page.ts';
import { appAuthorDetail, appAuthorsPage, type AuthorsQuery } from '../../core/app/authors.ts';
import { bookSummaries } from '../../core/app/book-summary.ts';
import { authorIdsWithPhoto, authorImagesRoot, hasAuthorPhoto } from '../../core/authors/author-photos.ts';
import { appFilterOptions } from '../../core/app/filter-options.ts';
import { appLibraries } from '../../core/app/libraries.ts';
import { appSeriesPage, seriesBooks } from '../../core/app/series.ts';
import { principalOf } from '../authenticate.ts';
import type { RouteSpec } from '../route-spec.ts';
import { appWork, PagingQuery } from './app-shared.ts';

const AUTHORS_SIZE = 30;
const SERIES_SIZE = 20;

/** The paging, order and library of every catalog list. */
const ListQuery = { ...PagingQuery, sort: Type.Optional(Type.String()), dir: Type.Optional(Type.String()), libraryId: Type.Optional(Type.Integer()) };

export const appCatalogRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/app/authors',
    auth: 'jwt',
    schema: {
      querystring: Type.Object({ ...ListQuery, search: Type.Optional(Type.String()), hasPhoto: Type.Optional(Type.Boolean()) }),
    },
    handler: (request, _reply, ctx) =>
      appWork(async () => {
        const query = request.query as AuthorsQuery & { page?: number; size?: number };
        const withPhoto = await authorIdsWithPhoto(authorImagesRoot(ctx.config.dataDir));
        return appAuthorsPage(ctx.store, principalOf(request), { dir: 'asc', ...query }, pageNumber(query.page), pageSize(query.size, AUTHORS_SIZE), withPhoto);
      }),
  },
  {
    method: 'GET',
    url: '/api/v1/app/authors/{authorId}',
    auth: 'jwt',
    schema: { params: Type.Object({ authorId: Type.Integer() }) },
    handler: (request, _reply, ctx) =>
      appWork(async () => {
        const { authorId } = request.params as { authorId: number };
        return appAuthorDetail(ctx.store, principalOf(request), authorId, await hasAuthorPhoto(authorImagesRoot(ctx.config.dataDir), authorId));
      }),
  },
  {
    method: 'GET',
    url: '/api/v1/app/series',
    auth: 'jwt',
    schema: {
      querystring: Type.Object({ ...ListQuery, search: Type.Optional(Type.String()), status: Type.Optional(Type.String()) }),
    },
    handler: (request, _reply, ctx) =>
      appWork(() => {
        const query = request.query as { page?: number; size?: number; sort?: string; dir?: string; libraryId?: number; search?: string; status?: string };
        const inProgressOnly = query.status?.toLowerCase() === 'in-progress';
        return appSeriesPage(ctx.store, principalOf(request), { dir: 'desc', ...query, inProgressOnly }, pageNumber(query.page), pageSize(query.size, SERIES_SIZE));
      }),
  },
  {
    method: 'GET',
    url: '/api/v1/app/series/{seriesName}/books',
    auth: 'jwt',
    schema: {
      params: Type.Object({ seriesName: Type.String() }),
      querystring: Type.Object(ListQuery),
    },
    handler: (request, _reply, ctx) =>
      appWork(async () => {
        const { seriesName } = request.params as { seriesName: string };
        const query = request.query as { page?: number; size?: number; sort?: string; dir?: string; libraryId?: number };
        const principal = principalOf(request);
        const page = pageNumber(query.page);
        const size = pageSize(query.size, SERIES_SIZE);
        const { ids, total } = await seriesBooks(ctx.store, principal, seriesName, { dir: 'asc', ...query }, { offset: page * size, limit: size });
        return appPage(await bookSummaries(ctx.store, principal.userId, ids), page, size, total);
      }),
  },
  {
    method: 'GET',
    url: '/api/v1/app/libraries',
    auth: 'jwt',
    handler: (request, _reply, ctx) => appLibraries(ctx.store.db, principalOf(request)),
  },
  {
    method: 'GET',
    url: '/api/v1/app/filter-options',
    auth: 'jwt',
    schema: { querystring: Type.Object({ libraryId: Type.Optional(Type.Integer()), shelfId: Type.Optional(Type.Integer()), magicShelfId: Type.Optional(Type.Integer()) }) },
    handler: (request, _reply, ctx) => appWork(() => appFilterOptions(ctx.store, principalOf(request), request.query as { libraryId?: number; shelfId?: number; magicShelfId?: number })),
  },
];
