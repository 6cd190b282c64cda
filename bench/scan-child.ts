// Runs one scan in a fresh process and prints its figures as JSON (so peak RSS is the scan's own).
import { loadavg } from 'node:os';
import { dataPaths } from '../src/core/config.ts';
import { createLibrary, findLibrary } from '../src/core/libraries/libraries.ts';
import { scanLibrary } from '../src/core/scan/scanner.ts';
import { openStore } from '../src/core/store/store.ts';

const [dataDir, corpus, workersArg] = process.argv.slice(2) as [string, string, string];
const paths = dataPaths({ dataDir });
const store = await openStore(paths.catalog);
const library = await findLibrary(store.db, 'bench').catch(() => createLibrary(store.db, { name: 'bench', paths: [corpus], organizationMode: 'BOOK_PER_FILE' }));
const load = loadavg()[0] as number;
const cpu = process.cpuUsage();
const started = performance.now();
const summary = await scanLibrary(store, library, { coversRoot: paths.covers, workers: Number(workersArg) });
const seconds = (performance.now() - started) / 1000;
// Every thread of the process: the workers, libvips and the libuv pool included.
const used = process.cpuUsage(cpu);
await store.close();
process.stdout.write(
  `${JSON.stringify({
    seconds,
    cpuSeconds: (used.user + used.system) / 1e6,
    load: [load, loadavg()[0] as number],
    added: summary.added,
    unchanged: summary.unchanged,
    failed: summary.failed.length,
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    memory: Object.fromEntries(Object.entries(process.memoryUsage()).map(([k, v]) => [k, Math.round(v / 1048576)])),
  })}\n`,
);
