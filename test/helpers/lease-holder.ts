// Child process for lease tests: opens the catalog, takes the named lease, prints "held" (or "refused") and then
// waits, doing nothing, until it is killed.
// Usage: node lease-holder.ts <catalog path> <lease>
import { currentInstance } from '../../src/core/cluster/instance.ts';
import { openStore } from '../../src/core/store/store.ts';

const [catalog, lease] = process.argv.slice(2) as [string, string];
const store = await openStore(catalog);
const leases = store.leases(currentInstance());
const held = await leases.hold(lease);
process.stdout.write(held ? 'held\n' : 'refused\n');
setInterval(() => undefined, 60_000);
