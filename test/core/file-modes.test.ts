// The data directory and the catalog (signing secret, password hashes, mail credentials) are private whatever the
// umask, and a looser existing directory or catalog is tightened when the catalog is opened.
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/store/store.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';
import { onPostgres } from '../helpers/engine.ts';

const modeOf = (path: string): number => statSync(path).mode & 0o777;
let tmp: TempDir;
let umask: number;

beforeEach(() => {
  tmp = makeTempDir('bindery-modes-');
  umask = process.umask();
});
afterEach(() => {
  process.umask(umask);
  tmp.remove();
});

describe('data directory and catalog modes', () => {
  // The catalog's own files (and their WAL) exist only on SQLite; a PostgreSQL server keeps its files itself.
  it.skipIf(onPostgres)('are created private even with umask 000', async () => {
    process.umask(0o000);
    const dataDir = join(tmp.dir, 'data');
    const store = await openStore(join(dataDir, 'bindery.sqlite'));
    await store.db.insertInto('app_settings').values({ name: 'probe', val: 'x' }).execute();
    expect(modeOf(dataDir)).toBe(0o750);
    for (const name of ['bindery.sqlite', 'bindery.sqlite-wal', 'bindery.sqlite-shm']) expect(modeOf(join(dataDir, name)), name).toBe(0o600);
    await store.close();
  });

  it.skipIf(onPostgres)('are tightened on open when an existing directory or catalog is looser', async () => {
    process.umask(0o000);
    const dataDir = join(tmp.dir, 'old');
    mkdirSync(dataDir, { mode: 0o777 });
    const path = join(dataDir, 'bindery.sqlite');
    await (await openStore(path)).close();
    chmodSync(dataDir, 0o777);
    chmodSync(path, 0o644);
    writeFileSync(`${path}-wal`, '');
    chmodSync(`${path}-wal`, 0o666);
    const store = await openStore(path);
    expect(modeOf(dataDir)).toBe(0o750);
    expect(modeOf(path)).toBe(0o600);
    expect(modeOf(`${path}-wal`)).toBe(0o600);
    expect(modeOf(`${path}-shm`)).toBe(0o600);
    await store.close();
  });

  it('are left alone when already stricter', async () => {
    const dataDir = join(tmp.dir, 'strict');
    mkdirSync(dataDir, { mode: 0o700 });
    chmodSync(dataDir, 0o700);
    const store = await openStore(join(dataDir, 'bindery.sqlite'));
    expect(modeOf(dataDir)).toBe(0o700);
    await store.close();
  });
});
