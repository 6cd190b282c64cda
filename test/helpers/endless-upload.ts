// Child process for crash tests: streams an upload into the given folder that never ends (a client still sending),
// so the test can kill it with SIGKILL while the partial file is being written.
// Usage: node endless-upload.ts <dir>
import { Readable } from 'node:stream';
import { receiveUpload } from '../../src/core/bookdrop/upload.ts';

const [dir] = process.argv.slice(2) as [string];
const endless = new Readable({
  read() {
    setTimeout(() => this.push(Buffer.alloc(4096, 1)), 5);
  },
});
await receiveUpload(endless, dir, 1024 * 1024 * 1024, 1024);
