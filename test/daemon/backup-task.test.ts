// The BACKUP task: listed among the tasks the web UI shows, scheduled daily by default, run through the task API with
// its outcome in the task history; a failure is recorded with its reason.
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBackup } from '../../src/core/backup/read-backup.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

let d: TestDaemon;
let admin: string;

beforeAll(async () => {
  d = await startTestDaemon();
  admin = await d.setupAdmin();
});
afterAll(() => d.close());

const get = (url: string) => d.inject({ method: 'GET', url, headers: { authorization: `Bearer ${admin}` } });
const start = () => d.inject({ method: 'POST', url: '/api/v1/tasks/start', headers: { authorization: `Bearer ${admin}` }, payload: { taskType: 'BACKUP' } });

async function lastBackupRun(): Promise<{ status: string; message: string }> {
  await Promise.allSettled([...d.ctx.background]);
  const { taskHistories } = (await get('/api/v1/tasks/last')).json() as { taskHistories: { type: string; status: string; message: string }[] };
  return taskHistories.find((t) => t.type === 'BACKUP') as { status: string; message: string };
}

describe('the BACKUP task', () => {
  it('is listed with its daily schedule', async () => {
    const tasks = (await get('/api/v1/tasks')).json() as { taskType: string; cronSupported: boolean; cronConfig?: { cronExpression: string; enabled: boolean } }[];
    expect(tasks.find((t) => t.taskType === 'BACKUP')).toMatchObject({ cronSupported: true, cronConfig: { cronExpression: '0 0 3 * * *', enabled: true } });
  });

  it('writes a scheduled archive to the backup folder and shows the run', async () => {
    expect((await start()).statusCode).toBe(202);
    const run = await lastBackupRun();
    expect(run).toMatchObject({ status: 'COMPLETED', message: expect.stringMatching(/^Backup written to .*bindery-backup-auto-\d{8}-\d{6}\.tar/) });
    const [archive] = readdirSync(d.config.backupDir);
    expect((await readBackup(join(d.config.backupDir, archive as string))).manifest.catalog.tables.users).toBe(1);
  });

  it('records a failure with its reason', async () => {
    const blocked = join(d.dir, 'not-a-folder');
    writeFileSync(blocked, 'a file where the backup folder should be');
    (d.config as { backupDir: string }).backupDir = join(blocked, 'backups');
    expect((await start()).statusCode).toBe(202);
    expect(await lastBackupRun()).toMatchObject({ status: 'FAILED', message: expect.stringMatching(/cannot create the backup folder/) });
  });
});
