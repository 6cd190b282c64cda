// Starting, tracking and cancelling tasks as Grimmory's TaskService does: one run at a time per non-parallel type,
// async types answered at once (ACCEPTED) and run in the background, sync types run before answering.
import { randomUUID } from 'node:crypto';
import { CodedError } from '../coded-error.ts';
import type { Db } from '../store/store.ts';
import { recordTask, setTaskFailed, setTaskProgress, setTaskStatus } from './task-history.ts';
import { TASK_TYPE_INFO, type TaskRunStatus, type TaskType } from './task-types.ts';

export type TaskErrorCode = 'NOT_IMPLEMENTED' | 'ALREADY_RUNNING' | 'NOT_RUNNING' | 'INVALID';

export class TaskError extends CodedError<TaskErrorCode> {}

export interface TaskRun {
  taskId: string;
  userId: number | null;
  options: unknown;
  /** True once cancellation was asked for; executors check it between steps. */
  isCancelled(): boolean;
  /** Reports progress to the task history. */
  progress(percentage: number, message: string): Promise<void>;
}

export interface TaskExecutor {
  /** Checks the options before anything is recorded; throws to refuse. */
  prepare?(options: unknown, userId: number | null): Promise<void> | void;
  /** Does the work; the string is the final message. */
  run(task: TaskRun): Promise<string | void>;
}

export interface TaskStart {
  taskId: string;
  taskType: TaskType;
  status: TaskRunStatus;
}

export class TaskRunner {
  private readonly db: Db;
  private readonly executors: Partial<Record<TaskType, TaskExecutor>>;
  private readonly track: (job: Promise<unknown>) => void;
  private readonly running = new Map<TaskType, string>();
  private readonly cancelled = new Set<string>();

  constructor(db: Db, executors: Partial<Record<TaskType, TaskExecutor>>, track: (job: Promise<unknown>) => void = () => undefined) {
    this.db = db;
    this.executors = executors;
    this.track = track;
  }

  supports(type: TaskType): boolean {
    return this.executors[type] !== undefined;
  }

  isRunning(type: TaskType): boolean {
    return this.running.has(type);
  }

  async start(type: TaskType, options: unknown, userId: number | null, onError?: (error: unknown) => void): Promise<TaskStart> {
    const executor = this.executors[type];
    if (!executor) throw new TaskError('NOT_IMPLEMENTED', `Task type not implemented: ${type}`);
    await executor.prepare?.(options, userId);
    const info = TASK_TYPE_INFO[type];
    if (!info.parallel && this.running.has(type)) throw new TaskError('ALREADY_RUNNING', `A task of type ${type} is already running. Please wait for it to complete.`);
    const taskId = randomUUID();
    if (!info.parallel) this.running.set(type, taskId);
    try {
      await recordTask(this.db, { id: taskId, type, userId, options });
    } catch (error) {
      if (!info.parallel) this.running.delete(type);
      throw error;
    }
    // Progress is written in the order it is reported, and before the outcome: with a pool of connections (PostgreSQL)
    // a report the task did not wait for could otherwise land after, and replace, the final message.
    let progressWritten: Promise<void> = Promise.resolve();
    const run: TaskRun = {
      taskId,
      userId,
      options,
      isCancelled: () => this.cancelled.has(taskId),
      progress: (percentage, message) => (progressWritten = progressWritten.then(() => setTaskProgress(this.db, taskId, percentage, message)).catch(() => undefined)),
    };
    const execute = async (): Promise<TaskRunStatus> => {
      try {
        await setTaskStatus(this.db, taskId, 'IN_PROGRESS', 'Task execution started');
        const message = await executor.run(run);
        await progressWritten;
        const status: TaskRunStatus = this.cancelled.has(taskId) ? 'CANCELLED' : 'COMPLETED';
        await setTaskStatus(this.db, taskId, status, status === 'CANCELLED' ? 'Task was cancelled' : (message ?? 'Task completed successfully'));
        return status;
      } catch (error) {
        await progressWritten;
        await setTaskFailed(this.db, taskId, error instanceof Error ? error.message : String(error)).catch(() => undefined);
        throw error;
      } finally {
        if (!info.parallel && this.running.get(type) === taskId) this.running.delete(type);
        this.cancelled.delete(taskId);
      }
    };
    if (info.async) {
      const job = execute().catch((error: unknown) => {
        onError?.(error);
        return 'FAILED' as const;
      });
      this.track(job);
      return { taskId, taskType: type, status: 'ACCEPTED' };
    }
    return { taskId, taskType: type, status: await execute() };
  }

  /** Asks every running task to stop at its next step (daemon shutdown). */
  cancelAll(): void {
    for (const taskId of this.running.values()) this.cancelled.add(taskId);
  }

  /** Asks a running task to stop at its next step. */
  async cancel(taskId: string): Promise<void> {
    if (![...this.running.values()].includes(taskId)) throw new TaskError('NOT_RUNNING', `Task not found or not running: ${taskId}`);
    this.cancelled.add(taskId);
    await setTaskStatus(this.db, taskId, 'CANCELLED', 'Task cancellation requested by user');
  }
}
