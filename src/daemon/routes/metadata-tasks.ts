// MetadataTaskController: a metadata fetch task with the proposals waiting for review, deleting one, and reviewing a
// proposal (ACCEPTED merges it into the book). `GET /api/metadata/tasks/active` lives with the UI reads.
import Type from 'typebox';
import { deleteFetchJob, fetchTaskDetails, proposalStatus } from '../../core/metadata/fetch-tasks.ts';
import { reviewAndApply } from '../../core/metadata/proposal-review.ts';
import { principalOf } from '../authenticate.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

const TaskParams = Type.Object({ taskId: Type.String({ minLength: 1 }) });

export const metadataTaskRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/metadata/tasks/{taskId}',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: TaskParams },
    handler: async (request, reply, ctx) => {
      const { taskId } = request.params as { taskId: string };
      const task = await fetchTaskDetails(ctx.store.db, taskId);
      if (!task) return reply.status(404).send();
      return { task };
    },
  },
  {
    method: 'DELETE',
    url: '/api/metadata/tasks/{taskId}',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: { params: TaskParams },
    handler: async (request, reply, ctx) => {
      const { taskId } = request.params as { taskId: string };
      return reply.status((await deleteFetchJob(ctx.store.db, taskId)) ? 204 : 404).send();
    },
  },
  {
    method: 'POST',
    url: '/api/metadata/tasks/{taskId}/proposals/{proposalId}/status',
    auth: 'jwt',
    rule: adminOr('canEditMetadata'),
    schema: {
      params: Type.Object({ taskId: Type.String({ minLength: 1 }), proposalId: Type.Integer() }),
      querystring: Type.Object({ status: Type.String() }),
    },
    handler: async (request, reply, ctx) => {
      const { taskId, proposalId } = request.params as { taskId: string; proposalId: number };
      const status = proposalStatus((request.query as { status: string }).status);
      // Grimmory answers an unknown status like an unknown proposal.
      if (!status) return reply.status(404).send();
      const result = await reviewAndApply({ db: ctx.store.db, http: ctx.http, coversRoot: ctx.paths.covers }, taskId, proposalId, status, principalOf(request).userId);
      if (!result) return reply.status(404).send();
      if (result.applied?.coverError) request.log.warn({ bookId: result.proposal.bookId, error: result.applied.coverError }, 'proposal cover not applied');
      return reply.status(200).send();
    },
  },
];
