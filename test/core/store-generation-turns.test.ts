// The catalog generation is cheap to ask for (a page asks dozens of times): SQLite's data_version is read once per
// event-loop turn. What that must never cost: a write of this process missed by the next lookup.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CatalogMemo, sameGeneration } from '../../src/core/store/snapshot.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { onPostgres } from '../helpers/engine.ts';

const run = promisify(execFile);
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

let dir: string;
let path: string;
let store: Store;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-generation-turns-'));
  path = join(dir, 'catalog.sqlite');
  store = await openStore(path);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const libraries = async (s: Store): Promise<number> => Number((await s.exec.get('select count(*) as n from library'))?.n);

describe('catalog generation, read once per turn', () => {
  it('sees a write of this process at the next lookup, in the same turn', async () => {
    let turned = false;
    setImmediate(() => (turned = true));
    const before = store.generation();
    await store.exec.run('insert into library (name) values (?)', ['same turn']);
    const after = store.generation();
    expect(sameGeneration(before, after)).toBe(false);
    await store.write(async ({ exec }) => { await exec.run('insert into library (name) values (?)', ['in a transaction']); });
    expect(sameGeneration(after, store.generation())).toBe(false);
    // On SQLite all of it ran in one turn of the event loop (better-sqlite3 answers synchronously).
    if (!onPostgres) expect(turned).toBe(false);
  });

  it('gives a memo lookup right after a write of this process the new value', async () => {
    const memo = new CatalogMemo<string, number>(4);
    const count = (): Promise<number> => memo.getAsync(store, 'libraries', () => libraries(store));
    const first = await count();
    await store.exec.run('insert into library (name) values (?)', ['one more']);
    expect(await count()).toBe(first + 1);
  });

  it("sees another process's commit", async () => {
    const before = store.generation();
    const writer = join(import.meta.dirname, '..', 'helpers', 'store-writer.ts');
    await run(process.execPath, [writer, path, 'elsewhere', '1'], { env: process.env });
    await nextTurn();
    await vi.waitFor(() => expect(sameGeneration(before, store.generation())).toBe(false));
    expect(await libraries(store)).toBe(1);
  });
});

// data_version is SQLite's: PostgreSQL's generation is this process's counters, moved by NOTIFY.
describe.skipIf(onPostgres)('catalog generation on SQLite', () => {
  it("sees another connection's commit from the next turn on, reading data_version once per turn", async () => {
    const other = new Database(path);
    try {
      const before = store.generation();
      other.prepare('insert into library (name) values (?)').run('from the other connection');
      // Same turn: the data_version read at the start of the turn stands.
      expect(sameGeneration(before, store.generation())).toBe(true);
      await nextTurn();
      expect(sameGeneration(before, store.generation())).toBe(false);
    } finally {
      other.close();
    }
  });

  it("sees another process's commit at the first event after the process went quiet", async () => {
    const quiet = join(dir, 'quiet');
    const child = spawn(process.execPath, [join(import.meta.dirname, '..', 'helpers', 'generation-after-quiet.ts'), path, quiet], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      await vi.waitFor(() => expect(existsSync(quiet)).toBe(true), { timeout: 10_000, interval: 20 });
      await run(process.execPath, [join(import.meta.dirname, '..', 'helpers', 'store-writer.ts'), path, 'while quiet', '1'], { env: process.env });
      child.stdin.write('now\n');
      await vi.waitFor(() => expect(output).toBe('changed\n'), { timeout: 10_000 });
    } finally {
      child.kill();
    }
  });

  it('gives a synchronous memo lookup right after a synchronous write the new value', () => {
    const memo = new CatalogMemo<string, number>(4);
    const count = (): number => memo.get(store, 'libraries', () => store.sqlite.prepare('select count(*) from library').pluck().get() as number);
    const first = count();
    store.sqlite.prepare('insert into library (name) values (?)').run('synchronously');
    expect(count()).toBe(first + 1);
  });

  it('sees a commit of a second Store of this process at once', async () => {
    const second = await openStore(path);
    try {
      const before = store.generation();
      await second.exec.run('insert into library (name) values (?)', ['second store']);
      expect(sameGeneration(before, store.generation())).toBe(false);
      await second.write(async ({ exec }) => { await exec.run('insert into library (name) values (?)', ['second store, transaction']); });
      const later = store.generation();
      await second.exec.run('update library set name = ? where name = ?', ['renamed', 'second store']);
      expect(sameGeneration(later, store.generation())).toBe(false);
    } finally {
      await second.close();
    }
  });
});
