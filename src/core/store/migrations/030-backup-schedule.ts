// The scheduled backup (task type BACKUP): daily at 03:00, server time, on by default; retention comes from the
// settings (backupKeepDaily, backupKeepWeekly).
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`insert into task_cron_configuration (task_type, cron_expression, enabled) values ('BACKUP', '0 0 3 * * *', 1) on conflict (task_type) do nothing`.execute(db);
}
