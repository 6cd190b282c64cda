// Metadata fetch jobs with the proposals they leave for review, the task history behind /api/v1/tasks, and the
// per-task-type cron settings (seeded as Grimmory seeds them).
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

const now = sql`(strftime('%Y-%m-%dT%H:%M:%fZ','now'))`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('metadata_fetch_jobs')
    .addColumn('task_id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('user_id', 'integer')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('IN_PROGRESS'))
    .addColumn('status_message', 'text')
    .addColumn('started_at', 'text', (c) => c.notNull().defaultTo(now))
    .addColumn('completed_at', 'text')
    .addColumn('total_books_count', 'integer')
    .addColumn('completed_books', 'integer', (c) => c.notNull().defaultTo(0))
    // The MetadataRefreshOptions the job ran with: accepting a proposal merges with them.
    .addColumn('options_json', 'text')
    .execute();
  await db.schema
    .createTable('metadata_fetch_proposals')
    .addColumn('proposal_id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('task_id', 'text', (c) => c.notNull().references('metadata_fetch_jobs.task_id').onDelete('cascade'))
    .addColumn('book_id', 'integer', (c) => c.notNull().references('book.id').onDelete('cascade'))
    .addColumn('fetched_at', 'text', (c) => c.notNull().defaultTo(now))
    .addColumn('reviewed_at', 'text')
    .addColumn('reviewer_user_id', 'integer')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('FETCHED'))
    .addColumn('metadata_json', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('metadata_fetch_proposals_task_idx').on('metadata_fetch_proposals').column('task_id').execute();
  await db.schema.createIndex('metadata_fetch_proposals_book_idx').on('metadata_fetch_proposals').column('book_id').execute();

  await db.schema
    .createTable('tasks')
    .addColumn('id', 'text', (c) => c.primaryKey().notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('user_id', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'text')
    .addColumn('completed_at', 'text')
    .addColumn('progress_percentage', 'integer')
    .addColumn('message', 'text')
    .addColumn('error_details', 'text')
    .addColumn('task_options', 'text')
    .execute();
  await db.schema.createIndex('tasks_type_created_idx').on('tasks').columns(['type', 'created_at']).execute();

  await db.schema
    .createTable('task_cron_configuration')
    .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    .addColumn('task_type', 'text', (c) => c.notNull().unique())
    .addColumn('cron_expression', 'text')
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_by', 'integer', (c) => c.notNull().defaultTo(-1))
    .addColumn('created_at', 'text', (c) => c.notNull().defaultTo(now))
    .addColumn('updated_at', 'text', (c) => c.notNull().defaultTo(now))
    .execute();
  for (const [type, cron, enabled] of [
    ['CLEANUP_DELETED_BOOKS', '0 40 0 * * 1', 1],
    ['CLEANUP_TEMP_METADATA', '0 45 0 * * 1', 1],
    ['SYNC_LIBRARY_FILES', '0 0 1 * * *', 1],
    ['UPDATE_BOOK_RECOMMENDATIONS', '0 30 1 * * *', 1],
    ['BOOKDROP_PERIODIC_SCANNING', '0 */10 * * * *', 0],
  ] as const) {
    await sql`insert into task_cron_configuration (task_type, cron_expression, enabled) values (${type}, ${cron}, ${enabled})`.execute(db);
  }
}
