// MagicShelfController: one shelf, create-or-update, delete (the list is with the web UI's start-up reads in ui-reads.ts).
import Type from 'typebox';
import { deleteMagicShelf, MagicShelfError, readMagicShelf, saveMagicShelf, type MagicShelfInput } from '../../core/shelves/magic-shelves.ts';
import { audit } from '../audit.ts';
import { principalOf } from '../authenticate.ts';
import { ApiError } from '../http-errors.ts';
import type { RouteSpec } from '../route-spec.ts';
import { nullable } from '../schema-types.ts';


const IdParams = Type.Object({ id: Type.Integer() });

/** Grimmory's MagicShelf with its bean-validation constraints (schemas.md); blank names are caught in core. */
const MagicShelfBody = Type.Object({
  id: nullable(Type.Integer()),
  name: Type.String({ minLength: 1, maxLength: 255 }),
  icon: nullable(Type.String({ maxLength: 64 })),
  iconType: nullable(Type.String({ enum: ['LUCIDE', 'CUSTOM_SVG'] })),
  filterJson: Type.String({ minLength: 2 }),
  isPublic: nullable(Type.Boolean()),
});

const STATUS = { NOT_FOUND: 400, FORBIDDEN: 403, NAME_TAKEN: 400, DATA_CONFLICT: 400, INVALID: 400 } as const;

async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof MagicShelfError) throw new ApiError(STATUS[error.code], error.message, error.details.length > 0 ? error.details : undefined);
    throw error;
  }
}

export const magicShelfRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/magic-shelves/{id}',
    auth: 'jwt',
    schema: { params: IdParams },
    handler: async (request, _reply, ctx) => {
      const { id } = request.params as { id: number };
      return mapped(() => readMagicShelf(ctx.store.db, principalOf(request), id));
    },
  },
  {
    method: 'POST',
    url: '/api/magic-shelves',
    auth: 'jwt',
    // A rule tree of the maximum size, with room for the rest of the object.
    bodyLimit: 512 * 1024,
    schema: { body: MagicShelfBody },
    handler: async (request, _reply, ctx) => {
      const input = request.body as MagicShelfInput;
      const saved = await mapped(() => saveMagicShelf(ctx.store.db, principalOf(request), input));
      const updated = input.id !== null && input.id !== undefined;
      await audit(ctx, request, updated ? 'MAGIC_SHELF_UPDATED' : 'MAGIC_SHELF_CREATED', `${updated ? 'Updated' : 'Created'} magic shelf: ${input.name}`, { type: 'MagicShelf', id: saved.id as number });
      return saved;
    },
  },
  {
    method: 'DELETE',
    url: '/api/magic-shelves/{id}',
    auth: 'jwt',
    schema: { params: IdParams },
    handler: async (request, reply, ctx) => {
      const { id } = request.params as { id: number };
      await mapped(() => deleteMagicShelf(ctx.store.db, principalOf(request), id));
      await audit(ctx, request, 'MAGIC_SHELF_DELETED', `Deleted magic shelf: ${id}`, { type: 'MagicShelf', id });
      return reply.status(204).send();
    },
  },
];
