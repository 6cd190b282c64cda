// The BACKUP task: one archive in the backup folder, named as a scheduled one, then retention.
import { configFilePath, type Config } from '../config.ts';
import { createBackup } from './create-backup.ts';
import { applyRetention } from './retention.ts';

export interface ScheduledBackupInput {
  config: Pick<Config, 'dataDir' | 'backupDir' | 'backupKeepDaily' | 'backupKeepWeekly'>;
  catalogPath: string;
  isCancelled: () => boolean;
  progress: (percentage: number, message: string) => void;
}

export async function runScheduledBackup(input: ScheduledBackupInput): Promise<string> {
  const { config } = input;
  // One report per step of the percentage: a catalog on PostgreSQL reports progress after every batch of rows.
  let last = '';
  const progress = (percentage: number, message: string): void => {
    const key = `${percentage} ${message}`;
    if (key === last) return;
    last = key;
    input.progress(percentage, message);
  };
  const result = await createBackup({
    dataDir: config.dataDir,
    catalogPath: input.catalogPath,
    target: `${config.backupDir}/`,
    configFile: configFilePath(undefined),
    scheduled: true,
    isCancelled: input.isCancelled,
    onProgress: (p) => {
      if (p.phase === 'catalog') progress(Math.round((p.done / Math.max(p.total ?? 1, 1)) * 20), 'Copying the catalog');
      else progress(50, `Archived ${p.done} files`);
    },
  });
  const deleted = await applyRetention(config.backupDir, { keepDaily: config.backupKeepDaily, keepWeekly: config.backupKeepWeekly });
  const megabytes = (result.bytes / 1024 / 1024).toFixed(1);
  return `Backup written to ${result.path} (${megabytes} MB, ${result.members} files); ${deleted.length} older scheduled backups deleted`;
}
