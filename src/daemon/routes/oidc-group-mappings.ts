// OIDC group mappings for administrators (Grimmory's OidcGroupMappingController).
import Type from 'typebox';
import { createGroupMapping, deleteGroupMapping, listGroupMappings, updateGroupMapping, type GroupMappingInput } from '../../core/auth/oidc/group-mappings.ts';
import { audit } from '../audit.ts';
import { ADMIN, type RouteSpec } from '../route-spec.ts';
import { oidcCall } from './oidc.ts';
import { nullable } from '../schema-types.ts';

const IdParams = Type.Object({ id: Type.Integer() });
const OidcGroupMapping = Type.Object({
  id: nullable(Type.Integer()),
  oidcGroupClaim: nullable(Type.String({ maxLength: 255 })),
  isAdmin: Type.Optional(Type.Boolean()),
  permissions: Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 255 }), { maxItems: 100 }), Type.Null()])),
  libraryIds: Type.Optional(Type.Union([Type.Array(Type.Integer(), { maxItems: 10_000 }), Type.Null()])),
  description: nullable(Type.String({ maxLength: 500 })),
});

interface MappingBody {
  oidcGroupClaim?: string | null;
  isAdmin?: boolean;
  permissions?: string[] | null;
  libraryIds?: number[] | null;
  description?: string | null;
}

function inputOf(body: MappingBody): GroupMappingInput {
  return {
    oidcGroupClaim: body.oidcGroupClaim ?? null,
    isAdmin: body.isAdmin === true,
    permissions: body.permissions ?? null,
    libraryIds: body.libraryIds ?? null,
    description: body.description ?? null,
  };
}

const BASE = '/api/v1/admin/oidc-group-mappings';

export const oidcGroupMappingRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: BASE,
    auth: 'jwt',
    rule: ADMIN,
    handler: async (_request, _reply, ctx) => listGroupMappings(ctx.store.db),
  },
  {
    method: 'POST',
    url: BASE,
    auth: 'jwt',
    rule: ADMIN,
    schema: { body: OidcGroupMapping },
    handler: async (request, _reply, ctx) => {
      const created = await oidcCall(() => createGroupMapping(ctx.store.db, inputOf(request.body as MappingBody)));
      await audit(ctx, request, 'OIDC_GROUP_MAPPING_CREATED', `Created OIDC group mapping: ${created.oidcGroupClaim}`);
      return created;
    },
  },
  {
    method: 'PUT',
    url: `${BASE}/{id}`,
    auth: 'jwt',
    rule: ADMIN,
    schema: { params: IdParams, body: OidcGroupMapping },
    handler: async (request, _reply, ctx) => {
      const { id } = request.params as { id: number };
      const updated = await oidcCall(() => updateGroupMapping(ctx.store.db, id, inputOf(request.body as MappingBody)));
      await audit(ctx, request, 'OIDC_GROUP_MAPPING_UPDATED', `Updated OIDC group mapping: ${updated.oidcGroupClaim}`);
      return updated;
    },
  },
  {
    method: 'DELETE',
    url: `${BASE}/{id}`,
    auth: 'jwt',
    rule: ADMIN,
    schema: { params: IdParams },
    handler: async (request, reply, ctx) => {
      const { id } = request.params as { id: number };
      const deleted = await oidcCall(() => deleteGroupMapping(ctx.store.db, id));
      await audit(ctx, request, 'OIDC_GROUP_MAPPING_DELETED', `Deleted OIDC group mapping: ${deleted.oidcGroupClaim}`);
      return reply.status(200).send();
    },
  },
];
