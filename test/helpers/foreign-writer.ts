// Child process for tests of work files in shared folders: a writer as a replica on another machine would be. Run it
// in a PID namespace of its own with a large pid, so that its process id means nothing on this machine. It registers
// with the catalog, makes a cover staging folder and a backup work file, prints their paths (one JSON line), then
// streams an upload into the bookdrop folder that never ends, until it is killed.
// Usage: node foreign-writer.ts <catalog path> <data dir>
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { partialPath } from '../../src/core/backup/archive-file.ts';
import { receiveUpload } from '../../src/core/bookdrop/upload.ts';
import { createStagingDir } from '../../src/core/covers/cover-store.ts';
import { openStore } from '../../src/core/store/store.ts';
import { workMark } from '../../src/core/work-files.ts';

const [catalog, dataDir] = process.argv.slice(2) as [string, string];
const store = await openStore(catalog);
const staging = await createStagingDir(join(dataDir, 'covers'), store.liveness);
mkdirSync(join(dataDir, 'tmp'), { recursive: true });
const backupWork = partialPath(join(dataDir, 'tmp'), 'catalog-backup', await workMark(store.liveness));
writeFileSync(backupWork, 'a catalog copy on its way');
process.stdout.write(`${JSON.stringify({ pid: process.pid, staging, backupWork })}\n`);
const endless = new Readable({
  read() {
    setTimeout(() => this.push(Buffer.alloc(4096, 1)), 5);
  },
});
await receiveUpload(endless, join(dataDir, 'bookdrop'), 1024 * 1024 * 1024, 1024, await workMark(store.liveness));
