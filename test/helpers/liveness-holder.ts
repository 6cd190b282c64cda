// Child process for liveness tests: opens the catalog, registers as a live owner, prints the owner record it would
// write (one JSON line) and waits, doing nothing, until it is killed.
// Usage: node liveness-holder.ts <catalog path>
import { openStore } from '../../src/core/store/store.ts';

const store = await openStore(process.argv[2] as string);
const { owner } = await store.liveness.register();
process.stdout.write(`${JSON.stringify(owner)}\n`);
setInterval(() => undefined, 60_000);
