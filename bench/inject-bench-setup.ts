// What the in-process feed benchmarks (OPDS, Komga, the app API) share: a synthetic catalog with an admin and a
// library member who has a content restriction, OPDS accounts for both, a magic shelf, and the app built on it.
import { mkdtempSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../src/core/config.ts';
import { openStore, type Store } from '../src/core/store/store.ts';
import { createUser, hashPassword } from '../src/core/users/users.ts';
import { buildApp, type BuiltApp } from '../src/daemon/app.ts';
import { koboShelfId } from '../src/core/kobo/kobo-shelf.ts';
import { updateKoboSettings } from '../src/core/kobo/sync-settings.ts';
import { fillCatalog, type SyntheticCatalog } from './book-catalog.ts';

export interface BenchOptions {
  books: number;
  runs: number;
  only: string;
}

export function benchOptions(defaultRuns: number): BenchOptions {
  const { values } = parseArgs({ options: { books: { type: 'string', default: '100000' }, runs: { type: 'string', default: String(defaultRuns) }, only: { type: 'string', default: '' } } });
  return { books: Number(values.books), runs: Number(values.runs), only: values.only };
}

export interface BenchCatalog {
  dir: string;
  store: Store;
  app: FastifyInstance;
  ctx: BuiltApp['ctx'];
  adminId: number;
  readerId: number;
  catalog: SyntheticCatalog;
  magicId: number;
  /** `Authorization` for the OPDS accounts `kobo` (the admin's) and `phone` (the reader's). */
  basic(account: string): string;
}

/** What `writeBenchCatalog` leaves in a data folder: the catalog and who is in it. */
export interface WrittenCatalog {
  store: Store;
  adminId: number;
  readerId: number;
  catalog: SyntheticCatalog;
  magicId: number;
}

/**
 * Writes the catalog into `dir` (bindery.sqlite, as `--data-dir dir` finds it) and switches on `settings`. With `kobo`,
 * the reader may sync a Kobo and the first `kobo` books are on their Kobo shelf.
 */
export async function writeBenchCatalog(dir: string, books: number, settings: readonly string[] = [], options: { kobo?: number } = {}): Promise<WrittenCatalog> {
  const store = await openStore(join(dir, 'bindery.sqlite'));
  const adminId = await createUser(store.db, { username: 'admin', password: 'admin-password', name: 'Admin', permissions: { admin: true } });
  const started = performance.now();
  const catalog = await fillCatalog(store, books, join(dir, 'library'), adminId);
  console.log(`catalog: ${books} books written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const readerId = await createUser(store.db, { username: 'reader', password: 'reader-password', name: 'Reader', permissions: { canAccessOpds: true, canSyncKobo: options.kobo !== undefined }, libraryIds: [catalog.libraryId] });
  await store.sqlite.prepare("INSERT INTO user_content_restriction (user_id, restriction_type, mode, value) VALUES (?, 'CATEGORY', 'EXCLUDE', 'Category 7')").run(readerId);
  for (const [userId, account] of [[adminId, 'kobo'], [readerId, 'phone']] as const) {
    await store.db.insertInto('opds_user_v2').values({ user_id: userId, username: account, password_hash: await hashPassword(`${account}-password`) }).execute();
  }
  for (const setting of settings) {
    await store.db.insertInto('app_settings').values({ name: setting, val: 'true' }).onConflict((oc) => oc.column('name').doUpdateSet({ val: 'true' })).execute();
  }
  const magic = JSON.stringify({ type: 'group', join: 'and', rules: [{ field: 'seriesName', operator: 'starts_with', value: 'series 1' }, { field: 'pageCount', operator: 'greater_than', value: 300 }] });
  const magicId = Number(store.sqlite.prepare("INSERT INTO magic_shelf (user_id, name, filter_json) VALUES (?, 'Long series books', ?)").run(adminId, magic).lastInsertRowid);
  if (options.kobo !== undefined) {
    await updateKoboSettings(store.db, readerId, { syncEnabled: true, twoWayProgressSync: true });
    const shelfId = (await koboShelfId(store.db, readerId)) as number;
    store.sqlite.prepare('INSERT INTO book_shelf_mapping (book_id, shelf_id) SELECT id, ? FROM book WHERE id < ?').run(shelfId, catalog.bookIds.first + options.kobo);
    await store.db.insertInto('app_settings').values({ name: 'kobo_settings', val: JSON.stringify({ convertToKepub: false, conversionLimitInMb: 100, convertCbxToEpub: false, conversionLimitInMbForCbx: 100, forceEnableHyphenation: false, conversionImageCompressionPercentage: 85, forwardToKoboStore: false }) }).execute();
  }
  store.sqlite.pragma('optimize');
  return { store, adminId, readerId, catalog, magicId };
}

/** `Authorization` for the OPDS accounts `kobo` (the admin's) and `phone` (the reader's). */
export const basicFor = (account: string): string => `Basic ${Buffer.from(`${account}:${account}-password`).toString('base64')}`;

/** Builds the catalog in a new temp folder (the caller removes `dir`), switches on `settings`, and builds the app. */
export async function setUpBenchCatalog(name: string, books: number, settings: readonly string[] = []): Promise<BenchCatalog> {
  console.log(`machine: ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, node ${process.version}, load ${loadavg()[0]?.toFixed(1)}`);
  const dir = mkdtempSync(join(tmpdir(), `bindery-${name}-bench-`));
  const written = await writeBenchCatalog(dir, books, settings);
  const config = { ...loadConfig({ env: {}, flags: { dataDir: dir } }), logLevel: 'silent' as const };
  const { app, ctx } = await buildApp({ config, store: written.store });
  await app.ready();
  return { dir, app, ctx, ...written, basic: basicFor };
}
