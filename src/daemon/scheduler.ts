// Runs the task types that have a cron schedule (task_cron_configuration, Spring's six-field expressions) through the
// daemon's task runner, and re-reads the schedules when they change: at once when changed through this process, and
// within a few seconds when another replica changed them (only the lease holder runs the scheduler).
import type { CronJob } from 'cron';
import { listCronConfigs } from '../core/tasks/task-cron.ts';
import { sameGeneration } from '../core/store/snapshot.ts';
import { TaskError } from '../core/tasks/task-runner.ts';
import type { TaskType } from '../core/tasks/task-types.ts';
import type { DaemonContext } from './context.ts';
import { taskRunnerFor } from './metadata-runtime.ts';

export interface Scheduler {
  /** The task types scheduled now, with their expressions. */
  scheduled(): { taskType: TaskType; cronExpression: string }[];
  reload(): Promise<void>;
  stop(): void;
}

const FOLLOW_MS = 5000;

const schedulers = new WeakMap<DaemonContext, Scheduler>();

export function schedulerOf(ctx: DaemonContext): Scheduler | undefined {
  return schedulers.get(ctx);
}

export async function startScheduler(ctx: DaemonContext): Promise<Scheduler> {
  // The cron library (and its date library) loads with the first schedule, not with the daemon.
  const { localCronJob } = await import('../core/tasks/local-cron.ts');
  let jobs: { taskType: TaskType; cronExpression: string; job: CronJob }[] = [];
  const runner = taskRunnerFor(ctx);

  const fire = (taskType: TaskType) => (): void => {
    // Tracked like every background job, so shutdown waits for a run in progress.
    const run = start(taskType);
    ctx.background.add(run);
    void run.finally(() => ctx.background.delete(run));
  };

  const start = async (taskType: TaskType): Promise<void> => {
    try {
      const started = await runner.start(taskType, {}, null, (error) => ctx.log.error({ err: error, taskType }, 'scheduled task failed'));
      ctx.log.info({ taskType, taskId: started.taskId }, 'scheduled task started');
    } catch (error) {
      // A run still going when the next is due is skipped, not queued.
      if (error instanceof TaskError && error.code === 'ALREADY_RUNNING') ctx.log.info({ taskType }, 'scheduled task skipped: still running');
      else ctx.log.error({ err: error, taskType }, 'scheduled task could not start');
    }
  };

  const stopJobs = (): void => {
    for (const { job } of jobs) void job.stop();
    jobs = [];
  };

  let loaded = '';
  const reload = async (): Promise<void> => {
    const configs = await listCronConfigs(ctx.store.db);
    loaded = JSON.stringify(configs);
    stopJobs();
    for (const config of configs) {
      if (!config.enabled || !config.cronExpression || !runner.supports(config.taskType)) continue;
      try {
        jobs.push({ taskType: config.taskType, cronExpression: config.cronExpression, job: localCronJob(config.cronExpression, fire(config.taskType)) });
      } catch (error) {
        ctx.log.warn({ err: error, taskType: config.taskType, cron: config.cronExpression }, 'cron expression not scheduled');
      }
    }
  };

  await reload();
  // Schedules changed by another process: looked at only when the catalog changed at all.
  let seen = ctx.store.generation();
  const follow = setInterval(() => {
    const now = ctx.store.generation();
    if (sameGeneration(now, seen)) return;
    seen = now;
    listCronConfigs(ctx.store.db)
      .then((configs) => (JSON.stringify(configs) === loaded ? undefined : reload()))
      .catch((error: unknown) => ctx.log.warn({ err: error }, 'scheduled tasks: schedules not re-read'));
  }, FOLLOW_MS);
  follow.unref();
  const stop = (): void => {
    clearInterval(follow);
    stopJobs();
    if (schedulers.get(ctx) === scheduler) schedulers.delete(ctx);
  };
  const scheduler: Scheduler = { scheduled: () => jobs.map(({ taskType, cronExpression }) => ({ taskType, cronExpression })), reload, stop };
  schedulers.set(ctx, scheduler);
  return scheduler;
}
