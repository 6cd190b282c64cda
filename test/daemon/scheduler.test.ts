// Scheduled tasks: what the stored cron schedules start, a schedule changed over the API taking effect at once, and
// the cleanup of finished metadata fetch jobs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLibrary } from '../../src/core/libraries/libraries.ts';
import { forgetFinishedFetchJobs } from '../../src/core/metadata/fetch-task-cleanup.ts';
import { startScheduler, type Scheduler } from '../../src/daemon/scheduler.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

let d: TestDaemon;
let lib: TempLibrary;
let admin: string;
let scheduler: Scheduler;

beforeAll(async () => {
  d = await startTestDaemon();
  admin = await d.setupAdmin();
  lib = makeTempLibrary();
  await createLibrary(d.store.db, { name: 'Books', paths: [lib.root] });
  scheduler = await startScheduler(d.ctx);
});
afterAll(async () => {
  await d.close();
  lib.cleanup();
});

const patchCron = (taskType: string, body: object) => d.inject({ method: 'PATCH', url: `/api/v1/tasks/${taskType}/cron`, headers: { authorization: `Bearer ${admin}` }, payload: body });

describe('the scheduler', () => {
  it('schedules the enabled task types it can run, with their stored expressions', () => {
    expect(scheduler.scheduled()).toEqual(
      expect.arrayContaining([
        { taskType: 'SYNC_LIBRARY_FILES', cronExpression: '0 0 1 * * *' },
        { taskType: 'CLEANUP_TEMP_METADATA', cronExpression: '0 45 0 * * 1' },
      ]),
    );
    // Disabled by default, and a type with nothing to run, are not scheduled.
    expect(scheduler.scheduled().map((s) => s.taskType)).not.toContain('BOOKDROP_PERIODIC_SCANNING');
    expect(scheduler.scheduled().map((s) => s.taskType)).not.toContain('UPDATE_BOOK_RECOMMENDATIONS');
  });

  it('runs a library sync on the schedule set over the API, and stops when it is switched off', async () => {
    await writeSimpleEpub(lib.path('Dune.epub'), { title: 'Dune', authors: ['Frank Herbert'] });
    expect((await patchCron('SYNC_LIBRARY_FILES', { cronExpression: '* * * * * *', enabled: true })).statusCode).toBe(200);
    expect(scheduler.scheduled()).toContainEqual({ taskType: 'SYNC_LIBRARY_FILES', cronExpression: '* * * * * *' });
    let books = 0;
    for (let i = 0; i < 60 && books === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      books = (await d.store.db.selectFrom('book').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;
    }
    expect(books).toBe(1);
    expect((await patchCron('SYNC_LIBRARY_FILES', { enabled: false })).statusCode).toBe(200);
    expect(scheduler.scheduled().map((s) => s.taskType)).not.toContain('SYNC_LIBRARY_FILES');
    await Promise.allSettled([...d.ctx.background]);
    const runs = await d.store.db.selectFrom('tasks').select(['type', 'status']).where('type', '=', 'SYNC_LIBRARY_FILES').execute();
    expect(runs.length).toBeGreaterThan(0);
    expect(runs.every((r) => r.status === 'COMPLETED')).toBe(true);
  });

  it('refuses an invalid expression and keeps the old schedule', async () => {
    const res = await patchCron('CLEANUP_TEMP_METADATA', { cronExpression: 'every day' });
    expect(res.statusCode).toBe(400);
    expect(scheduler.scheduled()).toContainEqual({ taskType: 'CLEANUP_TEMP_METADATA', cronExpression: '0 45 0 * * 1' });
  });
});

describe('cleaning up metadata fetch jobs', () => {
  it('forgets jobs that ended more than a week ago, with their proposals, and keeps the rest', async () => {
    const bookId = (await d.store.db.selectFrom('book').select('id').executeTakeFirstOrThrow()).id;
    const now = new Date('2026-11-21T12:00:00Z');
    const job = (id: string, status: string, completedAt: string | null) => ({ task_id: id, status, started_at: '2026-11-01T00:00:00Z', completed_at: completedAt, completed_books: 0 });
    await d.store.db.insertInto('metadata_fetch_jobs').values([job('old', 'COMPLETED', '2026-11-10T00:00:00Z'), job('recent', 'COMPLETED', '2026-11-20T00:00:00Z'), job('running', 'IN_PROGRESS', null)]).execute();
    await d.store.db.insertInto('metadata_fetch_proposals').values({ task_id: 'old', book_id: bookId, metadata_json: '{}' } as never).execute();
    expect(await forgetFinishedFetchJobs(d.store.db, 7, now)).toBe(1);
    const left = (await d.store.db.selectFrom('metadata_fetch_jobs').select('task_id').execute()).map((r) => r.task_id).sort();
    expect(left).toEqual(['recent', 'running']);
    expect(await d.store.db.selectFrom('metadata_fetch_proposals').selectAll().where('task_id', '=', 'old').execute()).toEqual([]);
  });
});
