// node bench/kobo.ts [--books 10000] [--runs 20]
// Kobo sync of a large shelf over real HTTP on 127.0.0.1, as a device makes it: a first full sync (every book on the
// shelf, 100 per page), an incremental sync after changes (books added, changed and taken off the shelf), a sync with
// nothing to send, and the per-book calls. For every page: wall time and the process's CPU time (server and the small
// client together, one process), so the figures hold on a busy machine too. The target: every page under 1 s.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/core/config.ts';
import { koboSettingsFor, updateKoboSettings } from '../src/core/kobo/sync-settings.ts';
import { koboShelfId } from '../src/core/kobo/kobo-shelf.ts';
import { openStore } from '../src/core/store/store.ts';
import { createUser } from '../src/core/users/users.ts';
import { buildApp } from '../src/daemon/app.ts';
import { fillCatalog } from './book-catalog.ts';

const { values } = parseArgs({ options: { books: { type: 'string', default: '10000' }, runs: { type: 'string', default: '20' } } });
const shelfSize = Number(values.books);
const runs = Number(values.runs);
const EXTRA = 200;

interface Timing {
  wallMs: number;
  cpuMs: number;
}

const percentile = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] as number;
const fmt = (ms: number): string => `${ms.toFixed(1)} ms`;

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; timing: Timing }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const value = await work();
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { value, timing: { wallMs, cpuMs: (used.user + used.system) / 1000 } };
}

console.log(`machine: ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, node ${process.version}`);
const dir = mkdtempSync(join(tmpdir(), 'bindery-kobo-bench-'));
try {
  const store = await openStore(join(dir, 'bindery.sqlite'));
  const readerId = await createUser(store.db, { username: 'reader', password: 'reader-password', name: 'Reader', permissions: { canSyncKobo: true, canAccessOpds: true } });
  const started = performance.now();
  const catalog = await fillCatalog(store, shelfSize + EXTRA, join(dir, 'library'), readerId);
  store.sqlite.prepare('INSERT INTO user_library_mapping (user_id, library_id) VALUES (?, ?)').run(readerId, catalog.libraryId);
  const settings = await updateKoboSettings(store.db, readerId, { syncEnabled: true, twoWayProgressSync: true });
  const shelfId = (await koboShelfId(store.db, readerId)) as number;
  const { first } = catalog.bookIds;
  store.sqlite.prepare('INSERT INTO book_shelf_mapping (book_id, shelf_id) SELECT id, ? FROM book WHERE id < ?').run(shelfId, first + shelfSize);
  await store.db.insertInto('app_settings').values({ name: 'kobo_settings', val: JSON.stringify({ convertToKepub: true, conversionLimitInMb: 100, convertCbxToEpub: false, conversionLimitInMbForCbx: 100, forceEnableHyphenation: false, conversionImageCompressionPercentage: 85, forwardToKoboStore: false }) }).execute();
  store.sqlite.pragma('optimize');
  console.log(`catalog: ${shelfSize + EXTRA} books, ${shelfSize} on the Kobo shelf, written in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const config = { ...loadConfig({ env: {}, flags: { dataDir: dir } }), logLevel: 'silent' as const };
  const { app } = await buildApp({ config, store });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/api/kobo/${(await koboSettingsFor(store.db, readerId)).token}`;
  const headers = { 'user-agent': 'Kobo Touch 0387/4.38.21908', 'x-kobo-deviceid': 'bench', 'x-kobo-userkey': 'bench', authorization: 'Bearer bench' };

  const call = async (method: string, path: string, extra: Record<string, string> = {}, body?: unknown): Promise<Response> => {
    const res = await fetch(`${base}${path}`, { method, headers: { ...headers, ...extra, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res;
  };

  /** One sync session; each page's timing covers the whole response body. */
  const session = async (token: string | undefined): Promise<{ token: string; pages: Timing[]; items: number[]; totalMs: number }> => {
    const pages: Timing[] = [];
    const items: number[] = [];
    let current = token;
    const start = performance.now();
    for (;;) {
      const { value, timing } = await timed(async () => {
        const res = await call('GET', '/v1/library/sync?Filter=ALL&DownloadUrlFilter=Generic,Android&PrioritizeRecentReads=true', current ? { 'x-kobo-synctoken': current } : {});
        return { res, text: await res.text() };
      });
      pages.push(timing);
      items.push((JSON.parse(value.text) as unknown[]).length);
      current = value.res.headers.get('x-kobo-synctoken') ?? undefined;
      if (value.res.headers.get('x-kobo-sync') !== 'continue') return { token: current ?? '', pages, items, totalMs: performance.now() - start };
    }
  };

  const report = (label: string, result: Awaited<ReturnType<typeof session>>): void => {
    const wall = result.pages.map((p) => p.wallMs);
    const cpu = result.pages.map((p) => p.cpuMs);
    console.log(`\n${label}: ${result.pages.length} pages, ${result.items.reduce((a, b) => a + b, 0)} items, ${(result.totalMs / 1000).toFixed(2)} s in all`);
    console.log(`  first page (takes the snapshot): wall ${fmt(wall[0] ?? 0)}, cpu ${fmt(cpu[0] ?? 0)}`);
    console.log(`  every page: wall median ${fmt(percentile(wall, 0.5))}, p95 ${fmt(percentile(wall, 0.95))}, max ${fmt(Math.max(...wall))}; cpu median ${fmt(percentile(cpu, 0.5))}, max ${fmt(Math.max(...cpu))}`);
    console.log(`  last page (reading states, tags): wall ${fmt(wall.at(-1) ?? 0)}, ${result.items.at(-1)} items`);
    console.log(`  every page under 1 s: ${wall.every((w) => w < 1000) ? 'yes' : 'NO'}`);
  };

  await call('GET', '/v1/initialization');
  const full = await session(undefined);
  report(`full sync of ${shelfSize} books`, full);

  // Changes between two syncs: books added to the shelf, metadata edited, books taken off.
  const now = new Date().toISOString();
  store.sqlite.prepare('INSERT INTO book_shelf_mapping (book_id, shelf_id) SELECT id, ? FROM book WHERE id >= ?').run(shelfId, first + shelfSize);
  store.sqlite.prepare('UPDATE book SET metadata_updated_at = ? WHERE id BETWEEN ? AND ?').run(now, first + 1000, first + 1499);
  store.sqlite.prepare('DELETE FROM book_shelf_mapping WHERE shelf_id = ? AND book_id BETWEEN ? AND ?').run(shelfId, first + 5000, first + 5299);
  const incremental = await session(full.token);
  report(`incremental sync (${EXTRA} added, 500 changed, 300 removed)`, incremental);

  const idle: Timing[] = [];
  let token = incremental.token;
  for (let i = 0; i < runs; i++) {
    const result = await session(token);
    token = result.token;
    idle.push(result.pages[0] as Timing);
  }
  console.log(`\nsync with nothing new (${runs} runs): wall median ${fmt(percentile(idle.map((t) => t.wallMs), 0.5))}, p95 ${fmt(percentile(idle.map((t) => t.wallMs), 0.95))}; cpu median ${fmt(percentile(idle.map((t) => t.cpuMs), 0.5))}`);

  const perCall = async (label: string, make: (i: number) => Promise<Response>): Promise<void> => {
    const times: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < runs; i++) {
      const { timing } = await timed(async () => (await make(i)).arrayBuffer());
      times.push(timing.wallMs);
      cpu.push(timing.cpuMs);
    }
    console.log(`${label}: wall median ${fmt(percentile(times, 0.5))}, p95 ${fmt(percentile(times, 0.95))}; cpu median ${fmt(percentile(cpu, 0.5))}`);
  };
  console.log('');
  await perCall('initialization', () => call('GET', '/v1/initialization'));
  await perCall('metadata of one book', (i) => call('GET', `/v1/library/${first + i * 37}/metadata`));
  await perCall('reading state GET', (i) => call('GET', `/v1/library/${first + i * 10}/state`));
  await perCall('reading state PUT', (i) =>
    call('PUT', `/v1/library/${first + i * 41}/state`, {}, {
      ReadingStates: [{ EntitlementId: String(first + i * 41), LastModified: now, CurrentBookmark: { LastModified: now, ProgressPercent: 40 + i, Location: { Value: 'kobo.3.1', Type: 'KoboSpan', Source: 'OEBPS/ch.xhtml' } }, StatusInfo: { LastModified: now, Status: 'Reading' } }],
    }),
  );
  const rows = Number(store.sqlite.prepare('SELECT count(*) FROM kobo_library_snapshot_book').pluck().get());
  console.log(`\nsnapshot rows kept after the sessions: ${rows} (one snapshot per device reference)`);
  console.log(`settings row: sync ${settings.sync_enabled === 1 ? 'on' : 'off'}, two-way ${settings.two_way_progress_sync === 1 ? 'on' : 'off'}`);
  await app.close();
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
