// `bindery serve` as a real process, from the sources and from the bundle scripts/build.ts makes: it answers, refuses
// a port in use with one line, drains requests in flight on SIGTERM and exits 0, honours --base-path, and keeps
// credentials out of its logs.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { build, BuildUnavailable } from '../../scripts/build.ts';
import { fromBundle, fromSource, ROOT, runCli, startDaemon, type DaemonProcess, type Launcher } from '../../bench/daemon-process.ts';
import { ACCESS_TOKEN_SECONDS, signingSecret, signToken } from '../../src/core/auth/tokens.ts';
import { openStore } from '../../src/core/store/store.ts';
import { createUser } from '../../src/core/users/users.ts';
import { onPostgres } from '../helpers/engine.ts';

const BUNDLE = join(ROOT, 'node_modules', '.cache', `bindery-test-serve-${process.pid}`);
let bundleBuilt = false;

beforeAll(async () => {
  try {
    await build(BUNDLE, { quiet: true });
    bundleBuilt = true;
  } catch (error) {
    if (!(error instanceof BuildUnavailable)) throw error;
  }
}, 120_000);
afterAll(() => rmSync(BUNDLE, { recursive: true, force: true }));

const launchers: { name: string; launcher: () => Launcher; available: () => boolean }[] = [
  { name: 'from the sources', launcher: () => fromSource, available: () => true },
  { name: 'from the bundle', launcher: () => fromBundle(BUNDLE), available: () => bundleBuilt },
];

let dir: string;
let daemons: DaemonProcess[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-serve-'));
  daemons = [];
});
afterEach(async () => {
  await Promise.all(daemons.map((d) => d.stop('SIGKILL')));
  rmSync(dir, { recursive: true, force: true });
});

async function start(launcher: Launcher, options: { args?: string[]; basePath?: string; dataDir?: string } = {}): Promise<DaemonProcess> {
  const daemon = await startDaemon(launcher, { dataDir: options.dataDir ?? join(dir, 'data'), ...options });
  daemons.push(daemon);
  return daemon;
}

function logLines(daemon: DaemonProcess): Record<string, unknown>[] {
  return daemon
    .stdout()
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe.each(launchers)('bindery serve $name', ({ launcher, available }) => {
  it('answers the healthcheck; a second serve on the same port exits non-zero with one clear line', async ({ skip }) => {
    if (!available()) skip('rolldown is not installed');
    const d = await start(launcher());
    const health = await fetch(`${d.url}/api/v1/healthcheck`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 200, data: { status: 'UP' } });

    const second = await runCli(launcher(), ['--data-dir', join(dir, 'other'), 'serve', '--host', '127.0.0.1', '--port', String(d.port)]);
    expect(second.code).not.toBe(0);
    const lines = second.stderr.trim().split('\n');
    expect(lines).toEqual([`bindery: port ${d.port} is already in use on 127.0.0.1`]);
    expect(second.stdout).not.toMatch(/error|at /i);
    // The first one is unaffected.
    expect((await fetch(`${d.url}/api/v1/healthcheck`)).status).toBe(200);
  });

  it('on SIGTERM lets a download in flight finish, refuses new connections, exits 0 and leaves a catalog that opens', async ({ skip }) => {
    if (!available()) skip('rolldown is not installed');
    const web = join(dir, 'web');
    mkdirSync(web);
    writeFileSync(join(web, 'index.html'), '<!doctype html><title>x</title>');
    const size = 48 * 1024 * 1024;
    writeFileSync(join(web, 'big.bin'), Buffer.alloc(size, 7));
    const d = await start(launcher(), { args: ['--web-root', web] });

    // A download the client reads slowly: held open by TCP back-pressure until the client resumes.
    const res = await new Promise<IncomingMessage>((ok, fail) => get(`${d.url}/big.bin`, ok).on('error', fail));
    expect(res.statusCode).toBe(200);
    res.pause();
    await new Promise((r) => setTimeout(r, 200));

    d.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    expect(d.child.exitCode).toBeNull();
    await expect(fetch(`${d.url}/api/v1/healthcheck`, { signal: AbortSignal.timeout(5000) })).rejects.toThrow();

    let received = 0;
    res.on('data', (chunk: Buffer) => (received += chunk.length));
    res.resume();
    await once(res, 'end');
    expect(received).toBe(size);

    expect(await d.exited).toEqual({ code: 0, signal: null });
    const messages = logLines(d).map((l) => l.msg);
    expect(messages).toEqual(expect.arrayContaining(['shutting down: finishing requests in flight', 'stopped']));

    const store = await openStore(join(dir, 'data', 'bindery.sqlite'));
    // The file-level check is SQLite's own; on PostgreSQL the server keeps its files whole.
    if (!onPostgres) expect(store.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(Number((await store.db.selectFrom('users').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)).toBeGreaterThanOrEqual(0);
    await store.close();
  });

  it('reads the whole catalog aside: the app API count of a reader\'s books, from the read-aside thread', async ({ skip }) => {
    if (!available()) skip('rolldown is not installed');
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir, { recursive: true });
    const store = await openStore(join(dataDir, 'bindery.sqlite'));
    const userId = await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'Admin', permissions: { admin: true } });
    const token = await signToken(await signingSecret(store.db), { userId, username: 'admin', isDefaultPassword: false, sessionVersion: 0 }, 'access', ACCESS_TOKEN_SECONDS);
    await store.close();
    const d = await start(launcher(), { dataDir });
    const books = await fetch(`${d.url}/api/v1/app/books?page=0&size=50`, { headers: { authorization: `Bearer ${token}` } });
    expect(books.status).toBe(200);
    expect(await books.json()).toMatchObject({ totalElements: 0 });
  });

  it('serves everything under --base-path', async ({ skip }) => {
    if (!available()) skip('rolldown is not installed');
    const d = await start(launcher(), { args: ['--base-path', '/books'], basePath: '/books' });
    const health = await fetch(`${d.url}/api/v1/healthcheck`);
    expect(d.url).toMatch(/\/books$/);
    expect(health.status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${d.port}/api/v1/healthcheck`)).status).toBe(404);
    expect((await fetch(`${d.url}/api/v1/setup/status`)).status).toBe(200);
  });

  it('logs JSON lines that never contain a bearer token, a ?token= value or a Kobo path token', async ({ skip }) => {
    if (!available()) skip('rolldown is not installed');
    const d = await start(launcher());
    const bearer = 'SECRETBEARERVALUE123';
    const query = 'SECRETQUERYVALUE456';
    const kobo = 'SECRETKOBOVALUE789';
    await fetch(`${d.url}/api/v1/healthcheck?token=${query}`, { headers: { Authorization: `Bearer ${bearer}` } });
    await fetch(`${d.url}/api/v1/users/me?token=${query}&x=1`, { headers: { Authorization: `Bearer ${bearer}` } });
    await fetch(`${d.url}/api/kobo/${kobo}/v1/initialization`);
    await fetch(`${d.url}/api/v1/setup`, { method: 'POST', headers: { 'content-type': 'application/json', Authorization: `Bearer ${bearer}` }, body: '{"username":' });
    expect(await d.stop('SIGTERM')).toEqual({ code: 0, signal: null });

    const lines = logLines(d);
    expect(lines.length).toBeGreaterThan(4);
    for (const line of lines) expect(line).toMatchObject({ level: expect.any(Number), time: expect.any(Number), msg: expect.any(String) });
    const all = d.stdout() + d.stderr();
    expect(all).not.toContain(bearer);
    expect(all).not.toContain(query);
    expect(all).not.toContain(kobo);
    const urls = lines.map((l) => (l.req as { url?: string } | undefined)?.url).filter(Boolean);
    expect(urls).toContain('/api/v1/healthcheck?token=[redacted]');
    expect(urls).toContain('/api/v1/users/me?token=[redacted]&x=1');
    expect(lines.find((l) => l.msg === 'bindery is ready')).toMatchObject({ runtime: launcher().name === 'bundle' ? 'bundle' : 'source' });
  });
});
