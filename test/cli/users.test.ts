import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.ts';
import { openStore } from '../../src/core/store/store.ts';
import { buildApp } from '../../src/daemon/app.ts';
import { spawn } from 'node:child_process';
import { BIN, runCli, type CliOptions, type CliResult } from '../helpers/cli.ts';
import { freePort } from '../helpers/free-port.ts';
import { makeTempLibrary, type TempLibrary } from '../helpers/library-fixtures.ts';



let lib: TempLibrary;
beforeEach(() => {
  lib = makeTempLibrary();
});
afterEach(() => lib.cleanup());

function bindery(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return runCli(['--data-dir', lib.dataDir, ...args], options);
}

/** Signs in through the real login route of a daemon on the same catalog; returns the HTTP status and body. */
async function loginStatus(username: string, password: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const config = { ...loadConfig({ env: {}, flags: { dataDir: lib.dataDir } }), logLevel: 'silent' as const };
  const store = await openStore(join(lib.dataDir, 'bindery.sqlite'));
  const { app } = await buildApp({ config, store });
  try {
    const res = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password } });
    return { status: res.statusCode, body: res.json() };
  } finally {
    await app.close();
    await store.close();
  }
}

describe('bindery setup', () => {
  it('creates the first administrator from a password on stdin, then refuses with exit 4', async () => {
    const first = await bindery(['--json', 'setup', '--username', 'root', '--email', 'root@example.com', '--password-stdin'], { input: 'root-password\n' });
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ id: 1, username: 'root', admin: true });

    const login = await loginStatus('root', 'root-password');
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({ expires: 7200, isDefaultPassword: false });

    const passwordFile = join(lib.dataDir, '..', 'pw');
    writeFileSync(passwordFile, 'other-password\n');
    const again = await bindery(['setup', '--username', 'other', '--password-file', passwordFile]);
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(/setup is already complete/);
  });

  it('needs a password source and a long enough password (exit 2)', async () => {
    expect((await bindery(['setup', '--username', 'root'])).code).toBe(2);
    const short = await bindery(['--json', 'setup', '--username', 'root', '--password-stdin'], { input: 'short' });
    expect(short.code).toBe(2);
    expect(JSON.parse(short.stdout)).toEqual({ error: { code: 'INVALID_ARGUMENT', message: 'the password must be at least 8 characters long' } });
  });
});

describe('bindery users', () => {
  it('adds, lists, grants, changes passwords of and removes users', async () => {
    await bindery(['setup', '--username', 'root', '--password-stdin'], { input: 'root-password' });
    expect((await bindery(['library', 'add', 'Fiction', lib.root])).code).toBe(0);

    const pw = join(lib.dataDir, '..', 'bob-pw');
    writeFileSync(pw, 'bob-password\n');
    const added = await bindery(['--json', 'users', 'add', 'bob', '--password-file', pw, '--email', 'bob@example.com', '--library', 'Fiction', '--permission', 'canDownload,permissionSyncKobo']);
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({
      id: 2, username: 'bob', name: 'bob', email: 'bob@example.com', admin: false, defaultPassword: true,
      permissions: ['canDownload', 'canSyncKobo'], libraries: [{ id: 1, name: 'Fiction' }],
    });
    expect((await loginStatus('bob', 'bob-password')).body).toMatchObject({ isDefaultPassword: true });

    const listed = JSON.parse((await bindery(['--json', 'users', 'list'])).stdout) as { username: string; admin: boolean }[];
    expect(listed.map((u) => [u.username, u.admin])).toEqual([['root', true], ['bob', false]]);
    expect((await bindery(['users', 'list'])).stdout).toMatch(/^2\tbob\tbob\tbob@example.com\tcanDownload,canSyncKobo\tFiction$/m);

    const granted = await bindery(['--json', 'users', 'grant', 'bob', '--permission', 'canUpload']);
    expect(JSON.parse(granted.stdout).permissions).toEqual(['canUpload', 'canDownload', 'canSyncKobo']);
    const revoked = await bindery(['--json', 'users', 'grant', 'bob', '--revoke', '--permission', 'canDownload', '--library', 'Fiction']);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ permissions: ['canUpload', 'canSyncKobo'], libraries: [] });

    const passwd = await bindery(['users', 'passwd', 'bob', '--password-stdin'], { input: 'new-bob-password\n' });
    expect(passwd.code).toBe(0);
    expect((await loginStatus('bob', 'new-bob-password')).status).toBe(200);
    expect((await loginStatus('bob', 'bob-password')).status).toBe(400);

    const unconfirmed = await bindery(['users', 'remove', 'bob']);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toMatch(/--yes/);
    const removed = await bindery(['--json', 'users', 'remove', 'bob', '--yes']);
    expect(removed.code).toBe(0);
    expect(JSON.parse(removed.stdout)).toEqual({ removed: 2, username: 'bob' });
    expect((await loginStatus('bob', 'new-bob-password')).status).toBe(400);
  });

  it('reports conflicts, unknown names and bad arguments with the documented exit codes', async () => {
    await bindery(['setup', '--username', 'root', '--password-stdin'], { input: 'root-password' });
    const taken = await bindery(['users', 'add', 'root', '--password-stdin'], { input: 'some-password' });
    expect(taken.code).toBe(4);
    expect(taken.stderr.trim()).toBe('bindery: Username already taken: root');
    expect((await bindery(['users', 'add', 'carol'])).code).toBe(2);
    const badPermission = await bindery(['users', 'add', 'carol', '--permission', 'canFly', '--password-stdin'], { input: 'some-password' });
    expect(badPermission.code).toBe(2);
    expect(badPermission.stderr).toMatch(/unknown permission "canFly"/);
    expect((await bindery(['users', 'add', 'carol', '--library', 'Nowhere', '--password-stdin'], { input: 'some-password' })).code).toBe(3);
    const missing = await bindery(['--json', 'users', 'passwd', 'nobody', '--password-stdin'], { input: 'some-password' });
    expect(missing.code).toBe(3);
    expect(JSON.parse(missing.stdout)).toMatchObject({ error: { code: 'USER_NOT_FOUND' } });
    const lastAdmin = await bindery(['users', 'remove', 'root', '--yes']);
    expect(lastAdmin.code).toBe(4);
    expect(lastAdmin.stderr).toMatch(/no administrator/);
    expect((await bindery(['users', 'grant', 'root', '--revoke', '--permission', 'admin'])).code).toBe(4);
  });
});

describe('bindery serve with BINDERY_ADMIN_*', () => {
  it('creates the administrator from the environment before listening', async () => {
    const port = await freePort();
    const child = spawn(BIN, ['--data-dir', lib.dataDir, 'serve', '--port', String(port), '--host', '127.0.0.1'], {
      env: { ...process.env, BINDERY_CONFIG: '', BINDERY_LOG_LEVEL: 'silent', BINDERY_ADMIN_USERNAME: 'boot', BINDERY_ADMIN_PASSWORD: 'boot-password', BINDERY_ADMIN_EMAIL: 'boot@example.com' },
      stdio: 'ignore',
    });
    try {
      let status: Response | undefined;
      for (let i = 0; i < 100 && !status; i++) {
        status = await fetch(`http://127.0.0.1:${port}/api/v1/setup/status`).catch(() => undefined);
        if (!status) await new Promise((r) => setTimeout(r, 100));
      }
      expect(await status?.json()).toMatchObject({ data: true });
      const login = await fetch(`http://127.0.0.1:${port}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'boot', password: 'boot-password' }),
      });
      expect(login.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});
