// Shelves: the caller's own and the public ones, their books, and putting books on them.
import Type from 'typebox';
import { assignShelves, requireOwnShelves } from '../../core/shelves/book-shelves.ts';
import { booksOnShelf, personalBooks } from '../../core/shelves/personal-books.ts';
import { canReadShelf, createShelf, deleteShelf, findShelf, listShelves, ownsShelf, ShelfError, shelfView, updateShelf, type ShelfInput } from '../../core/shelves/shelves.ts';
import { audit } from '../audit.ts';
import { principalOf } from '../authenticate.ts';
import { ApiError, forbidden } from '../http-errors.ts';
import type { RouteSpec } from '../route-spec.ts';
import { requireBooksAccess } from './reading.ts';
import { nullable } from '../schema-types.ts';

const ShelfParams = Type.Object({ shelfId: Type.Integer() });

const ShelfCreateRequest = Type.Object({
  id: Type.Optional(Type.Null()),
  name: Type.String({ minLength: 1, pattern: '\\S' }),
  icon: nullable(Type.String()),
  iconType: nullable(Type.String({ enum: ['LUCIDE', 'CUSTOM_SVG'] })),
  publicShelf: nullable(Type.Boolean()),
});

const idSet = nullable(Type.Array(Type.Integer()));
const ShelvesAssignmentRequest = Type.Object({ bookIds: idSet, shelvesToAssign: idSet, shelvesToUnassign: idSet });

const SHELF_ERROR_STATUS = { NOT_FOUND: 404, CONFLICT: 409, FORBIDDEN: 403, DATA_CONFLICT: 400, UNAUTHORIZED: 401 } as const;

async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ShelfError) throw new ApiError(SHELF_ERROR_STATUS[error.code], error.message);
    throw error;
  }
}

function shelfInput(body: { name: string; icon?: string | null; iconType?: string | null; publicShelf?: boolean | null }): ShelfInput {
  return { name: body.name, icon: body.icon ?? null, iconType: body.iconType ?? null, publicShelf: body.publicShelf === true };
}

export const shelfRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/shelves',
    auth: 'jwt',
    handler: async (request, _reply, ctx) => listShelves(ctx.store.db, principalOf(request)),
  },
  {
    method: 'POST',
    url: '/api/v1/shelves',
    auth: 'jwt',
    schema: { body: ShelfCreateRequest },
    handler: async (request, reply, ctx) => {
      const shelf = await mapped(() => createShelf(ctx.store.db, principalOf(request), shelfInput(request.body as ShelfInput)));
      await audit(ctx, request, 'SHELF_CREATED', `Created shelf: ${String(shelf.name)}`, { type: 'Shelf', id: shelf.id as number });
      return reply.status(201).send(shelf);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/shelves/{shelfId}',
    auth: 'jwt',
    schema: { params: ShelfParams },
    handler: async (request, _reply, ctx) => {
      const principal = principalOf(request);
      const shelf = await findShelf(ctx.store.db, (request.params as { shelfId: number }).shelfId);
      if (!canReadShelf(principal, shelf)) throw forbidden();
      return shelfView(ctx.store.db, principal, shelf);
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/shelves/{shelfId}',
    auth: 'jwt',
    schema: { params: ShelfParams, body: ShelfCreateRequest },
    handler: async (request, _reply, ctx) => {
      const principal = principalOf(request);
      const shelf = await findShelf(ctx.store.db, (request.params as { shelfId: number }).shelfId);
      if (!ownsShelf(principal, shelf)) throw forbidden();
      const updated = await mapped(() => updateShelf(ctx.store.db, principal, shelf, shelfInput(request.body as ShelfInput)));
      await audit(ctx, request, 'SHELF_UPDATED', `Updated shelf: ${String(updated.name)}`, { type: 'Shelf', id: shelf.id });
      return updated;
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/shelves/{shelfId}',
    auth: 'jwt',
    schema: { params: ShelfParams },
    handler: async (request, reply, ctx) => {
      const principal = principalOf(request);
      const shelf = await findShelf(ctx.store.db, (request.params as { shelfId: number }).shelfId);
      if (!ownsShelf(principal, shelf)) throw forbidden();
      await deleteShelf(ctx.store.db, shelf.id);
      await audit(ctx, request, 'SHELF_DELETED', `Deleted shelf: ${shelf.name}`, { type: 'Shelf', id: shelf.id });
      return reply.status(204).send();
    },
  },
  {
    method: 'GET',
    url: '/api/v1/shelves/{shelfId}/books',
    auth: 'jwt',
    schema: { params: ShelfParams },
    handler: async (request, _reply, ctx) => {
      const principal = principalOf(request);
      const shelf = await findShelf(ctx.store.db, (request.params as { shelfId: number }).shelfId);
      if (!canReadShelf(principal, shelf)) throw forbidden();
      return booksOnShelf(ctx.store, principal, shelf.id);
    },
  },
  {
    method: 'POST',
    url: '/api/v1/books/shelves',
    auth: 'jwt',
    schema: { body: ShelvesAssignmentRequest },
    handler: async (request, _reply, ctx) => {
      const body = request.body as { bookIds?: number[] | null; shelvesToAssign?: number[] | null; shelvesToUnassign?: number[] | null };
      const [bookIds, assign, unassign] = [body.bookIds ?? [], body.shelvesToAssign ?? [], body.shelvesToUnassign ?? []];
      const principal = principalOf(request);
      await mapped(() => requireOwnShelves(ctx.store.db, principal, assign, unassign));
      await requireBooksAccess(ctx, principal, bookIds);
      await mapped(() => assignShelves(ctx.store.db, principal, bookIds, assign, unassign));
      return personalBooks(ctx.store, principal, bookIds);
    },
  },
];
