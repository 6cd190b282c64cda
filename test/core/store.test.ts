import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/store/store.ts';

const run = promisify(execFile);
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('store', () => {
  it('opens in WAL mode with foreign keys and applies migrations once', async () => {
    const path = join(dir, 'c.sqlite');
    const a = await openStore(path);
    expect(a.sqlite.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(a.sqlite.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(Number(a.sqlite.pragma('busy_timeout', { simple: true }))).toBeGreaterThanOrEqual(5000);
    const applied = await a.db.selectFrom('bindery_migration' as never).selectAll().execute();
    await a.close();
    const b = await openStore(path);
    expect(await b.db.selectFrom('bindery_migration' as never).selectAll().execute()).toEqual(applied);
    expect(await b.db.selectFrom('app_settings').select(['name', 'val']).where('name', '=', 'cover_image_resolution').execute()).toEqual([{ name: 'cover_image_resolution', val: '250x350' }]);
    await b.close();
  });

  it('refuses a file that is not a database with a clear error and leaves it untouched', async () => {
    const path = join(dir, 'not-a-db.sqlite');
    const content = 'hello, I am a text file'.repeat(100);
    writeFileSync(path, content);
    await expect(openStore(path)).rejects.toThrow(/not a database|catalog/i);
    expect(readFileSync(path, 'utf8')).toBe(content);
  });

  it('two processes writing at once lose nothing and never fail with "database is locked"', async () => {
    const path = join(dir, 'shared.sqlite');
    await (await openStore(path)).close();
    const writer = join(import.meta.dirname, '..', 'helpers', 'store-writer.ts');
    const count = 300;
    const [a, b] = await Promise.all([
      run(process.execPath, [writer, path, 'alpha', String(count)]),
      run(process.execPath, [writer, path, 'beta', String(count)]),
    ]);
    expect(a.stdout.trim()).toBe(`done ${count}`);
    expect(b.stdout.trim()).toBe(`done ${count}`);
    expect(a.stderr + b.stderr).not.toMatch(/locked|BUSY/i);
    const store = await openStore(path);
    const libraries = await store.db.selectFrom('library').select('name').execute();
    const titles = await store.db.selectFrom('book_metadata').select('title').execute();
    expect(libraries).toHaveLength(2 * count);
    expect(new Set(libraries.map((l) => l.name)).size).toBe(2 * count);
    expect(titles).toHaveLength(2 * count);
    expect(store.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
    await store.close();
  });
});
