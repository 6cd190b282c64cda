// TaskController: the task types, starting and cancelling runs, the newest run of each type, cron settings.
// Bindery runs REFRESH_METADATA_MANUAL (a metadata refresh) and REFRESH_LIBRARY_METADATA (a rescan of every library).
import Type from 'typebox';
import { hasAny, isAdmin, type Principal } from '../../core/auth/principal.ts';
import { bookAccess, canSeeLibrary } from '../../core/auth/visibility.ts';
import { RefreshError, type RefreshRequest } from '../../core/metadata/refresh-run.ts';
import { cronConfigOf, CronConfigError, patchCronConfig } from '../../core/tasks/task-cron.ts';
import { latestTasks } from '../../core/tasks/task-history.ts';
import { TaskError } from '../../core/tasks/task-runner.ts';
import { isTaskType, TASK_TYPE_INFO, TASK_TYPES, type TaskType } from '../../core/tasks/task-types.ts';
import { principalOf } from '../authenticate.ts';
import type { DaemonContext } from '../context.ts';
import { ApiError, badRequest, conflict, forbidden } from '../http-errors.ts';
import { taskRunnerFor } from '../metadata-runtime.ts';
import { schedulerOf } from '../scheduler.ts';
import { clusterStatus } from '../singletons.ts';
import { adminOr, type RouteSpec } from '../route-spec.ts';

const TASK_MANAGER = adminOr('canAccessTaskManager');

const TaskCreateRequest = Type.Object({
  taskId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  taskType: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  triggeredByCron: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  options: Type.Optional(Type.Unknown()),
});

function taskError(error: unknown): never {
  if (error instanceof TaskError) {
    if (error.code === 'ALREADY_RUNNING') throw conflict(error.message);
    if (error.code === 'NOT_RUNNING') throw new ApiError(404, error.message);
    throw badRequest(error.message);
  }
  if (error instanceof RefreshError) {
    if (error.code === 'LIBRARY_NOT_FOUND') throw new ApiError(404, error.message);
    if (error.code === 'INVALID_REFRESH_TYPE') throw badRequest('The refresh type is invalid');
    throw badRequest(error.message);
  }
  if (error instanceof CronConfigError) throw badRequest(error.message);
  throw error;
}

/** A MetadataRefreshRequest from the task options, checked against what the caller may do. */
async function refreshRequestFor(ctx: DaemonContext, principal: Principal, options: unknown): Promise<RefreshRequest> {
  const o = (typeof options === 'object' && options !== null ? options : {}) as Record<string, unknown>;
  if (o.refreshType !== 'BOOKS' && o.refreshType !== 'LIBRARY') throw badRequest('The refresh type is invalid');
  const bookIds = Array.isArray(o.bookIds) ? o.bookIds.filter((id): id is number => Number.isSafeInteger(id)) : [];
  const libraryId = typeof o.libraryId === 'number' ? o.libraryId : null;
  const bulk = o.refreshType === 'LIBRARY' || bookIds.length > 1;
  if (bulk && !hasAny(principal, ['admin', 'canBulkAutoFetchMetadata'])) throw forbidden('Permission denied: CAN_BULK_AUTO_FETCH_METADATA');
  if (!isAdmin(principal)) {
    if (o.refreshType === 'LIBRARY' && libraryId !== null && !canSeeLibrary(principal, libraryId)) throw forbidden('You are not authorized to access this library.');
    for (const id of bookIds) if ((await bookAccess(ctx.store.db, principal, id)) === 'hidden') throw forbidden('You are not authorized to access this book.');
  }
  return { refreshType: o.refreshType, libraryId, bookIds, ...(o.refreshOptions !== undefined ? { refreshOptions: o.refreshOptions } : {}) };
}

export const taskRoutes: RouteSpec[] = [
  {
    method: 'GET',
    url: '/api/v1/tasks',
    auth: 'jwt',
    rule: TASK_MANAGER,
    handler: async (_request, _reply, ctx) => {
      const out: Record<string, unknown>[] = [];
      for (const type of TASK_TYPES) {
        const info = TASK_TYPE_INFO[type];
        if (info.hiddenFromUI) continue;
        out.push({
          taskType: type,
          name: info.name,
          description: info.description,
          parallel: info.parallel,
          async: info.async,
          cronSupported: info.cronSupported,
          ...(info.cronSupported ? { cronConfig: await cronConfigOf(ctx.store.db, type) } : {}),
        });
      }
      return out;
    },
  },
  {
    method: 'POST',
    url: '/api/v1/tasks/start',
    auth: 'jwt',
    rule: TASK_MANAGER,
    schema: { body: TaskCreateRequest },
    handler: async (request, reply, ctx) => {
      const body = request.body as { taskType?: string | null; options?: unknown };
      if (body.taskType === undefined || body.taskType === null) throw badRequest('Task request and task type cannot be null');
      if (!isTaskType(body.taskType)) throw badRequest(`Unknown task type: ${body.taskType}`);
      const type: TaskType = body.taskType;
      const principal = principalOf(request);
      const runner = taskRunnerFor(ctx);
      if (!runner.supports(type)) throw badRequest(`Task type not implemented: ${type}`);
      const options = type === 'REFRESH_METADATA_MANUAL' ? await refreshRequestFor(ctx, principal, body.options) : (body.options ?? {});
      const started = await runner
        .start(type, options, principal.userId, (error) => request.log.error({ err: error, taskType: type }, 'task failed'))
        .catch(taskError);
      return reply.status(started.status === 'ACCEPTED' ? 202 : 200).send(started);
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/tasks/{taskId}/cancel',
    auth: 'jwt',
    rule: TASK_MANAGER,
    schema: { params: Type.Object({ taskId: Type.String({ minLength: 1 }) }) },
    handler: async (request, _reply, ctx) => {
      const { taskId } = request.params as { taskId: string };
      await taskRunnerFor(ctx).cancel(taskId).catch(taskError);
      return { taskId, cancelled: true, message: 'Task cancellation requested. The task will stop at the next checkpoint.' };
    },
  },
  {
    method: 'GET',
    url: '/api/v1/tasks/last',
    auth: 'jwt',
    rule: TASK_MANAGER,
    // `cluster`: which server process runs the scheduler and the other singleton jobs (an addition to Grimmory's shape).
    handler: async (_request, _reply, ctx) => ({ taskHistories: await latestTasks(ctx.store.db), cluster: await clusterStatus(ctx) }),
  },
  {
    method: 'PATCH',
    url: '/api/v1/tasks/{taskType}/cron',
    auth: 'jwt',
    rule: TASK_MANAGER,
    schema: {
      params: Type.Object({ taskType: Type.String() }),
      body: Type.Object({ cronExpression: Type.Optional(Type.Union([Type.String(), Type.Null()])), enabled: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])) }),
    },
    handler: async (request, _reply, ctx) => {
      const { taskType } = request.params as { taskType: string };
      if (!isTaskType(taskType)) throw badRequest(`Unknown task type: ${taskType}`);
      const body = request.body as { cronExpression?: string | null; enabled?: boolean | null };
      const config = await patchCronConfig(ctx.store.db, taskType, body, principalOf(request).userId).catch(taskError);
      await schedulerOf(ctx)?.reload();
      return config;
    },
  },
];
