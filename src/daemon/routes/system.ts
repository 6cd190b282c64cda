// Health, version and first-run setup.
import Type from 'typebox';
import { currentInstance } from '../../core/cluster/instance.ts';
import { countUsers, createFirstAdmin, UserError } from '../../core/users/users.ts';
import { VERSION } from '../../version.ts';
import { ApiError } from '../http-errors.ts';
import { localDateTime } from '../http-errors.ts';
import { success } from '../responses.ts';
import type { RouteSpec } from '../route-spec.ts';
import { singletonsOf } from '../singletons.ts';

const InitialUserRequest = Type.Object({
  username: Type.String({ minLength: 1, pattern: '\\S' }),
  email: Type.String({ minLength: 1, format: 'email' }),
  name: Type.String({ minLength: 1, pattern: '\\S' }),
  password: Type.String({ minLength: 8, maxLength: 72 }),
});

export const systemRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/healthcheck',
    auth: 'public',
    // Which process answered, and which singleton jobs it runs (the full lease table is in GET /api/v1/tasks/last).
    handler: (_req, _reply, ctx) =>
      success({ status: 'UP', message: 'Application is running smoothly.', timestamp: localDateTime(), version: VERSION, instance: currentInstance().name, singletons: singletonsOf(ctx)?.running() ?? [] }),
  },
  {
    method: 'GET',
    url: '/api/v1/setup/status',
    auth: 'public',
    handler: async (_req, _reply, ctx) => success((await countUsers(ctx.store.db)) > 0),
  },
  {
    method: 'POST',
    url: '/api/v1/setup',
    auth: 'public',
    schema: { body: InitialUserRequest },
    handler: async (request, _reply, ctx) => {
      const body = request.body as { username: string; email: string; name: string; password: string };
      try {
        await createFirstAdmin(ctx.store.db, { username: body.username, email: body.email, name: body.name, password: body.password });
      } catch (error) {
        if (error instanceof UserError && error.code === 'CONFLICT') throw new ApiError(403, 'Setup is already completed.');
        throw error;
      }
      return success(null, 'Admin user created successfully');
    },
  },
];
