// Child process for tests of work files in shared folders: a writer as a replica on another machine would be. Run it
// in a PID namespace of its own with a large pid, so that its process id means nothing on this machine. It registers
// with the catalog, makes a cover staging folder, prints its path (one JSON line), then streams an upload into the
// bookdrop folder that never ends, until it is killed.
// Usage: node foreign-writer.ts <catalog path> <data dir>
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { receiveUpload } from '../../src/core/bookdrop/upload.ts';
import { createStagingDir } from '../../src/core/covers/cover-store.ts';
import { openStore } from '../../src/core/store/store.ts';
import { workMark } from '../../src/core/work-files.ts';

const [catalog, dataDir] = process.argv.slice(2) as [string, string];
const store = await openStore(catalog);
const staging = await createStagingDir(join(dataDir, 'covers'), store.liveness);
process.stdout.write(`${JSON.stringify({ pid: process.pid, staging })}\n`);
const endless = new Readable({
  read() {
    setTimeout(() => this.push(Buffer.alloc(4096, 1)), 5);
  },
});
await receiveUpload(endless, join(dataDir, 'bookdrop'), 1024 * 1024 * 1024, 1024, await workMark(store.liveness));
