// The paging invariants of a Kobo library sync, on a real catalog: over the pages a device accepts, every book of the
// session comes exactly once (none lost, none repeated), whatever happens between two pages: the device retries a page
// whose answer it lost, gives up and comes back, the shelf changes, a second device of the user syncs at the same
// time, the server restarts.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPrincipal, type Principal } from '../../src/core/auth/principal.ts';
import { koboShelfId } from '../../src/core/kobo/kobo-shelf.ts';
import { finishSync, localSyncPage, nextToken, type LocalPage } from '../../src/core/kobo/library-sync.ts';
import { koboServerSettings } from '../../src/core/kobo/server-settings.ts';
import { koboSettingsFor, updateKoboSettings } from '../../src/core/kobo/sync-settings.ts';
import { decodeSyncToken, emptySyncToken, encodeSyncToken, type SyncToken } from '../../src/core/kobo/sync-token.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { createUser } from '../../src/core/users/users.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const KINDS = { NewEntitlement: 'new', ChangedProductMetadata: 'changed', ChangedEntitlement: 'removed' } as const;
type Kind = (typeof KINDS)[keyof typeof KINDS];

let tmp: TempDir;
let catalogPath: string;
let store: Store;
let userId: number;
let libraryId: number;
let shelfId: number;
const shelf: number[] = [];

/** A device: the token it holds and every book it accepted, by kind, in the order received. */
class Device {
  token: SyncToken = emptySyncToken();
  received: Record<Kind, number[]> = { new: [], changed: [], removed: [] };

  /** Asks for the next page; `lose` drops the answer on the way (the device keeps its token and will ask again). */
  async page(options: { lose?: boolean } = {}): Promise<LocalPage> {
    const principal = (await loadPrincipal(store.db, userId)) as Principal;
    const server = { ...(await koboServerSettings(store.db)), forwardToKoboStore: false };
    // The token goes over the wire each time, as a device sends it back.
    const token = decodeSyncToken(encodeSyncToken(this.token));
    const page = await localSyncPage({ store, principal, settings: await koboSettingsFor(store.db, userId), server, urls: { koboBase: 'http://kobo.test/api/kobo/t' }, token });
    if (!page.more) await finishSync(store, userId, page);
    if (options.lose) return page;
    for (const item of page.items as Json[]) {
      for (const [key, kind] of Object.entries(KINDS)) if (key in item) this.received[kind].push(Number(item[key].BookEntitlement.Id));
    }
    this.token = nextToken(token, page, page.more);
    return page;
  }

  /** Pages until the server says the session is over. */
  async finish(): Promise<void> {
    for (let i = 0; i < 50; i++) if (!(await this.page()).more) return;
    throw new Error('endless session');
  }

  take(): Record<Kind, number[]> {
    const out = this.received;
    this.received = { new: [], changed: [], removed: [] };
    return out;
  }
}

const bookIds = (page: LocalPage): number[] => (page.items as Json[]).flatMap((item) => Object.keys(KINDS).filter((k) => k in item).map((k) => Number(item[k].BookEntitlement.Id)));

/** The ids sorted, duplicates kept: compared with a sorted list without duplicates, a repeat or a gap fails. */
const sorted = (ids: readonly number[]): number[] => [...ids].sort((a, b) => a - b);

async function addToShelf(count: number, title: string): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) ids.push((await seedBook(store.db, libraryId, { title: `${title} ${i}`, authors: ['A'] })).bookId);
  await store.db.insertInto('book_shelf_mapping').values(ids.map((book_id) => ({ book_id, shelf_id: shelfId }))).execute();
  shelf.push(...ids);
  return ids;
}

async function takeOffShelf(ids: readonly number[]): Promise<void> {
  await store.db.deleteFrom('book_shelf_mapping').where('shelf_id', '=', shelfId).where('book_id', 'in', [...ids]).execute();
  for (const id of ids) shelf.splice(shelf.indexOf(id), 1);
}

async function touch(ids: readonly number[], at: string): Promise<void> {
  await store.db.updateTable('book').set({ metadata_updated_at: at }).where('id', 'in', [...ids]).execute();
}

beforeAll(async () => {
  tmp = makeTempDir();
  catalogPath = join(tmp.dir, 'catalog.sqlite');
  store = await openStore(catalogPath);
  libraryId = await seedLibrary(store.db, tmp.dir, 'Main');
  userId = await createUser(store.db, { username: 'reader', password: 'reader-password', name: 'Reader', permissions: { canSyncKobo: true }, libraryIds: [libraryId] });
  await updateKoboSettings(store.db, userId, { syncEnabled: true });
  shelfId = (await koboShelfId(store.db, userId)) as number;
  await addToShelf(230, 'Book');
}, 120_000);

afterAll(async () => {
  await store?.close();
  tmp?.remove();
});

describe('a Kobo sync session pages through its books exactly once', () => {
  const reader = new Device();

  it('gives the same page again to a device retrying a token whose answer it lost, the last page included', async () => {
    const first = await reader.page({ lose: true });
    expect(first.more).toBe(true);
    const again = await reader.page();
    expect(bookIds(again)).toEqual(bookIds(first));
    await reader.page({ lose: true });
    await reader.page();
    // The last page: finishing the session must not keep its retry from giving the same books.
    const last = await reader.page({ lose: true });
    expect(last.more).toBe(false);
    const lastAgain = await reader.page();
    expect(lastAgain.more).toBe(false);
    expect(reader.take().new).toEqual(sorted(shelf));

    // The same with changes and removals on the last page.
    await touch(shelf.slice(0, 5), '2031-01-01T00:00:00.000Z');
    const gone = shelf.slice(10, 13);
    await takeOffShelf(gone);
    const lostEnd = await reader.page({ lose: true });
    expect(lostEnd.more).toBe(false);
    await reader.page();
    expect(reader.take()).toEqual({ new: [], changed: shelf.slice(0, 5), removed: gone });
  });

  it('resumes an aborted session where the device stopped, however long it stayed away', async () => {
    const added = await addToShelf(120, 'Late');
    const changed = shelf.slice(20, 160);
    await touch(changed, '2032-01-01T00:00:00.000Z');
    const gone = shelf.slice(160, 175);
    await takeOffShelf(gone);
    await reader.page();
    await reader.page();
    // The device gives up here; a new device object holding its token comes back later.
    const back = new Device();
    back.token = reader.token;
    back.received = reader.take();
    await back.finish();
    const got = back.take();
    expect(sorted(got.new)).toEqual(added);
    expect(sorted(got.changed)).toEqual(changed.filter((id) => !gone.includes(id)));
    expect(sorted(got.removed)).toEqual(gone);
    reader.token = back.token;
  });

  it('keeps its books when the shelf changes between two pages; the change comes with the next session', async () => {
    const changed = shelf.slice(0, 150);
    await touch(changed, '2033-01-01T00:00:00.000Z');
    await reader.page();
    // Between the first and the second page: a book is added, one not yet sent leaves the shelf, one not yet sent
    // changes again, one already sent changes again.
    const late = await addToShelf(1, 'Mid-session');
    const notYetSent = changed.filter((id) => !reader.received.changed.includes(id));
    const leaving = notYetSent[0] as number;
    const changingAgain = notYetSent[1] as number;
    const sentThenChanged = reader.received.changed[0] as number;
    await takeOffShelf([leaving]);
    await touch([changingAgain, sentThenChanged], '2034-01-01T00:00:00.000Z');
    await reader.finish();
    const got = reader.take();
    // The session hands out exactly what its snapshot held, each once.
    expect(sorted(got.changed)).toEqual(changed);
    expect(got.new).toEqual([]);
    // The next one brings what changed meanwhile.
    await reader.finish();
    const next = reader.take();
    expect(next.new).toEqual(late);
    expect(sorted(next.changed)).toEqual(sorted([changingAgain, sentThenChanged]));
    expect(next.removed).toEqual([leaving]);
    await reader.finish();
    expect(reader.take()).toEqual({ new: [], changed: [], removed: [] });
  });

  it('pages two devices of one user independently, each getting every book once, and each hearing of later changes', async () => {
    const a = new Device();
    const b = new Device();
    // Interleaved, and the second device starts while the first is mid-session.
    await a.page();
    await b.page();
    await a.page();
    await b.page();
    await a.finish();
    await b.finish();
    expect(sorted(a.take().new)).toEqual(sorted(shelf));
    expect(sorted(b.take().new)).toEqual(sorted(shelf));

    const gone = shelf.slice(0, 3);
    await takeOffShelf(gone);
    const added = await addToShelf(2, 'For both');
    await a.finish();
    // A synced twice more since B's last session: B's reference snapshot must still be there.
    await touch(shelf.slice(5, 6), '2035-01-01T00:00:00.000Z');
    await a.finish();
    await b.finish();
    const gotA = a.take();
    const gotB = b.take();
    expect(gotA).toEqual({ new: added, changed: shelf.slice(5, 6), removed: gone });
    expect(gotB).toEqual({ new: added, changed: shelf.slice(5, 6), removed: gone });
  });

  it('resumes after a server restart mid-session', async () => {
    // Catch up with what the other devices' test changed.
    await reader.finish();
    reader.take();
    const changed = shelf.slice(30, 250);
    await touch(changed, '2036-01-01T00:00:00.000Z');
    await reader.page();
    await store.close();
    store = await openStore(catalogPath);
    await reader.finish();
    expect(sorted(reader.take().changed)).toEqual(changed);
  });
});
