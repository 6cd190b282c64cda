// A full data directory: writes answer 507 in the documented error shape, naming the directory and the cause, the
// real error is logged (not "cannot rollback - no transaction is active"), and the daemon carries on once there is
// room again. Real tmpfs, really filled. (A file system cannot be remounted read-only while the daemon holds the
// catalog open for writing, so the read-only case is tested through the CLI: test/cli/storage-failure.test.ts.)
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/core/config.ts';
import { signToken, ACCESS_TOKEN_SECONDS } from '../../src/core/auth/tokens.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { createUser } from '../../src/core/users/users.ts';
import { buildApp, type BuiltApp } from '../../src/daemon/app.ts';
import { canMount, mountSmallDisk, type SmallDisk } from '../helpers/small-disk.ts';
import { onPostgres } from '../helpers/engine.ts';

let disk: SmallDisk;
let store: Store;
let built: BuiltApp;
let token: string;
let logs: Record<string, unknown>[];
let dataDir: string;

beforeEach(async () => {
  if (!canMount) return;
  disk = mountSmallDisk(6144);
  dataDir = join(disk.root, 'data');
  const config: Config = { ...loadConfig({ env: {}, flags: { dataDir } }) };
  store = await openStore(join(dataDir, 'bindery.sqlite'));
  logs = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  built = await buildApp({ config, store, logger: { level: 'error', stream } });
  await built.app.ready();
  const id = await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'Admin', permissions: { admin: true }, libraryIds: [] });
  token = await signToken(built.ctx.jwtSecret, { userId: id, username: 'admin', isDefaultPassword: false, sessionVersion: 0 }, 'access', ACCESS_TOKEN_SECONDS);
});

afterEach(async () => {
  if (!canMount) return;
  await built?.app.close();
  await store?.close();
  disk?.unmount();
});

// A write in a transaction (a magic shelf): SQLite ends it by itself on SQLITE_FULL, which is where the rollback
// error used to hide the cause.
const createShelf = (n: number) =>
  built.app.inject({
    method: 'POST',
    url: '/api/magic-shelves',
    headers: { authorization: `Bearer ${token}` },
    payload: { name: `Shelf ${n} ${'x'.repeat(200)}`, icon: 'book', iconType: 'LUCIDE', filterJson: JSON.stringify({ join: 'and', rules: [] }) },
  });

/** Writes until one fails (what WAL space was already allocated is used up first). */
async function firstFailure(): Promise<{ statusCode: number; json(): unknown }> {
  for (let n = 0; n < 20_000; n++) {
    const res = await createShelf(n);
    if (res.statusCode !== 201 && res.statusCode !== 200) return res;
  }
  throw new Error('no write failed');
}

// The catalog's own writes failing on the full disk: only the SQLite file lives in the data directory.
describe.skipIf(!canMount || onPostgres)('a data directory that cannot be written', () => {
  it('answers 507 naming the directory and the cause when the disk is full, logs the real error, and recovers', async () => {
    expect((await createShelf(-1)).statusCode).toBeLessThan(300);
    disk.fill();
    const res = await firstFailure();
    expect(res.statusCode).toBe(507);
    expect(res.json()).toEqual({ status: 507, message: `The server cannot save changes: cannot write to ${dataDir}: no space left on device.`, timestamp: expect.any(String) });
    const logged = logs.find((l) => l.msg === 'request failed: the disk cannot be written');
    expect(logged).toMatchObject({ directory: dataDir, cause: 'no space left on device' });
    expect(JSON.stringify(logged)).not.toContain('cannot rollback');
    expect(JSON.stringify(logged)).toMatch(/SQLITE_FULL|database or disk is full|ENOSPC/);

    disk.free();
    const after = await createShelf(99_999);
    expect(after.statusCode).toBeLessThan(300);
    expect(store.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
  });
});
