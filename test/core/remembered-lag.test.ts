// remembered(): a result may outlive catalog changes for `lag.ms` only when `lag.when` says so of the value, whatever
// the time counting took.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { remembered, type Lag } from '../../src/core/komga/sql.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';

let dir: string;
let store: Store;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-remembered-'));
  store = await openStore(join(dir, 'catalog.sqlite'));
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Asks for one remembered value, changes the catalog, asks again: how many times it was computed. */
async function computedAcrossAChange(sql: string, lag?: Lag<number>): Promise<number> {
  let computed = 0;
  const compute = async (): Promise<number> => ++computed;
  const compiled = { sql, parameters: [] };
  await remembered(store, compiled, compute, lag);
  await store.db.insertInto('library').values({ name: `changed ${sql}` }).execute();
  await remembered(store, compiled, compute, lag);
  return computed;
}

describe('remembered, across a change of the catalog', () => {
  it('works a value out again when there is no lag, or the lag does not apply to it', async () => {
    expect(await computedAcrossAChange('SELECT 1 -- no lag')).toBe(2);
    expect(await computedAcrossAChange('SELECT 1 -- small', { ms: 60_000, when: () => false })).toBe(2);
  });

  it('keeps a value the lag applies to for the lag', async () => {
    expect(await computedAcrossAChange('SELECT 1 -- large', { ms: 60_000, when: () => true })).toBe(1);
    expect(await computedAcrossAChange('SELECT 1 -- lag over', { ms: 0, when: () => true })).toBe(2);
  });
});
