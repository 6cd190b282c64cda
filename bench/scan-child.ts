// Runs one scan in a fresh process and prints its figures as JSON (so peak RSS is the scan's own).
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dataPaths } from '../src/core/config.ts';
import { createLibrary, findLibrary } from '../src/core/libraries/libraries.ts';
import { scanLibrary } from '../src/core/scan/scanner.ts';
import { openStore } from '../src/core/store/store.ts';
import { ensureThumbnail, makePendingThumbnails, pendingThumbnailCount } from '../src/core/covers/thumbnail-backlog.ts';
import { forEachLimited } from '../src/core/scan/task-runner.ts';
import { peakRssMb as vmHwmMb } from './daemon-process.ts';

// An optional fourth argument: a PostgreSQL URL to scan into instead of the data directory's SQLite file.
const [dataDir, corpus, workersArg, database] = process.argv.slice(2) as [string, string, string, string | undefined];
const paths = dataPaths({ dataDir });
const store = await openStore(database ?? paths.catalog);
const library = await findLibrary(store.db, 'bench').catch(() => createLibrary(store.db, { name: 'bench', paths: [corpus], organizationMode: 'BOOK_PER_FILE' }));

// CPU seconds per thread (by thread name: MainThread, WorkerThread, libuv-worker, libvips worker, V8Worker…), read
// from /proc now and then during the scan, since worker threads are gone by the end.
const TICK = 100;
const threads = new Map<string, { name: string; cpu: number }>();
function sampleThreads(): void {
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      threads.set(tid, { name, cpu: (Number(fields[11]) + Number(fields[12])) / TICK });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
}
let lastSample = 0;

const load = loadavg()[0] as number;
const cpu = process.cpuUsage();
const started = performance.now();
sampleThreads();
const before = new Map([...threads].map(([tid, t]) => [tid, t.cpu]));
const summary = await scanLibrary(store, library, {
  coversRoot: paths.covers,
  workers: Number(workersArg),
  onProgress: () => {
    if (performance.now() - lastSample < 500) return;
    lastSample = performance.now();
    sampleThreads();
  },
});
const seconds = (performance.now() - started) / 1000;
// Every thread of the process: the workers, libvips and the libuv pool included.
const used = process.cpuUsage(cpu);
sampleThreads();
// The scan's own peak, before the thumbnails made after it: VmHWM, this process's own. (getrusage's maxRSS also counts
// the parent's size at the fork: a bench process that had just built the corpus made every scan read ~330 MB.)
const peakRssMb = Math.round(vmHwmMb(process.pid));
const thumbnails = await makeThumbnails();
await store.close();
const byName: Record<string, number> = {};
for (const [tid, t] of threads) byName[t.name] = Math.round(((byName[t.name] ?? 0) + t.cpu - (before.get(tid) ?? 0)) * 100) / 100;
process.stdout.write(
  `${JSON.stringify({
    seconds,
    cpuSeconds: (used.user + used.system) / 1e6,
    threadCpuSeconds: byName,
    load: [load, loadavg()[0] as number],
    added: summary.added,
    unchanged: summary.unchanged,
    failed: summary.failed.length,
    peakRssMb,
    ...(thumbnails ? { thumbnails } : {}),
    memory: Object.fromEntries(Object.entries(process.memoryUsage()).map(([k, v]) => [k, Math.round(v / 1048576)])),
  })}\n`,
);

/**
 * What follows a scan that left its thumbnails: the backlog made as bindery serve makes it (one at a time, newest
 * first) while the web UI's first page asks for its 50 thumbnails (by title, six at a time as a browser does), then the
 * rest. Times: until the page has its 50, and until every thumbnail is made; CPU for the whole backlog.
 */
async function makeThumbnails(): Promise<{ pending: number; firstPageSeconds: number; allSeconds: number; cpuSeconds: number; peakRssMb: number } | undefined> {
  const pending = summary.thumbnailsPending;
  if (!pending) return undefined;
  const page = (await store.exec.all(
    "select m.book_id from book_metadata m join book b on b.id = m.book_id where b.library_id = ? order by lower(coalesce(m.title, '')) limit 50",
    [library.id],
  )) as { book_id: number }[];
  const cpuBefore = process.cpuUsage();
  const begun = performance.now();
  const backlog = makePendingThumbnails(store, paths.covers);
  await forEachLimited(page, 6, (row) => ensureThumbnail(paths.covers, row.book_id, 'book'), () => undefined);
  const firstPageSeconds = (performance.now() - begun) / 1000;
  await backlog;
  const allSeconds = (performance.now() - begun) / 1000;
  const spent = process.cpuUsage(cpuBefore);
  if ((await pendingThumbnailCount(store)) !== 0) throw new Error('thumbnails left after the backlog');
  return { pending, firstPageSeconds, allSeconds, cpuSeconds: (spent.user + spent.system) / 1e6, peakRssMb: Math.round(vmHwmMb(process.pid)) };
}
