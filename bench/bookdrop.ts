// npm run bench:bookdrop -- [--files 1000] [--workers 0] [--keep DIR]
// Drops a corpus of mixed books (EPUB with covers, CBZ, PDF; bench/corpus.ts) into a fresh bookdrop folder, then
// times the two halves of a bookdrop import in this process: taking the files in (metadata, cover; what the
// watcher or a rescan does) and finalizing all of them into a library (read, copy, flush, verify, record, remove
// the original). Prints wall time, CPU time (all threads, from process.cpuUsage) per file, and peak RSS.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { finalizeImport } from '../src/core/bookdrop/finalize.ts';
import { bookdropCandidates, syncBookdrop, type BookdropEnv } from '../src/core/bookdrop/intake.ts';
import { createLibrary } from '../src/core/libraries/libraries.ts';
import { openStore } from '../src/core/store/store.ts';
import { buildCorpus } from './corpus.ts';
import { peakRssMb } from './daemon-process.ts';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '1000' },
    workers: { type: 'string', default: '0' },
    keep: { type: 'string' },
  },
});
const files = Number(values.files);
const workers = Number(values.workers);

const base = values.keep ?? mkdtempSync(join(tmpdir(), 'bindery-bench-bookdrop-'));
const dataDir = join(base, 'data');
const root = join(base, 'library');
const bookdropDir = join(dataDir, 'bookdrop');
rmSync(base, { recursive: true, force: true });
mkdirSync(root, { recursive: true });

process.stderr.write(`building ${files} files in ${bookdropDir}…\n`);
await buildCorpus(bookdropDir, files);
const dropped = (await bookdropCandidates(bookdropDir)).length;

const store = await openStore(join(dataDir, 'bindery.sqlite'));
const library = await createLibrary(store.db, { name: 'Bench', paths: [root] });
const env: BookdropEnv = { store, bookdropDir, dataDir };

interface Phase {
  name: string;
  wallMs: number;
  cpuMs: number;
}

async function timed(name: string, work: () => Promise<unknown>): Promise<Phase> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await work();
  const used = process.cpuUsage(cpu);
  return { name, wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}

const phases: Phase[] = [];
let added = 0;
phases.push(await timed('intake (metadata + cover)', async () => {
  added = (await syncBookdrop(env, { settleMs: 0 })).added.length;
}));
let imported = 0;
let failed = 0;
phases.push(await timed('finalize (read, copy, flush, verify, record, remove)', async () => {
  const outcome = await finalizeImport(env, { selectAll: true, defaultLibraryId: library.id, defaultPathId: library.paths[0]!.id }, { workers });
  imported = outcome.successfullyImported;
  failed = outcome.failed;
  for (const r of outcome.results.filter((x) => !x.success).slice(0, 5)) process.stderr.write(`failed: ${r.fileName}: ${r.message}\n`);
}));

const books = Number((await store.db.selectFrom('book').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
const left = (await bookdropCandidates(bookdropDir)).length;
const rows = Number((await store.db.selectFrom('bookdrop_file').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
await store.close();

const pad = (s: string, n: number): string => s.padEnd(n);
console.log(`bookdrop import of ${dropped} files (parse workers: ${workers || 'inline'}), Node ${process.version}`);
console.log(`${pad('phase', 54)}${pad('wall s', 10)}${pad('CPU s', 10)}${pad('CPU ms/file', 14)}files/s`);
for (const p of [...phases, { name: 'total', wallMs: phases.reduce((a, p) => a + p.wallMs, 0), cpuMs: phases.reduce((a, p) => a + p.cpuMs, 0) }]) {
  console.log(`${pad(p.name, 54)}${pad((p.wallMs / 1000).toFixed(1), 10)}${pad((p.cpuMs / 1000).toFixed(1), 10)}${pad((p.cpuMs / dropped).toFixed(1), 14)}${(dropped / (p.wallMs / 1000)).toFixed(0)}`);
}
console.log(`taken in ${added}, imported ${imported}, failed ${failed}; books in catalog ${books}; left in bookdrop: ${left} files, ${rows} rows; peak RSS ${peakRssMb(process.pid).toFixed(0)} MB`);
const foldersLeft = readdirSync(bookdropDir).length;
if (foldersLeft > 0) console.log(`${foldersLeft} folders left in the bookdrop`);
if (!values.keep) rmSync(base, { recursive: true, force: true });
if (imported !== dropped || books !== dropped || left !== 0 || rows !== 0) process.exitCode = 1;
