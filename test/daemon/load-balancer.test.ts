// Two replicas on loopback behind haproxy (Debian's package, installed by scripts/test-deps): a KOReader client writes
// its progress through the proxy and reads it back through the proxy, landing on either replica, while a third
// process (`bindery scan`) reads a library into the same catalog.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromSource, runCli, type DaemonProcess } from '../../bench/daemon-process.ts';
import { freePort } from '../helpers/free-port.ts';
import { writeSimpleEpub } from '../helpers/library-fixtures.ts';
import { call, linkKoreader, pullProgress, pushProgress, setupAdmin, startReplica } from '../helpers/replicas.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

const HAPROXY = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((p) => existsSync(p));
const BOOKS = 40;

function haproxyConfig(port: number, servers: DaemonProcess[]): string {
  return [
    'global',
    '  maxconn 256',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    // Each request is balanced on its own.
    '  option http-server-close',
    'frontend bindery',
    `  bind 127.0.0.1:${port}`,
    '  default_backend replicas',
    'backend replicas',
    '  balance roundrobin',
    '  option httpchk GET /api/v1/healthcheck',
    '  http-response set-header X-Served-By %s',
    ...servers.map((s, i) => `  server replica-${i + 1} 127.0.0.1:${s.port} check inter 500ms`),
    '',
  ].join('\n');
}

describe.skipIf(!HAPROXY)('two replicas behind haproxy', () => {
  let dir: TempDir;
  let replicas: DaemonProcess[] = [];
  let proxy: ChildProcess;
  let url: string;

  beforeAll(async () => {
    dir = makeTempDir('bindery-haproxy-');
    const data = dir.file('data');
    replicas = [await startReplica(data, 'replica-1'), await startReplica(data, 'replica-2')];
    const port = await freePort();
    writeFileSync(dir.file('haproxy.cfg'), haproxyConfig(port, replicas));
    proxy = spawn(HAPROXY as string, ['-f', dir.file('haproxy.cfg'), '-db'], { stdio: ['ignore', 'ignore', 'pipe'] });
    url = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      const res = await fetch(`${url}/api/v1/healthcheck`).catch(() => undefined);
      if (res?.ok) break;
      if (i > 200) throw new Error('haproxy did not answer');
      await new Promise((r) => setTimeout(r, 50));
    }
    mkdirSync(dir.file('library'));
    for (let i = 0; i < BOOKS; i++) await writeSimpleEpub(dir.file(`library/book-${i}.epub`), { title: `Book ${i}`, authors: [`Author ${i % 7}`] });
  }, 120_000);

  afterAll(async () => {
    proxy?.kill('SIGKILL');
    await Promise.all(replicas.map((r) => r.stop('SIGKILL')));
    dir?.remove();
  });

  it('reads back through either replica the progress written through the other, while a scan runs', async () => {
    const token = await setupAdmin(url);
    const device = { user: 'reader', password: 'reader-secret' };
    await linkKoreader(url, token, device);
    const added = await runCli(fromSource, ['--data-dir', dir.file('data'), 'library', 'add', 'Shelf', dir.file('library')]);
    expect(added.code, added.stderr).toBe(0);
    const scan = runCli(fromSource, ['--data-dir', dir.file('data'), 'scan', 'Shelf']);

    const document = 'c0ffee00c0ffee00c0ffee00c0ffee00';
    const crossed: string[] = [];
    const servers = new Set<string>();
    for (let i = 1; i <= 30; i++) {
      const percentage = i / 100;
      const wrote = await pushProgress(url, device, document, percentage);
      expect(wrote.status).toBe(200);
      const read = await pullProgress(url, device, document);
      expect(read.status).toBe(200);
      expect((read.body as { percentage: number }).percentage).toBe(percentage);
      const [by, from] = [wrote.headers.get('x-served-by'), read.headers.get('x-served-by')];
      servers.add(String(by)).add(String(from));
      if (by !== from) crossed.push(`${by}→${from}`);
    }
    expect([...servers].sort()).toEqual(['replica-1', 'replica-2']);
    expect(crossed.length).toBeGreaterThan(0);

    const scanned = await scan;
    expect(scanned.code, scanned.stderr).toBe(0);
    const libraries = await call(url, 'GET', '/api/v1/libraries', token);
    const shelf = (libraries.body as { id: number; name: string }[]).find((l) => l.name === 'Shelf');
    expect(shelf).toBeDefined();
  }, 120_000);
});
