// Child process for crash tests: runs `bindery move`'s core work on a data directory and, just before the named step
// touches a path ending in `pathSuffix`, kills itself with SIGKILL (no clean-up runs, exactly as `kill -9` would) or,
// with `pause`, prints "paused" and waits there until the test kills it.
// Usage: node kill-during-move.ts <dataDir> <pattern> <step> <pathSuffix> [pause]
import { join } from 'node:path';
import { applyMoves } from '../../src/core/moves/apply.ts';
import { inPlaceRequests, planMoves } from '../../src/core/moves/plan.ts';
import { listLibraries } from '../../src/core/libraries/libraries.ts';
import { openStore } from '../../src/core/store/store.ts';

const [dataDir, pattern, stopStep, pathSuffix, action] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const store = await openStore(join(dataDir, 'bindery.sqlite'));
const libraries = await listLibraries(store.db);
const plan = await planMoves(store, await inPlaceRequests(store.db, libraries.map((l) => l.id)), { pattern });
await applyMoves(store, plan, {
  step: async (step, detail) => {
    if (step !== stopStep || !(detail.path ?? '').endsWith(pathSuffix)) return;
    if (action !== 'pause') process.kill(process.pid, 'SIGKILL');
    process.stdout.write('paused\n');
    setInterval(() => undefined, 60_000);
    await new Promise(() => undefined);
  },
});
process.stdout.write('the move finished without reaching the step\n');
