// Child process for crash tests: imports every file waiting in the bookdrop into the first library and kills itself
// with SIGKILL (no clean-up runs, as `kill -9` would) at the named point:
// - `before-commit`: the copy has its final name in the library, the catalog transaction is about to commit;
// - `after-copy`: the partial copy is written, not yet flushed or verified.
// Usage: node kill-during-import.ts <dataDir> <bookdropDir> <point>
import { join } from 'node:path';
import { finalizeImport } from '../../src/core/bookdrop/finalize.ts';
import { nodeImportFs } from '../../src/core/bookdrop/safe-copy.ts';
import { listLibraries } from '../../src/core/libraries/libraries.ts';
import { openStore } from '../../src/core/store/store.ts';

const [dataDir, bookdropDir, point] = process.argv.slice(2) as [string, string, 'before-commit' | 'after-copy'];
const kill = (): never => {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
};
const store = await openStore(join(dataDir, 'bindery.sqlite'));
const [library] = await listLibraries(store.db);
if (!library) throw new Error('no library');
await finalizeImport(
  { store, dataDir, bookdropDir },
  { selectAll: true, defaultLibraryId: library.id, defaultPathId: library.paths[0]?.id ?? null },
  {
    workers: 0,
    concurrency: 1,
    ...(point === 'before-commit' ? { beforeCommit: kill } : { fs: { ...nodeImportFs, flush: async () => kill() } }),
  },
);
process.stdout.write('the import finished without being killed\n');
