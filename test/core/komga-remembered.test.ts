// Results over the whole catalog kept by the Komga queries (komga/sql.ts `remembered`): requests arriving while one
// is being worked out wait for it instead of working it out again; a change of the catalog starts a new one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { remembered } from '../../src/core/komga/sql.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';

let dir: string;
let store: Store;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-remembered-'));
  store = await openStore(join(dir, 'catalog.sqlite'));
  // On PostgreSQL the generation is new at every call until the store listens for other processes' changes.
  await vi.waitFor(() => expect(store.generation()).toEqual(store.generation()));
});

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A computation that ends when told to, counting how often it was started. */
function gated(): { compute: () => Promise<number>; release: (value: number) => void; starts: () => number } {
  let starts = 0;
  let release!: (value: number) => void;
  const ready = new Promise<number>((resolve) => (release = resolve));
  return { compute: () => (starts++, ready), release, starts: () => starts };
}

describe('remembered', () => {
  it('works a result out once for the requests that ask while it is being worked out', async () => {
    const query = { sql: 'SELECT count(*) FROM book -- shared', parameters: [] };
    const load = gated();
    const asked = [remembered(store, query, load.compute), remembered(store, query, load.compute), remembered(store, query, load.compute)];
    load.release(7);
    expect(await Promise.all(asked)).toEqual([7, 7, 7]);
    expect(load.starts()).toBe(1);
    // Kept: asked again on an unchanged catalog, nothing is worked out.
    expect(await remembered(store, query, () => Promise.resolve(8))).toBe(7);
  });

  it('works it out again once the catalog changed', async () => {
    const query = { sql: 'SELECT count(*) FROM book -- changed', parameters: [] };
    expect(await remembered(store, query, () => Promise.resolve(1))).toBe(1);
    const before = store.generation();
    await store.write(async ({ exec }) => {
      await exec.run("INSERT INTO app_settings (name, val) VALUES ('remembered-test', '1')");
    });
    await vi.waitFor(() => expect(store.generation()).not.toEqual(before));
    const load = gated();
    const asked = [remembered(store, query, load.compute), remembered(store, query, load.compute)];
    load.release(2);
    expect(await Promise.all(asked)).toEqual([2, 2]);
    expect(load.starts()).toBe(1);
  });
});
