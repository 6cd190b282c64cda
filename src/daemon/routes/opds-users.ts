// The caller's OPDS accounts (Grimmory's OpdsUserV2Controller): reader-app credentials owned by the signed-in user.
import Type from 'typebox';
import { createOpdsUser, deleteOpdsUser, listOpdsUsers, OpdsUserError, updateOpdsUser } from '../../core/opds/users.ts';
import { principalOf } from '../authenticate.ts';
import { ApiError } from '../http-errors.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

const BASE = '/api/v2/opds-users';
const RULE = adminOr('canAccessOpds');

const STATUS = { INVALID: 400, CONFLICT: 400, NOT_FOUND: 404, FORBIDDEN: 403 } as const;

async function call<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof OpdsUserError) throw new ApiError(STATUS[error.code], error.message, error.details);
    throw error;
  }
}

const IdParams = Type.Object({ id: Type.Integer() });
// Checked by the service, which reports every problem at once in Grimmory's validation shape.
const CreateBody = Type.Object({ username: Type.Optional(Type.Unknown()), password: Type.Optional(Type.Unknown()), sortOrder: Type.Optional(Type.Unknown()) }, { additionalProperties: true });
const UpdateBody = Type.Object({ sortOrder: Type.Optional(Type.Unknown()) }, { additionalProperties: true });

export const opdsUserRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: BASE,
    auth: 'jwt',
    rule: RULE,
    handler: (request, _reply, ctx) => listOpdsUsers(ctx.store.db, principalOf(request).userId),
  },
  {
    method: 'POST',
    url: BASE,
    auth: 'jwt',
    rule: RULE,
    schema: { body: CreateBody },
    handler: (request, _reply, ctx) => call(() => createOpdsUser(ctx.store.db, principalOf(request).userId, (request.body ?? {}) as Record<string, unknown>)),
  },
  {
    method: 'PATCH',
    url: `${BASE}/{id}`,
    auth: 'jwt',
    rule: RULE,
    schema: { params: IdParams, body: UpdateBody },
    handler: (request, _reply, ctx) => {
      const { id } = request.params as { id: number };
      return call(() => updateOpdsUser(ctx.store.db, principalOf(request).userId, id, (request.body ?? {}) as { sortOrder?: unknown }));
    },
  },
  {
    method: 'DELETE',
    url: `${BASE}/{id}`,
    auth: 'jwt',
    rule: RULE,
    schema: { params: IdParams },
    handler: async (request, reply, ctx) => {
      const { id } = request.params as { id: number };
      await call(() => deleteOpdsUser(ctx.store.db, principalOf(request).userId, id));
      return reply.status(200).send();
    },
  },
];
