// Content restrictions per user: admins manage them, a user may read their own.
import Type from 'typebox';
import {
  addRestriction,
  deleteAllRestrictions,
  deleteRestriction,
  listRestrictions,
  replaceRestrictions,
  RESTRICTION_MODES,
  RESTRICTION_TYPES,
  RestrictionError,
  type RestrictionInput,
  type StoredRestriction,
} from '../../core/users/content-restrictions.ts';
import { ApiError, localDateTime } from '../http-errors.ts';
import { ADMIN, type RouteSpec } from '../route-spec.ts';
import { accountCall } from './auth.ts';

const UserParams = Type.Object({ userId: Type.Integer() });
const RestrictionParams = Type.Object({ userId: Type.Integer(), restrictionId: Type.Integer() });

const ContentRestriction = Type.Object({
  id: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  userId: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  restrictionType: Type.String({ enum: [...RESTRICTION_TYPES] }),
  mode: Type.String({ enum: [...RESTRICTION_MODES] }),
  value: Type.String({ minLength: 1, maxLength: 255 }),
  createdAt: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

const RESTRICTION_STATUS = { NOT_FOUND: 404, DUPLICATE: 409, INVALID: 400 } as const;

async function mapped<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await accountCall(work);
  } catch (error) {
    if (error instanceof RestrictionError) throw new ApiError(RESTRICTION_STATUS[error.code], error.message);
    throw error;
  }
}

/** The wire shape: Grimmory leaves out null fields and sends createdAt as a zone-less local date-time. */
function restrictionJson(r: StoredRestriction): Record<string, unknown> {
  return { id: r.id, userId: r.userId, restrictionType: r.restrictionType, mode: r.mode, value: r.value, createdAt: localDateTime(new Date(r.createdAt)) };
}

const input = (body: RestrictionInput): RestrictionInput => ({ restrictionType: body.restrictionType, mode: body.mode, value: body.value });
const userIdOf = (params: unknown): number => (params as { userId: number }).userId;

export const contentRestrictionRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/users/{userId}/content-restrictions',
    auth: 'jwt',
    rule: { selfOrAnyOf: ['admin'], param: 'userId' },
    schema: { params: UserParams },
    handler: async (request, _reply, ctx) => (await mapped(() => listRestrictions(ctx.store.db, userIdOf(request.params)))).map(restrictionJson),
  },
  {
    method: 'POST',
    url: '/api/v1/users/{userId}/content-restrictions',
    auth: 'jwt',
    rule: ADMIN,
    schema: { params: UserParams, body: ContentRestriction },
    handler: async (request, reply, ctx) => {
      const created = await mapped(() => addRestriction(ctx.store.db, userIdOf(request.params), input(request.body as RestrictionInput)));
      return reply.status(201).send(restrictionJson(created));
    },
  },
  {
    method: 'PUT',
    url: '/api/v1/users/{userId}/content-restrictions',
    auth: 'jwt',
    rule: ADMIN,
    schema: { params: UserParams, body: Type.Array(ContentRestriction) },
    handler: async (request, _reply, ctx) =>
      (await mapped(() => replaceRestrictions(ctx.store.db, userIdOf(request.params), (request.body as RestrictionInput[]).map(input)))).map(restrictionJson),
  },
  {
    method: 'DELETE',
    url: '/api/v1/users/{userId}/content-restrictions/{restrictionId}',
    auth: 'jwt',
    rule: ADMIN,
    schema: { params: RestrictionParams },
    handler: async (request, reply, ctx) => {
      const { userId, restrictionId } = request.params as { userId: number; restrictionId: number };
      await mapped(() => deleteRestriction(ctx.store.db, userId, restrictionId));
      return reply.status(204).send();
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/users/{userId}/content-restrictions',
    auth: 'jwt',
    rule: ADMIN,
    schema: { params: UserParams },
    handler: async (request, reply, ctx) => {
      await mapped(() => deleteAllRestrictions(ctx.store.db, userIdOf(request.params)));
      return reply.status(204).send();
    },
  },
];
