// The listening daemon keeps the log of stale Komga series bounded: after a change of the catalog it works the
// figures out (Komga API on) or shrinks the log to one row per series (Komga API off), on both engines.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { buildApp, type BuiltApp } from '../../src/daemon/app.ts';
import { seedLibrary, seedSeriesBook } from '../helpers/catalog-seed.ts';

let dir: string;
let store: Store;
let built: BuiltApp;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bindery-series-figures-daemon-'));
  const config = { ...loadConfig({ env: {}, flags: { dataDir: join(dir, 'data') } }), logLevel: 'silent' as const };
  store = await openStore(join(config.dataDir, 'bindery.sqlite'));
  built = await buildApp({ config, store, seriesFiguresLookMs: 50 });
  await built.app.listen({ port: 0, host: '127.0.0.1' });
});

afterEach(async () => {
  await built.app.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const logRows = async (): Promise<{ series: number; rows: number }> => {
  const row = await store.exec.get('SELECT count(*) AS n, count(DISTINCT series_key) AS s FROM komga_series_stale');
  return { series: Number(row?.s ?? 0), rows: Number(row?.n ?? 0) };
};

async function seedTwoSeries(): Promise<void> {
  const library = await seedLibrary(store.db, dir, 'L');
  for (let i = 1; i <= 4; i++) {
    await seedSeriesBook(store.db, library, 'saga', `Saga ${i}`, { series_name: 'Saga', series_number: i }, ['space']);
    await seedSeriesBook(store.db, library, 'monstress', `Monstress ${i}`, { series_name: 'Monstress', series_number: i }, ['fantasy']);
  }
}

describe('a listening daemon and the Komga series figures', () => {
  it('shrinks the log of stale series to a row per series after a change when the Komga API is off', async () => {
    await seedTwoSeries();
    // The two series, and the library's Unknown Series members (key ''): each book left it when given its series.
    await expect.poll(logRows, { timeout: 15_000, interval: 50 }).toEqual({ series: 3, rows: 3 });
  });

  it('works the figures out after a change when the Komga API is on, leaving nothing stale', async () => {
    await store.db.updateTable('app_settings').set({ val: 'true' }).where('name', '=', 'komga_api_enabled').execute();
    await seedTwoSeries();
    await expect.poll(logRows, { timeout: 15_000, interval: 50 }).toEqual({ series: 0, rows: 0 });
    const kept = await store.exec.all('SELECT series_key AS k FROM komga_series_summary ORDER BY 1');
    // Figures of both series, and a claim on the library's Unknown Series members.
    expect(kept.map((r) => r.k)).toEqual(['', 'monstress', 'saga']);
  });
});
