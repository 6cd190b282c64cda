// A process that asks for the catalog generation, goes quiet (nothing to do but wait for a line on stdin), and asks
// again when the line arrives: writes "changed" or "unchanged". The parent commits from another process meanwhile.
// It says it is quiet by creating a file (a synchronous write: a write to a pipe would wake its event loop).
import { writeFileSync } from 'node:fs';
import { openStore } from '../../src/core/store/store.ts';

const [catalog, quietFile] = process.argv.slice(2) as [string, string];
const store = await openStore(catalog);
// Once opening's own work is over, asked from a setImmediate callback, as the daemon's background work often is: the
// turn that ends there is the next one, which an idle loop only reaches when something wakes it.
setTimeout(() => {
  setImmediate(() => {
    const before = store.generation();
    process.stdin.once('data', () => {
      const after = store.generation();
      process.stdout.write(JSON.stringify(before) === JSON.stringify(after) ? 'unchanged\n' : 'changed\n');
      process.stdin.pause();
      void store.close();
    });
    writeFileSync(quietFile, '');
  });
}, 100);
