// Store.readAside: a whole-catalog read run where it does not hold up the thread answering requests (a worker thread
// with its own connection on SQLite, the pool on PostgreSQL), seeing only committed state.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAsideThreads } from '../../src/core/store/read-aside.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { onPostgres } from '../helpers/engine.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

let tmp: TempDir;
let store: Store;

const LIBRARIES = 'SELECT id, name FROM library ORDER BY id';
const names = (rows: Record<string, unknown>[]): string[] => rows.map((row) => row.name as string);

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

beforeAll(async () => {
  tmp = makeTempDir('bindery-read-aside-');
  store = await openStore(tmp.file('bindery.sqlite'));
  for (const name of ['beta', 'Alpha', 'gamma']) await store.exec.run('INSERT INTO library (name) VALUES (?)', [name]);
});
afterAll(async () => {
  await store.close();
  tmp.remove();
});

describe('Store.readAside', () => {
  it('gives the rows exec.all gives, parameters included', async () => {
    expect(await store.readAside(LIBRARIES)).toEqual(await store.exec.all(LIBRARIES));
    const filtered = 'SELECT count(*) AS n, max(name) AS top FROM library WHERE id > ?';
    expect(await store.readAside(filtered, [1])).toEqual(await store.exec.all(filtered, [1]));
    expect(await store.readAside(filtered, [1])).toEqual([{ n: 2, top: 'gamma' }]);
  });

  it("sees another connection's commit made before the call", async () => {
    const other = await openStore(tmp.file('bindery.sqlite'));
    try {
      await store.readAside(LIBRARIES);
      await other.exec.run('INSERT INTO library (name) VALUES (?)', ['from another connection']);
    } finally {
      await other.close();
    }
    expect(names(await store.readAside(LIBRARIES))).toContain('from another connection');
  });

  it("does not see this process's write transaction still open, and sees it once committed", async () => {
    await store.write(async ({ exec }) => {
      await exec.run('INSERT INTO library (name) VALUES (?)', ['not yet committed']);
      expect(names(await exec.all(LIBRARIES))).toContain('not yet committed');
      expect(names(await store.readAside(LIBRARIES))).not.toContain('not yet committed');
    });
    expect(names(await store.readAside(LIBRARIES))).toContain('not yet committed');
  });

  it('rejects a statement that fails, and keeps working after it', async () => {
    await expect(store.readAside('SELECT x FROM no_such_table')).rejects.toThrow(/no_such_table/);
    expect(names(await store.readAside(LIBRARIES))).toContain('beta');
  });
});

// The worker thread and its lifetime exist on SQLite only (PostgreSQL reads through its pool).
describe.skipIf(onPostgres)('Store.readAside on SQLite', () => {
  it('refuses a statement that writes', async () => {
    await expect(store.readAside("INSERT INTO library (name) VALUES ('written aside')")).rejects.toThrow();
    expect(names(await store.exec.all(LIBRARIES))).not.toContain('written aside');
  });

  it('starts its thread on first use, ends it when idle, and starts it again on the next call', async () => {
    const idle = await openStore(tmp.file('bindery.sqlite'), { readAsideIdleMs: 300 });
    try {
      expect(readAsideThreads(idle)).toBe(0);
      expect(names(await idle.readAside(LIBRARIES))).toContain('beta');
      expect(readAsideThreads(idle)).toBe(1);
      await until(() => readAsideThreads(idle) === 0);
      expect(names(await idle.readAside(LIBRARIES))).toContain('beta');
      expect(readAsideThreads(idle)).toBe(1);
    } finally {
      await idle.close();
    }
  });

  it('ends its thread when the store closes, and rejects reads after that', async () => {
    const closing = await openStore(tmp.file('bindery.sqlite'));
    await closing.readAside(LIBRARIES);
    expect(readAsideThreads(closing)).toBe(1);
    await closing.close();
    expect(readAsideThreads(closing)).toBe(0);
    await expect(closing.readAside(LIBRARIES)).rejects.toThrow(/closed/);
  });

  it('rejects a read still running when the store closes instead of leaving it waiting', async () => {
    const closing = await openStore(tmp.file('bindery.sqlite'));
    const slow = closing.readAside('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000000) SELECT count(*) AS c FROM n');
    const settled = slow.then(
      () => 'resolved',
      () => 'rejected',
    );
    await until(() => readAsideThreads(closing) === 1);
    await closing.close();
    expect(await settled).toBe('rejected');
  });
});
