// The `tasks` table: one row per task run, as Grimmory's task history keeps it.
import type { Db } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { emitEvent } from '../events/live-events.ts';
import { TASK_TYPES, TASK_TYPE_INFO, type TaskRunStatus, type TaskType } from './task-types.ts';

export interface TaskHistoryJson {
  id: string | null;
  type: TaskType;
  status: TaskRunStatus | null;
  progressPercentage: number | null;
  message: string | null;
  createdAt: string | null;
  updatedAt: string | null;
  completedAt: string | null;
}

export async function recordTask(db: Db, task: { id: string; type: TaskType; userId: number | null; options: unknown }): Promise<void> {
  await db
    .insertInto('tasks')
    .values({ id: task.id, type: task.type, status: 'ACCEPTED', user_id: task.userId, created_at: nowIso(), progress_percentage: 0, task_options: JSON.stringify(task.options ?? {}) })
    .execute();
}

export async function setTaskStatus(db: Db, id: string, status: TaskRunStatus, message: string): Promise<void> {
  const now = nowIso();
  const done = status === 'COMPLETED' || status === 'FAILED';
  await db
    .updateTable('tasks')
    .set({ status, message, updated_at: now, ...(done ? { completed_at: now, progress_percentage: 100 } : {}) })
    .where('id', '=', id)
    .execute();
  await reportTask(db, id);
}

/** The run as it is now, as a TaskProgressPayload to the user who started it (or the managers for scheduled runs). */
async function reportTask(db: Db, id: string): Promise<void> {
  const row = await db.selectFrom('tasks').select(['type', 'status', 'user_id', 'progress_percentage', 'message']).where('id', '=', id).executeTakeFirst();
  if (!row) return;
  await emitEvent(db, {
    kind: 'task-progress',
    audience: row.user_id === null ? 'managers' : { userId: row.user_id },
    taskId: id,
    taskType: row.type,
    message: row.message ?? '',
    progress: row.progress_percentage ?? 0,
    // Grimmory's task status has no ACCEPTED: a run not started yet shows as in progress.
    taskStatus: row.status === 'ACCEPTED' ? 'IN_PROGRESS' : row.status,
  });
}

export async function setTaskProgress(db: Db, id: string, percentage: number, message: string): Promise<void> {
  await db.updateTable('tasks').set({ progress_percentage: Math.max(0, Math.min(100, Math.round(percentage))), message, updated_at: nowIso() }).where('id', '=', id).execute();  await reportTask(db, id);
}

export async function setTaskFailed(db: Db, id: string, errorDetails: string): Promise<void> {
  const now = nowIso();
  await db.updateTable('tasks').set({ status: 'FAILED', error_details: errorDetails, message: errorDetails, completed_at: now, updated_at: now }).where('id', '=', id).execute();  await reportTask(db, id);
}

/** The newest run of every task type shown in the UI; a type never run appears with only its type. */
export async function latestTasks(db: Db): Promise<TaskHistoryJson[]> {
  const rows = await db.selectFrom('tasks').selectAll().orderBy('created_at', 'desc').orderBy('id').execute();
  const newest = new Map<string, (typeof rows)[number]>();
  for (const row of rows) if (!newest.has(row.type)) newest.set(row.type, row);
  return TASK_TYPES.filter((t) => !TASK_TYPE_INFO[t].hiddenFromUI).map((type) => {
    const row = newest.get(type);
    if (!row) return { id: null, type, status: null, progressPercentage: null, message: null, createdAt: null, updatedAt: null, completedAt: null };
    return {
      id: row.id,
      type,
      status: row.status as TaskRunStatus,
      progressPercentage: row.progress_percentage,
      message: row.message,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      completedAt: row.completed_at,
    };
  });
}
