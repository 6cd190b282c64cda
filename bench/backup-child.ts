// Runs one backup, verify, restore or export in a fresh process and prints its figures as JSON (so peak RSS is the
// operation's own): wall time, process CPU time (every thread, gzip's included), peak RSS.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createBackup } from '../src/core/backup/create-backup.ts';
import { readBackup } from '../src/core/backup/read-backup.ts';
import { restoreBackup } from '../src/core/backup/restore-backup.ts';
import { createExport } from '../src/core/export/write-export.ts';
import { peakRssMb } from './daemon-process.ts';

const [op, dataDir, archive] = process.argv.slice(2) as [string, string, string];
const catalogPath = join(dataDir, 'bindery.sqlite');
const load = loadavg()[0] as number;
const cpu = process.cpuUsage();
const started = performance.now();
let extra: Record<string, unknown>;
if (op === 'backup') {
  const r = await createBackup({ dataDir, catalogPath, target: archive });
  extra = { archiveBytes: r.bytes, members: r.members };
} else if (op === 'verify') {
  const r = await readBackup(archive);
  extra = { members: r.members };
} else if (op === 'restore') {
  const r = await restoreBackup({ dataDir, catalogPath, archive });
  extra = { covers: r.files.covers };
} else if (op === 'export') {
  const r = await createExport({ catalogPath, users: 'all', target: archive, workDir: join(dataDir, 'tmp') });
  extra = { archiveBytes: r.bytes, books: r.counts.books };
} else throw new Error(`unknown operation ${op}`);
const used = process.cpuUsage(cpu);
process.stdout.write(
  `${JSON.stringify({ op, wallMs: Math.round(performance.now() - started), cpuMs: Math.round((used.user + used.system) / 1000), maxRssMb: Math.round(peakRssMb(process.pid)), load, ...extra })}\n`,
);
