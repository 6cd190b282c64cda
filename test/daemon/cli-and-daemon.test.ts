// The CLI and the daemon on one catalog at the same time: while `bindery serve` answers requests in a loop, a library
// is added and scanned from the command line (with its worker threads). No request fails, nothing reports "database
// is locked", and the daemon lists the new books as soon as the scan returns.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { build, BuildUnavailable } from '../../scripts/build.ts';
import { fromBundle, fromSource, ROOT, runCli, startDaemon, type DaemonProcess, type Launcher } from '../../bench/daemon-process.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';

const BOOKS = 24;
const BUNDLE = join(ROOT, 'node_modules', '.cache', `bindery-test-cli-${process.pid}`);
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

let lib: TempLibrary;
let daemon: DaemonProcess | undefined;
beforeEach(async () => {
  lib = makeTempLibrary();
  for (let i = 0; i < BOOKS; i++) {
    await writeSimpleEpub(lib.path(`Author ${i % 5}`, `Book ${i}.epub`), { title: `Book ${i}`, authors: [`Author ${i % 5}`], body: `text ${i}`, cover: i % 2 ? '#236' : undefined });
  }
});
afterEach(async () => {
  await daemon?.stop('SIGKILL');
  daemon = undefined;
  lib.cleanup();
});

interface Traffic {
  requests: number;
  failures: string[];
}

/** Requests in a loop (several at once) until `stop` is set: the healthcheck, the book list, the user. */
async function keepAsking(url: string, token: string, stop: { done: boolean }, traffic: Traffic): Promise<void> {
  const paths = ['/api/v1/healthcheck', '/api/v1/books', '/api/v1/users/me', '/api/v1/libraries'];
  const loop = async (offset: number): Promise<void> => {
    for (let i = offset; !stop.done; i++) {
      const path = paths[i % paths.length] as string;
      try {
        const res = await fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(30_000) });
        const body = await res.text();
        traffic.requests++;
        if (res.status !== 200) traffic.failures.push(`${path}: ${res.status} ${body.slice(0, 200)}`);
        else if (/database is locked|SQLITE_BUSY/i.test(body)) traffic.failures.push(`${path}: ${body.slice(0, 200)}`);
      } catch (error) {
        traffic.failures.push(`${path}: ${(error as Error).message}`);
      }
    }
  };
  await Promise.all([0, 1, 2, 3].map(loop));
}

describe.each([
  { name: 'from the sources', launcher: (): Launcher => fromSource, available: () => true },
  { name: 'from the bundle', launcher: (): Launcher => fromBundle(BUNDLE), available: () => bundleBuilt },
])('bindery serve and the CLI together, $name', ({ launcher, available }) => {
  it('scan from the CLI while the daemon serves: no failed request, no lock error, new books listed at once', async ({ skip }) => {
    if (!available()) skip('rolldown is not installed');
    daemon = await startDaemon(launcher(), { dataDir: lib.dataDir });
    const setup = await fetch(`${daemon.url}/api/v1/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'admin-password', name: 'Admin', email: 'admin@example.com' }),
    });
    expect(setup.status).toBe(200);
    const login = await fetch(`${daemon.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'admin-password' }) });
    const { accessToken } = (await login.json()) as { accessToken: string };
    const listed = async (): Promise<number> => {
      const res = await fetch(`${daemon?.url}/api/v1/books`, { headers: { Authorization: `Bearer ${accessToken}` } });
      expect(res.status).toBe(200);
      return ((await res.json()) as unknown[]).length;
    };
    expect(await listed()).toBe(0);

    const stop = { done: false };
    const traffic: Traffic = { requests: 0, failures: [] };
    const asking = keepAsking(daemon.url, accessToken, stop, traffic);
    try {
      const added = await runCli(launcher(), ['--data-dir', lib.dataDir, '--json', 'library', 'add', 'Books', lib.root]);
      expect(added.code, added.stderr).toBe(0);
      const scan = await runCli(launcher(), ['--data-dir', lib.dataDir, '--json', 'scan', '--workers', '2']);
      expect(scan.code, scan.stderr).toBe(0);
      expect(JSON.parse(scan.stdout)).toMatchObject([{ libraryName: 'Books', added: BOOKS, failed: [] }]);
      expect(scan.stderr).not.toMatch(/database is locked|SQLITE_BUSY/i);
      // Immediately: no cache in the daemon stands between the catalog and the list.
      expect(await listed()).toBe(BOOKS);
    } finally {
      stop.done = true;
      await asking;
    }
    expect(traffic.failures).toEqual([]);
    expect(traffic.requests).toBeGreaterThan(20);
    expect(daemon.stdout() + daemon.stderr()).not.toMatch(/database is locked|SQLITE_BUSY/i);
    expect(await daemon.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
