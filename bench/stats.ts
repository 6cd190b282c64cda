// npm run bench:stats -- [--sessions 100000] [--books 20000] [--runs 30] [--as reader|admin] [--only NAME]
// Reading statistics on a synthetic catalog (bench/book-catalog.ts) where one user has --sessions reading sessions
// over ten years (in start order, as readers post them; 15 % audiobook sessions) on 3,000 books, with progress rows
// for those books, and another user 20,000 sessions of their own. Every /api/v1/user-stats route is requested --runs
// times in process (fastify inject: routing, token, permission, SQL, shaping, JSON) after one warm-up request, as a
// library member with a content restriction (the visibility filter at its heaviest) or as an admin. Per route: p50 /
// p99 wall time and the median CPU time (steadier than wall time on a shared machine). Zone: Europe/Berlin, so the
// local-calendar arithmetic has clock changes to deal with. The least CPU time of the runs is printed too: on a
// machine shared with other work it is the closest to what the request costs on an idle one.
process.env.TZ = 'Europe/Berlin';

import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { signToken, ACCESS_TOKEN_SECONDS } from '../src/core/auth/tokens.ts';
import { loadConfig } from '../src/core/config.ts';
import { openStore } from '../src/core/store/store.ts';
import { createUser } from '../src/core/users/users.ts';
import { buildApp } from '../src/daemon/app.ts';
import { fillCatalog } from './book-catalog.ts';
import { percentile } from './inject-timing.ts';

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '100000' },
    books: { type: 'string', default: '20000' },
    runs: { type: 'string', default: '30' },
    as: { type: 'string', default: 'reader' },
    only: { type: 'string', default: '' },
  },
});
const sessionCount = Number(values.sessions);
const runs = Number(values.runs);
const READ_BOOKS = 3000;

console.log(`machine: ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, node ${process.version}, load ${loadavg()[0]?.toFixed(1)}`);
const dir = mkdtempSync(join(tmpdir(), 'bindery-stats-bench-'));
try {
  const store = await openStore(join(dir, 'bindery.sqlite'));
  const adminId = await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'Admin', permissions: { admin: true } });
  const catalog = await fillCatalog(store, Number(values.books), join(dir, 'library'));
  const readerId = await createUser(store.db, { username: 'reader', password: 'reader-password', name: 'Reader', permissions: { canAccessUserStats: true }, libraryIds: [catalog.libraryId] });
  const otherId = await createUser(store.db, { username: 'other', password: 'other-password', name: 'Other', permissions: { canAccessUserStats: true }, libraryIds: [catalog.libraryId] });
  store.sqlite.prepare("INSERT INTO user_content_restriction (user_id, restriction_type, mode, value) VALUES (?, 'CATEGORY', 'EXCLUDE', 'Category 7')").run(readerId);
  const userId = values.as === 'admin' ? adminId : readerId;

  const started = performance.now();
  const fill = store.sqlite.transaction(() => {
    const insert = store.sqlite.prepare(
      `INSERT INTO reading_sessions (user_id, book_id, book_type, start_time, end_time, duration_seconds, duration_formatted, start_progress, end_progress, progress_delta, start_location, end_location, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const add = (user: number, count: number, books: number, seed: number): void => {
      const from = Date.UTC(2016, 0, 1);
      const span = Date.now() - from;
      for (let i = 0; i < count; i++) {
        const x = (i * 2654435761 + seed) >>> 0;
        const book = catalog.bookIds.first + (x % books);
        const start = from + Math.floor((i / count) * span) + (x % 3_600_000);
        const seconds = 60 + (x % 5400);
        const end = new Date(start + seconds * 1000).toISOString();
        const progressFrom = x % 90;
        const progressTo = progressFrom + (x % 10);
        insert.run(user, book, x % 7 === 0 ? 'AUDIOBOOK' : 'EPUB', new Date(start).toISOString(), end, seconds, `${Math.floor(seconds / 60)}m`, progressFrom, progressTo, progressTo - progressFrom, 'epubcfi(/6/14!/4/2/1:0)', 'epubcfi(/6/16!/4/2/1:0)', end);
      }
    };
    add(userId, sessionCount, READ_BOOKS, 17);
    add(otherId, 20_000, READ_BOOKS, 99);
    const progress = store.sqlite.prepare(
      'INSERT INTO user_book_progress (user_id, book_id, read_status, date_finished, read_status_modified_time, last_read_time, personal_rating, epub_progress_percent, koreader_progress_percent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const statuses = ['READ', 'READ', 'READ', 'READING', 'PAUSED', 'ABANDONED', 'UNREAD'];
    for (let i = 0; i < READ_BOOKS; i++) {
      const status = statuses[i % statuses.length] as string;
      const when = new Date(Date.UTC(2016, 0, 1) + ((i * 7919) % 3650) * 86_400_000).toISOString();
      progress.run(userId, catalog.bookIds.first + i, status, status === 'READ' ? when : null, when, when, i % 3 === 0 ? (i % 10) + 1 : null, status === 'READ' ? 100 : i % 100, i % 5 === 0 ? 0.42 : null);
    }
  });
  fill();
  store.sqlite.pragma('optimize');
  console.log(`catalog: ${values.books} books, ${sessionCount} sessions for the ${values.as} (+20,000 for another user), written in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const config = { ...loadConfig({ env: {}, flags: { dataDir: dir } }), logLevel: 'silent' as const };
  const built = await buildApp({ config, store });
  await built.app.ready();
  const username = values.as === 'admin' ? 'admin' : 'reader';
  const token = await signToken(built.ctx.jwtSecret, { userId, username, isDefaultPassword: false, sessionVersion: 0 }, 'access', ACCESS_TOKEN_SECONDS);
  const headers = { authorization: `Bearer ${token}` };
  const year = new Date().getFullYear() - 1;

  const routes = [
    `/reading/heatmap?year=${year}`,
    `/reading/heatmap/monthly?year=${year}&month=6`,
    `/reading/timeline?year=${year}&week=24`,
    `/reading/speed?year=${year}`,
    '/reading/peak-hours',
    `/reading/peak-hours?year=${year}`,
    '/reading/favorite-days',
    `/reading/favorite-days?year=${year}&month=6`,
    '/reading/genres',
    `/reading/completion-timeline?year=${year}`,
    '/reading/book-completion-heatmap',
    '/reading/page-turner-scores',
    `/reading/completion-race?year=${year}`,
    '/reading/book-distributions',
    '/reading/dates',
    `/reading/session-scatter?year=${year}`,
    '/reading/streak',
    `/reading/book-timeline?year=${year}`,
    `/listening/heatmap/monthly?year=${year}&month=6`,
    '/listening/weekly-trend',
    '/listening/completion',
    '/listening/monthly-pace',
    '/listening/finish-funnel',
    '/listening/peak-hours',
    '/listening/favorite-days',
    '/listening/genres',
    '/listening/authors',
    '/listening/session-scatter',
    '/listening/longest-books',
  ];

  console.log('| route | wall p50 / p99 ms | CPU ms median / least | KiB |');
  console.log('|---|---|---|---|');
  let slowest = 0;
  for (const route of routes) {
    if (values.only && !route.includes(values.only)) continue;
    const url = `/api/v1/user-stats${route}`;
    const warm = await built.app.inject({ method: 'GET', url, headers });
    if (warm.statusCode !== 200) throw new Error(`${url}: ${warm.statusCode} ${warm.body.slice(0, 200)}`);
    const wall: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < runs; i++) {
      const startCpu = process.cpuUsage();
      const start = performance.now();
      await built.app.inject({ method: 'GET', url, headers });
      wall.push(performance.now() - start);
      const used = process.cpuUsage(startCpu);
      cpu.push((used.user + used.system) / 1000);
    }
    const median = percentile(cpu, 0.5);
    slowest = Math.max(slowest, median);
    console.log(`| ${route} | ${percentile(wall, 0.5).toFixed(1)} / ${percentile(wall, 0.99).toFixed(1)} | ${median.toFixed(1)} / ${Math.min(...cpu).toFixed(1)} | ${(warm.rawPayload.length / 1024).toFixed(1)} |`);
  }
  console.log(`slowest route: ${slowest.toFixed(1)} CPU ms per request (median)`);
  await built.app.close();
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
