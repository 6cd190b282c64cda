// The mobile app's shelves: the caller's own and public shelves, magic shelves, and the books of a magic shelf.
import Type from 'typebox';
import { appPage, pageNumber, pageSize } from '../../core/app/app-page.ts';
import { pageOfAppBooks } from '../../core/app/book-query.ts';
import { magicShelfCondition } from '../../core/app/book-scope.ts';
import { bookSummaries } from '../../core/app/book-summary.ts';
import { appMagicShelves, appShelves } from '../../core/app/shelves.ts';
import { principalOf } from '../authenticate.ts';
import type { RouteSpec } from '../route-spec.ts';
import { appWork, PagingQuery } from './app-shared.ts';

const MAGIC_SHELF_SIZE = 20;
/** Grimmory pages a magic shelf without an order: the books come as stored, oldest first. */
const BY_ID = { column: { expression: () => 'book.id' }, descending: false };

export const appShelfRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/app/shelves',
    auth: 'jwt',
    handler: (request, _reply, ctx) => appShelves(ctx.store.db, principalOf(request)),
  },
  {
    method: 'GET',
    url: '/api/v1/app/shelves/magic',
    auth: 'jwt',
    handler: (request, _reply, ctx) => appMagicShelves(ctx.store.db, principalOf(request)),
  },
  {
    method: 'GET',
    url: '/api/v1/app/shelves/magic/{magicShelfId}/books',
    auth: 'jwt',
    schema: { params: Type.Object({ magicShelfId: Type.Integer() }), querystring: Type.Object(PagingQuery) },
    handler: (request, _reply, ctx) =>
      appWork(async () => {
        const { magicShelfId } = request.params as { magicShelfId: number };
        const query = request.query as { page?: number; size?: number };
        const principal = principalOf(request);
        const page = pageNumber(query.page);
        // A size that is not positive gets the list's default of 50, as Grimmory's app pages do.
        const size = pageSize(query.size ?? MAGIC_SHELF_SIZE, 50);
        const { ids, total } = await pageOfAppBooks(ctx.store, principal, [await magicShelfCondition(ctx.store, principal, magicShelfId)], BY_ID, { offset: page * size, limit: size });
        return appPage(await bookSummaries(ctx.store, principal.userId, ids), page, size, total);
      }),
  },
];
