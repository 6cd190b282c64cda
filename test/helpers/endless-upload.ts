// Child process for crash tests: streams an upload into the given folder that never ends (a client still sending),
// under this process's mark (registered with the catalog), so the test can kill it with SIGKILL while the partial
// file is being written.
// Usage: node endless-upload.ts <dir> <catalog path>
import { Readable } from 'node:stream';
import { receiveUpload } from '../../src/core/bookdrop/upload.ts';
import { openStore } from '../../src/core/store/store.ts';
import { workMark } from '../../src/core/work-files.ts';

const [dir, catalog] = process.argv.slice(2) as [string, string];
const store = await openStore(catalog);
const endless = new Readable({
  read() {
    setTimeout(() => this.push(Buffer.alloc(4096, 1)), 5);
  },
});
await receiveUpload(endless, dir, 1024 * 1024 * 1024, 1024, await workMark(store.liveness));
