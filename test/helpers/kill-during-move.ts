// Child process for crash tests: runs `bindery move`'s core work on a data directory and kills itself with SIGKILL
// (no clean-up runs, exactly as `kill -9` would) just before the named step touches a path ending in `pathSuffix`.
// Usage: node kill-during-move.ts <dataDir> <pattern> <step> <pathSuffix>
import { join } from 'node:path';
import { applyMoves } from '../../src/core/moves/apply.ts';
import { inPlaceRequests, planMoves } from '../../src/core/moves/plan.ts';
import { listLibraries } from '../../src/core/libraries/libraries.ts';
import { openStore } from '../../src/core/store/store.ts';

const [dataDir, pattern, killStep, pathSuffix] = process.argv.slice(2) as [string, string, string, string];
const store = await openStore(join(dataDir, 'bindery.sqlite'));
const libraries = await listLibraries(store.db);
const plan = await planMoves(store, await inPlaceRequests(store.db, libraries.map((l) => l.id)), { pattern });
await applyMoves(store, plan, {
  step: (step, detail) => {
    if (step === killStep && (detail.path ?? '').endsWith(pathSuffix)) process.kill(process.pid, 'SIGKILL');
  },
});
process.stdout.write('the move finished without reaching the step\n');
