// Per-task-type cron settings (task_cron_configuration): Spring's six-field expressions, seconds first.
import { localDateTime as formatLocal } from '../time.ts';
import { CodedError } from '../coded-error.ts';
import { cronExpressionError } from './local-cron.ts';
import type { Db } from '../store/store.ts';
import { nowIso } from '../time.ts';
import { TASK_TYPE_INFO, type TaskType } from './task-types.ts';

export class CronConfigError extends CodedError<'INVALID'> {}

export interface CronConfigJson {
  id: number | null;
  taskType: TaskType;
  cronExpression: string | null;
  enabled: boolean;
  /** LocalDateTime (no zone), as Grimmory sends it. */
  createdAt: string | null;
  updatedAt: string | null;
}

/** `2025-03-01T10:15:30.123Z` → `2025-03-01T10:15:30.123` in the server's zone. */
function localDateTime(iso: string | null): string | null {
  const d = iso ? new Date(iso) : undefined;
  return d && !Number.isNaN(d.getTime()) ? formatLocal(d, 'millis') : null;
}

function requireCronType(type: TaskType): void {
  if (!TASK_TYPE_INFO[type].cronSupported) throw new CronConfigError('INVALID', `Task type ${type} does not support cron scheduling`);
}

export function checkCronExpression(expression: string): void {
  const fields = expression.trim().split(/\s+/);
  if (expression.trim() === '') throw new CronConfigError('INVALID', 'Cron expression is required');
  if (fields.length !== 6) throw new CronConfigError('INVALID', 'Invalid cron expression format. Expected 6 fields (second minute hour day month day-of-week)');
  const error = cronExpressionError(expression.trim());
  if (error) throw new CronConfigError('INVALID', `Invalid cron expression: ${expression}. Error: ${error.message}`);
}

type CronRow = { id: number; task_type: string; cron_expression: string | null; enabled: number; created_at: string; updated_at: string };

function toJson(type: TaskType, row: CronRow | undefined): CronConfigJson {
  if (!row) return { id: null, taskType: type, cronExpression: null, enabled: false, createdAt: null, updatedAt: null };
  return { id: row.id, taskType: type, cronExpression: row.cron_expression, enabled: row.enabled === 1, createdAt: localDateTime(row.created_at), updatedAt: localDateTime(row.updated_at) };
}

export async function cronConfigOf(db: Db, type: TaskType): Promise<CronConfigJson> {
  requireCronType(type);
  return toJson(type, await db.selectFrom('task_cron_configuration').selectAll().where('task_type', '=', type).executeTakeFirst());
}

/** Changes what the request gives (a new type's row starts disabled). */
export async function patchCronConfig(db: Db, type: TaskType, patch: { cronExpression?: string | null; enabled?: boolean | null }, userId: number | null): Promise<CronConfigJson> {
  requireCronType(type);
  if (patch.cronExpression !== undefined && patch.cronExpression !== null) checkCronExpression(patch.cronExpression);
  const now = nowIso();
  await db
    .insertInto('task_cron_configuration')
    .values({ task_type: type, cron_expression: null, enabled: 0, created_by: userId ?? -1, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('task_type').doNothing())
    .execute();
  await db
    .updateTable('task_cron_configuration')
    .set({
      updated_at: now,
      ...(patch.cronExpression !== undefined && patch.cronExpression !== null ? { cron_expression: patch.cronExpression.trim() } : {}),
      ...(patch.enabled !== undefined && patch.enabled !== null ? { enabled: patch.enabled ? 1 : 0 } : {}),
    })
    .where('task_type', '=', type)
    .execute();
  return cronConfigOf(db, type);
}

/** Every cron-capable task type with its stored schedule (types never configured come back disabled). */
export async function listCronConfigs(db: Db): Promise<CronConfigJson[]> {
  const rows = await db.selectFrom('task_cron_configuration').selectAll().execute();
  const byType = new Map(rows.map((row) => [row.task_type, row]));
  return (Object.keys(TASK_TYPE_INFO) as TaskType[]).filter((type) => TASK_TYPE_INFO[type].cronSupported).map((type) => toJson(type, byType.get(type)));
}
