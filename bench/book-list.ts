// node bench/book-list.ts [--books 100000] [--rounds 2]
// Writes a synthetic catalog, starts a fresh server process on it, fetches GET /api/v1/books with curl and samples the
// server's RSS (from /proc) while the list streams. Then the full list (stripForListView=false) in each encoding the
// server negotiates, rounds interleaved: bytes sent, time, the server's CPU time (/proc utime + stime) and peak RSS.
// Linux only.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ACCESS_TOKEN_SECONDS, signingSecret, signToken } from '../src/core/auth/tokens.ts';
import { loadConfig } from '../src/core/config.ts';
import { openStore } from '../src/core/store/store.ts';
import { createUser } from '../src/core/users/users.ts';
import { buildApp } from '../src/daemon/app.ts';
import { fillCatalog } from './book-catalog.ts';

const { values } = parseArgs({ options: { books: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '2' }, serve: { type: 'string' } } });

if (values.serve) {
  // Child: the server, nothing else in the process.
  const dir = values.serve;
  const config = { ...loadConfig({ env: {}, flags: { dataDir: dir } }), logLevel: 'silent' as const };
  const store = await openStore(join(dir, 'bindery.sqlite'));
  const { app } = await buildApp({ config, store });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
} else {
  const books = Number(values.books);
  const dir = mkdtempSync(join(tmpdir(), 'bindery-list-bench-'));
  const store = await openStore(join(dir, 'bindery.sqlite'));
  const adminId = await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'Admin', permissions: { admin: true } });
  const started = performance.now();
  const catalog = await fillCatalog(store, books, join(dir, 'library'), adminId);
  console.log(`catalog: ${books} books written in ${((performance.now() - started) / 1000).toFixed(1)} s (multi-row inserts in one transaction)`);
  const readerId = await createUser(store.db, { username: 'reader', password: 'reader-password', name: 'Reader', libraryIds: [catalog.libraryId] });
  const secret = await signingSecret(store.db);
  const token = (userId: number, username: string): Promise<string> => signToken(secret, { userId, username, isDefaultPassword: false, sessionVersion: 0 }, 'access', ACCESS_TOKEN_SECONDS);
  const adminToken = await token(adminId, 'admin');
  const readerToken = await token(readerId, 'reader');
  await store.close();

  const server = spawn(process.execPath, [...(process.env.SERVER_NODE_OPTIONS ? process.env.SERVER_NODE_OPTIONS.split(' ') : []), import.meta.filename, '--serve', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => server.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  const rssMb = (): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

  // utime + stime of the server process, in clock ticks (100 per second on Linux).
  const cpuMs = (): number => {
    const fields = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  };

  const measure = async (label: string, path: string, bearer: string, acceptEncoding?: string): Promise<void> => {
    const before = rssMb();
    const cpuBefore = cpuMs();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb())), 10);
    const out = await new Promise<string>((resolve, reject) => {
      const args = ['-s', '-o', '/dev/null', '-H', `Authorization: Bearer ${bearer}`, ...(acceptEncoding ? ['-H', `Accept-Encoding: ${acceptEncoding}`] : []), '-w', '%{http_code} %{size_download} %{time_starttransfer} %{time_total}', `http://127.0.0.1:${port}${path}`];
      execFile('curl', args, (err, stdout) => (err ? reject(err) : resolve(stdout)));
    });
    clearInterval(sampler);
    const cpu = cpuMs() - cpuBefore;
    const [status, size, firstByte, total] = out.split(' ');
    console.log(
      `${label.padEnd(38)} ${status} ${(Number(size) / 1e6).toFixed(1).padStart(6)} MB  first byte ${(Number(firstByte) * 1000).toFixed(0).padStart(4)} ms  ` +
        `total ${Number(total).toFixed(2)} s  server CPU ${(cpu / 1000).toFixed(2)} s  server RSS ${before.toFixed(0)} → peak ${peak.toFixed(0)} MB`,
    );
  };

  await measure('admin, list view (cold)', '/api/v1/books', adminToken);
  await measure('admin, list view', '/api/v1/books', adminToken);
  await measure('admin, stripForListView=false', '/api/v1/books?stripForListView=false', adminToken);
  await measure('admin, full + descriptions', '/api/v1/books?stripForListView=false&withDescription=true', adminToken);
  await measure('reader (library member), list view', '/api/v1/books', readerToken);
  await measure('page of 50 by title', '/api/v1/books/page?size=50&sort=metadata.title,asc', adminToken);
  console.log(`full list by encoding (load ${loadavg().map((l) => l.toFixed(1)).join(' ')}):`);
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const encoding of ['identity', 'gzip', 'br', 'zstd']) await measure(`full list, ${encoding}, round ${round}`, '/api/v1/books?stripForListView=false', adminToken, encoding);
  }
  console.log(`load average after: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
}
