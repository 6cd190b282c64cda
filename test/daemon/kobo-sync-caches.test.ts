// A Kobo device syncing writes its own bookkeeping (snapshots, sessions) and, when states were due, reading state
// (their sent stamps), never the catalog: the other feeds' kept pages and lists stay kept across its sessions, also on
// another replica (PostgreSQL), while its answers still follow the catalog when the catalog really changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { koboShelfId } from '../../src/core/kobo/kobo-shelf.ts';
import { koboSettingsFor, updateKoboSettings } from '../../src/core/kobo/sync-settings.ts';
import { sameGeneration, type Generation } from '../../src/core/store/snapshot.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { hashPassword } from '../../src/core/users/users.ts';
import { pageCacheSize } from '../../src/daemon/page-cache.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let d: TestDaemon;
let other: Store;
let user: { id: number; token: string };
let koboToken: string;
let shelfId: number;
const shelf: number[] = [];
/** Statements over the whole catalog (ordered id lists, totals) the daemon read aside: each is a list or count built. */
let listsBuilt = 0;

const basic = `Basic ${Buffer.from('reader:reader-password').toString('base64')}`;

async function get(url: string, headers: Record<string, string>): Promise<string> {
  const response = await d.inject({ method: 'GET', url, headers });
  expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
  return response.body;
}

/** The feeds' pages a reader's other apps keep asking for. */
const feeds = async (): Promise<string[]> => [
  await get('/api/v1/opds/catalog?page=1', { authorization: basic }),
  await get('/api/v2/opds/catalog?page=1', { authorization: basic, accept: 'application/opds+json' }),
  await get('/komga/api/v1/books?page=0&size=20', { authorization: basic }),
  await get('/api/v1/app/books?page=0&size=50', { authorization: `Bearer ${user.token}` }),
  await get('/api/v1/books/page?page=0&size=50', { authorization: `Bearer ${user.token}` }),
];

/** A device's whole sync from `token` (none: a new device); the entitlements it got and its token at the end. */
async function syncAll(token?: string): Promise<{ items: Json[]; token: string; pages: number }> {
  const items: Json[] = [];
  let current = token;
  for (let pages = 1; pages <= 20; pages++) {
    const response = await d.inject({
      method: 'GET',
      url: `/api/kobo/${koboToken}/v1/library/sync?Filter=ALL&DownloadUrlFilter=Generic,Android&PrioritizeRecentReads=true`,
      headers: { 'user-agent': 'Kobo Touch 0387/4.38.21908', ...(current ? { 'x-kobo-synctoken': current } : {}) },
    });
    expect(response.statusCode, response.body).toBe(200);
    items.push(...(response.json() as Json[]));
    current = response.headers['x-kobo-synctoken'] as string;
    if (response.headers['x-kobo-sync'] !== 'continue') return { items, token: current, pages };
  }
  throw new Error('endless session');
}

const idsOf = (items: Json[], kind: string): number[] => items.filter((item) => kind in item).map((item) => Number(item[kind].BookEntitlement.Id));

/** Waits until another connection's change has reached `store` (PostgreSQL: its NOTIFY). */
async function moved(generation: () => Generation, before: Generation): Promise<void> {
  for (let i = 0; i < 200 && sameGeneration(before, generation()); i++) await new Promise((r) => setTimeout(r, 10));
  expect(sameGeneration(before, generation())).toBe(false);
}

beforeAll(async () => {
  d = await startTestDaemon();
  const libraryId = await seedLibrary(d.store.db, d.dir, 'Main');
  user = await d.createUser('reader', { canSyncKobo: true, canAccessOpds: true }, [libraryId]);
  await d.store.db.insertInto('opds_user_v2').values({ user_id: user.id, username: 'reader', password_hash: await hashPassword('reader-password') }).execute();
  for (const name of ['komga_api_enabled', 'opds_server_enabled']) {
    await d.store.db.insertInto('app_settings').values({ name, val: 'true' }).onConflict((oc) => oc.column('name').doUpdateSet({ val: 'true' })).execute();
  }
  await updateKoboSettings(d.store.db, user.id, { syncEnabled: true });
  koboToken = (await koboSettingsFor(d.store.db, user.id)).token;
  shelfId = (await koboShelfId(d.store.db, user.id)) as number;
  // Two pages and a bit: a session has a first page (the snapshot), a middle one and a last one.
  for (let i = 0; i < 230; i++) shelf.push((await seedBook(d.store.db, libraryId, { title: `Book ${String(i).padStart(3, '0')}`, authors: ['Author'] })).bookId);
  await d.store.db.insertInto('book_shelf_mapping').values(shelf.map((book_id) => ({ book_id, shelf_id: shelfId }))).execute();
  const readAside = d.store.readAside.bind(d.store);
  d.store.readAside = (sql, params) => {
    listsBuilt++;
    return readAside(sql, params);
  };
  other = await openStore(d.store.path);
}, 120_000);

afterAll(async () => {
  await other?.close();
  await d?.close();
});

describe('a Kobo device syncing', () => {
  let deviceToken: string;

  it('keeps every other feed kept: a new device’s whole sync, then a sync with nothing new', async () => {
    const before = await feeds();
    const catalog = d.store.generation();
    const bookkeeping = d.store.bookkeeping.generation();
    const { builds } = pageCacheSize(d.ctx);
    const lists = listsBuilt;

    const first = await syncAll();
    expect(first.pages).toBe(3);
    expect(idsOf(first.items, 'NewEntitlement').sort((a, b) => a - b)).toEqual(shelf);
    const again = await syncAll(first.token);
    expect(again.pages).toBe(1);
    expect(idsOf(again.items, 'NewEntitlement')).toEqual([]);
    deviceToken = again.token;

    expect(sameGeneration(catalog, d.store.generation())).toBe(true);
    expect(sameGeneration(bookkeeping, d.store.bookkeeping.generation())).toBe(false);
    expect(await feeds()).toEqual(before);
    expect(pageCacheSize(d.ctx).builds).toBe(builds);
    expect(listsBuilt).toBe(lists);
  });

  it('sends the reading states due at the end of a session, stamped as reading state: the lists stay kept', async () => {
    const [read] = shelf as [number];
    await d.store.readingState.db
      .insertInto('user_book_progress')
      .values({ user_id: user.id, book_id: read, read_status: 'READ', read_status_modified_time: new Date().toISOString() })
      .execute();
    await feeds();
    const catalog = d.store.generation();
    const reading = d.store.readingState.generation();
    const lists = listsBuilt;

    const sync = await syncAll(deviceToken);
    const states = sync.items.filter((item) => 'ChangedReadingState' in item).map((item) => item.ChangedReadingState.ReadingState);
    expect(states.map((s: Json) => [s.EntitlementId, s.StatusInfo.Status])).toEqual([[String(read), 'Finished']]);
    // Stamped as sent: the next session has none due.
    const next = await syncAll(sync.token);
    expect(next.items.filter((item) => 'ChangedReadingState' in item)).toEqual([]);
    deviceToken = next.token;

    expect(sameGeneration(catalog, d.store.generation())).toBe(true);
    expect(sameGeneration(reading, d.store.readingState.generation())).toBe(false);
    await feeds();
    expect(listsBuilt).toBe(lists);
  });

  it('still follows the catalog when it really changes, and the feeds show the change', async () => {
    // The newest book: on the first page of the feeds listed newest first.
    const renamed = shelf.at(-1) as number;
    const gone = shelf[2] as number;
    await feeds();
    const { builds } = pageCacheSize(d.ctx);
    await d.store.db.updateTable('book_metadata').set({ title: 'Aaa Renamed Book' }).where('book_id', '=', renamed).execute();
    await d.store.db.updateTable('book').set({ metadata_updated_at: '2031-01-01T00:00:00.000Z' }).where('id', '=', renamed).execute();
    await d.store.db.deleteFrom('book_shelf_mapping').where('shelf_id', '=', shelfId).where('book_id', '=', gone).execute();

    const sync = await syncAll(deviceToken);
    expect(idsOf(sync.items, 'ChangedProductMetadata')).toEqual([renamed]);
    expect(sync.items.find((item) => 'ChangedProductMetadata' in item)?.ChangedProductMetadata.BookMetadata.Title).toBe('Aaa Renamed Book');
    expect(idsOf(sync.items, 'ChangedEntitlement')).toEqual([gone]);
    deviceToken = sync.token;

    const pages = await feeds();
    expect(pageCacheSize(d.ctx).builds).toBeGreaterThan(builds);
    // OPDS 1.2, OPDS 2.0 and the app API list the newest first (Komga and /books/page sort by keys this edit leaves).
    expect(pages.map((page) => page.includes('Aaa Renamed Book'))).toEqual([true, true, false, true, false]);
  });

  it('is bookkeeping for another replica too, which keeps its catalog generation (PostgreSQL: its own NOTIFY channel)', async () => {
    const catalog = other.generation();
    const bookkeeping = other.bookkeeping.generation();
    const back = shelf[2] as number;
    await d.store.db.insertInto('book_shelf_mapping').values({ book_id: back, shelf_id: shelfId }).execute();
    await moved(() => other.generation(), catalog);
    const afterChange = other.generation();
    // A session that writes a new snapshot (the book is back on the shelf) and finishes.
    const sync = await syncAll(deviceToken);
    expect(idsOf(sync.items, 'NewEntitlement')).toEqual([back]);
    await moved(() => other.bookkeeping.generation(), bookkeeping);
    // SQLite's data_version counts any commit to the file: another connection cannot tell bookkeeping apart.
    if (d.store.engine === 'postgres') expect(sameGeneration(afterChange, other.generation())).toBe(true);
  });
});
