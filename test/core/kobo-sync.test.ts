// Library sync planning on a real catalog: pages of at most 100, new books before changed before removed, sessions that
// resume and finish, auto-add; and the pure parts: sync tokens, Kobo timestamps, reading-state mapping and merging.
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPrincipal, type Principal } from '../../src/core/auth/principal.ts';
import { javaStringHash } from '../../src/core/kobo/java-hash.ts';
import { koboShelfId } from '../../src/core/kobo/kobo-shelf.ts';
import { koboTimeOf, koboTimestamp, normalizeKoboTime, parseKoboTime } from '../../src/core/kobo/kobo-time.ts';
import { finishSync, localSyncPage, nextToken } from '../../src/core/kobo/library-sync.ts';
import {
  keepsBinderyStatus,
  koboStatusOf,
  mergeStates,
  parseDeviceState,
  statusFromKoboPercent,
  statusInfoFromProgress,
  webReaderIsNewer,
  type ProgressForKobo,
} from '../../src/core/kobo/reading-state.ts';
import { koboServerSettings } from '../../src/core/kobo/server-settings.ts';
import { locate } from '../../src/core/kobo/span-locations.ts';
import { koboSettingsFor, updateKoboSettings } from '../../src/core/kobo/sync-settings.ts';
import { decodeSyncToken, emptySyncToken, encodeSyncToken, type SyncToken } from '../../src/core/kobo/sync-token.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { createUser } from '../../src/core/users/users.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let tmp: TempDir;
let store: Store;
let userId: number;
let libraryId: number;
let shelfId: number;
const epubs: number[] = [];
let lastToken: SyncToken = emptySyncToken();

async function principal(): Promise<Principal> {
  return (await loadPrincipal(store.db, userId)) as Principal;
}

interface Session {
  pages: Json[][];
  token: SyncToken;
}

/**
 * A device session as the route runs it (no store forwarding): pages until the server stops saying `continue`. A
 * finished session's token becomes the device's (`lastToken`).
 */
async function session(start: SyncToken = lastToken, options: { stopAfter?: number } = {}): Promise<Session> {
  const server = { ...(await koboServerSettings(store.db)), forwardToKoboStore: false };
  const pages: Json[][] = [];
  let token = start;
  for (let i = 0; i < 50; i++) {
    const settings = await koboSettingsFor(store.db, userId);
    const page = await localSyncPage({ store, principal: await principal(), settings, server, urls: { koboBase: 'http://kobo.test/api/kobo/t' }, token });
    pages.push(page.items as Json[]);
    if (!page.more) await finishSync(store, userId, page);
    token = nextToken(token, page, page.more);
    if (!page.more) lastToken = token;
    if (!page.more || pages.length === options.stopAfter) return { pages, token };
  }
  throw new Error('endless session');
}

const ids = (items: Json[], kind: string): number[] => items.filter((i) => kind in i).map((i) => Number(i[kind].BookEntitlement.Id));
const bookCount = (items: Json[]): number => ids(items, 'NewEntitlement').length + ids(items, 'ChangedProductMetadata').length + ids(items, 'ChangedEntitlement').length;

beforeAll(async () => {
  tmp = makeTempDir();
  store = await openStore(join(tmp.dir, 'catalog.sqlite'));
  libraryId = await seedLibrary(store.db, tmp.dir, 'Main');
  userId = await createUser(store.db, { username: 'reader', password: 'reader-password', name: 'Reader', permissions: { canSyncKobo: true }, libraryIds: [libraryId] });
  for (let i = 0; i < 250; i++) epubs.push((await seedBook(store.db, libraryId, { title: `Book ${i}`, authors: ['A'] })).bookId);
  const pdfs = [];
  for (let i = 0; i < 5; i++) pdfs.push((await seedBook(store.db, libraryId, { title: `Paper ${i}`, types: ['PDF'] })).bookId);
  await updateKoboSettings(store.db, userId, { syncEnabled: true });
  shelfId = (await koboShelfId(store.db, userId)) as number;
  await store.db.insertInto('book_shelf_mapping').values([...epubs, ...pdfs].map((book_id) => ({ book_id, shelf_id: shelfId }))).execute();
}, 120_000);

afterAll(async () => {
  await store?.close();
  tmp?.remove();
});

describe('library sync sessions', () => {
  it('sends every EPUB of the shelf once, 100 per page, and nothing else', async () => {
    const { pages, token } = await session();
    expect(pages.map(bookCount)).toEqual([100, 100, 50]);
    expect(new Set(pages.flatMap((p) => ids(p, 'NewEntitlement')))).toEqual(new Set(epubs));
    expect(token.ongoingSyncPointId).toBeNull();
    expect(token.lastSuccessfulSyncPointId).toEqual(expect.any(String));
    lastToken = token;
    // Nothing changed: the snapshot is reused, nothing is written.
    const rows = async (): Promise<number> => Number((await store.exec.get('SELECT count(*) AS n FROM kobo_library_snapshot_book'))?.n);
    const before = await rows();
    const idle = await session();
    expect(idle.pages.map(bookCount)).toEqual([0]);
    expect(idle.token.lastSuccessfulSyncPointId).toBe(token.lastSuccessfulSyncPointId);
    expect(await rows()).toBe(before);
  });

  it('sends new books, then changed ones, then removals, each page at most 100, each book once', async () => {
    const added: number[] = [];
    for (let i = 0; i < 30; i++) added.push((await seedBook(store.db, libraryId, { title: `New ${i}` })).bookId);
    await store.db.insertInto('book_shelf_mapping').values(added.map((book_id) => ({ book_id, shelf_id: shelfId }))).execute();
    const changed = epubs.slice(0, 150);
    await store.db.updateTable('book').set({ metadata_updated_at: new Date().toISOString() }).where('id', 'in', changed).execute();
    const removed = epubs.slice(100, 220);
    await store.db.deleteFrom('book_shelf_mapping').where('shelf_id', '=', shelfId).where('book_id', 'in', removed).execute();

    const { pages, token } = await session();
    for (const page of pages) expect(bookCount(page)).toBeLessThanOrEqual(100);
    const order = pages.flatMap((page) => page.flatMap((item) => Object.keys(item).filter((k) => k !== 'ChangedTag' && k !== 'DeletedTag' && k !== 'ChangedReadingState')));
    const firstChanged = order.indexOf('ChangedProductMetadata');
    const firstRemoved = order.indexOf('ChangedEntitlement');
    expect(order.lastIndexOf('NewEntitlement')).toBeLessThan(firstChanged);
    expect(order.lastIndexOf('ChangedProductMetadata')).toBeLessThan(firstRemoved);
    expect(pages.flatMap((p) => ids(p, 'NewEntitlement')).sort((a, b) => a - b)).toEqual(added);
    expect(pages.flatMap((p) => ids(p, 'ChangedProductMetadata')).sort((a, b) => a - b)).toEqual(changed.filter((id) => !removed.includes(id)));
    expect(pages.flatMap((p) => ids(p, 'ChangedEntitlement')).sort((a, b) => a - b)).toEqual(removed);
    expect(pages.map(bookCount).reduce((a, b) => a + b, 0)).toBe(30 + 100 + 120);
    lastToken = token;
    expect((await session()).pages.map(bookCount)).toEqual([0]);
  });

  it('does not stop at a page that is exactly full while changes wait', async () => {
    const added: number[] = [];
    for (let i = 0; i < 100; i++) added.push((await seedBook(store.db, libraryId, { title: `Batch ${i}` })).bookId);
    await store.db.insertInto('book_shelf_mapping').values(added.map((book_id) => ({ book_id, shelf_id: shelfId }))).execute();
    await store.db.updateTable('book').set({ metadata_updated_at: '2030-01-01T00:00:00.000Z' }).where('id', '=', epubs[0] as number).execute();
    const { pages, token } = await session();
    expect(pages.map(bookCount)).toEqual([100, 1]);
    expect(ids(pages[1] as Json[], 'ChangedProductMetadata')).toEqual([epubs[0]]);
    lastToken = token;
  });

  it('resumes an interrupted session where it stopped, and treats an unknown token as a first sync', async () => {
    await store.db.updateTable('book').set({ metadata_updated_at: '2031-01-01T00:00:00.000Z' }).where('id', 'in', epubs.slice(220, 250)).execute();
    const moreBooks: number[] = [];
    for (let i = 0; i < 120; i++) moreBooks.push((await seedBook(store.db, libraryId, { title: `Late ${i}` })).bookId);
    await store.db.insertInto('book_shelf_mapping').values(moreBooks.map((book_id) => ({ book_id, shelf_id: shelfId }))).execute();
    const reference = lastToken.lastSuccessfulSyncPointId;
    const interrupted = await session(lastToken, { stopAfter: 1 });
    expect(interrupted.token.ongoingSyncPointId).toEqual(expect.any(String));
    const resumed = await session(interrupted.token);
    const all = [...interrupted.pages, ...resumed.pages];
    expect(new Set(all.flatMap((p) => ids(p, 'NewEntitlement')))).toEqual(new Set(moreBooks));
    expect(all.flatMap((p) => ids(p, 'ChangedProductMetadata')).sort((a, b) => a - b)).toEqual(epubs.slice(220, 250));
    const before = resumed.token.lastSuccessfulSyncPointId;
    const fresh = await session(emptySyncToken());
    const onShelf = await store.db.selectFrom('book_shelf_mapping').select('book_id').where('shelf_id', '=', shelfId).execute();
    expect(fresh.pages.flatMap((p) => ids(p, 'NewEntitlement'))).toHaveLength(onShelf.length - 5);
    expect(fresh.pages.flatMap((p) => ids(p, 'ChangedEntitlement'))).toHaveLength(0);
    // A device starting over leaves alone the snapshots another device may still refer to; a finished session keeps
    // the one it was compared with (a lost last page is retried against it) until the device begins its next session.
    const left = (await store.db.selectFrom('kobo_library_snapshot').select('id').where('user_id', '=', userId).execute()).map((r) => r.id).sort();
    expect(left).toEqual([reference, before, fresh.token.lastSuccessfulSyncPointId].sort());
  });

  it('shelves books added while auto-add is on, once', async () => {
    await updateKoboSettings(store.db, userId, { syncEnabled: true, autoAddToShelf: true });
    const before = (await seedBook(store.db, libraryId, { title: 'Before' })).bookId;
    await updateKoboSettings(store.db, userId, { syncEnabled: true, autoAddToShelf: false });
    await updateKoboSettings(store.db, userId, { syncEnabled: true, autoAddToShelf: true });
    const after = (await seedBook(store.db, libraryId, { title: 'After' })).bookId;
    const paper = (await seedBook(store.db, libraryId, { title: 'Paper after', types: ['PDF'] })).bookId;
    const { pages, token } = await session();
    expect(pages.flatMap((p) => ids(p, 'NewEntitlement'))).toEqual([after]);
    const shelf = (await store.db.selectFrom('book_shelf_mapping').select('book_id').where('shelf_id', '=', shelfId).execute()).map((r) => r.book_id);
    expect(shelf).toContain(after);
    expect(shelf).not.toContain(before);
    expect(shelf).not.toContain(paper);
    await store.db.deleteFrom('book_shelf_mapping').where('shelf_id', '=', shelfId).where('book_id', '=', after).execute();
    const next = await session(token);
    expect(next.pages.flatMap((p) => ids(p, 'ChangedEntitlement'))).toEqual([after]);
    lastToken = next.token;
  });

  it('turning sync off deletes the shelf: the device is told to remove everything', async () => {
    await updateKoboSettings(store.db, userId, { syncEnabled: false });
    expect(await koboShelfId(store.db, userId)).toBeUndefined();
    const { pages } = await session();
    expect(pages.flatMap((p) => ids(p, 'NewEntitlement'))).toEqual([]);
    expect(pages.flatMap((p) => ids(p, 'ChangedEntitlement')).length).toBeGreaterThan(300);
  });
});

describe('which file of a book the snapshot takes', () => {
  it('takes the primary file as everywhere else: present files first, then the library’s format priority, then the oldest', async () => {
    const dir = makeTempDir();
    const catalog = await openStore(join(dir.dir, 'catalog.sqlite'));
    try {
      const usual = await seedLibrary(catalog.db, dir.dir, 'Usual');
      const pdfFirst = await seedLibrary(catalog.db, dir.dir, 'PDF first');
      await catalog.db.updateTable('library').set({ format_priority: JSON.stringify(['PDF', 'EPUB']) }).where('id', '=', pdfFirst).execute();
      const reader = await createUser(catalog.db, { username: 'picker', password: 'picker-password', name: 'Picker', permissions: { canSyncKobo: true }, libraryIds: [usual, pdfFirst] });
      await updateKoboSettings(catalog.db, reader, { syncEnabled: true });
      const shelf = (await koboShelfId(catalog.db, reader)) as number;
      const seed = async (library: number, title: string, types: string[], missing: number[] = []): Promise<{ bookId: number; fileIds: number[] }> => {
        const seeded = await seedBook(catalog.db, library, { title, types: types as never });
        for (const i of missing) await catalog.db.updateTable('book_file').set({ missing_at: '2026-01-01T00:00:00.000Z' }).where('id', '=', seeded.fileIds[i] as number).execute();
        await catalog.db.updateTable('book_file').set({ current_hash: sql`'hash-' || CAST(id AS text)` }).where('book_id', '=', seeded.bookId).execute();
        await catalog.db.insertInto('book_shelf_mapping').values({ book_id: seeded.bookId, shelf_id: shelf }).execute();
        return seeded;
      };
      const epubOverPdf = await seed(usual, 'EPUB ranks first', ['PDF', 'EPUB']);
      const pdfOverEpub = await seed(pdfFirst, 'PDF ranks first', ['EPUB', 'PDF']);
      const presentPdf = await seed(usual, 'Only the PDF is there', ['EPUB', 'PDF'], [0]);
      const allMissing = await seed(usual, 'Everything gone', ['PDF', 'EPUB'], [0, 1]);
      const twoEpubs = await seed(usual, 'Older EPUB gone', ['EPUB', 'EPUB'], [0]);
      const noFile = (await catalog.db.insertInto('book').values({ library_id: usual }).returning('id').executeTakeFirstOrThrow()).id;
      await catalog.db.insertInto('book_shelf_mapping').values({ book_id: noFile, shelf_id: shelf }).execute();

      const who = (await loadPrincipal(catalog.db, reader)) as Principal;
      const page = await localSyncPage({ store: catalog, principal: who, settings: await koboSettingsFor(catalog.db, reader), server: await koboServerSettings(catalog.db), urls: { koboBase: 'http://kobo.test/api/kobo/t' }, token: emptySyncToken() });
      expect(ids(page.items as Json[], 'NewEntitlement').sort((a, b) => a - b)).toEqual([epubOverPdf.bookId, allMissing.bookId, twoEpubs.bookId].sort((a, b) => a - b));
      expect([pdfOverEpub.bookId, presentPdf.bookId, noFile].some((id) => ids(page.items as Json[], 'NewEntitlement').includes(id))).toBe(false);
      const hashes = await catalog.db.selectFrom('kobo_library_snapshot_book').select(['book_id', 'file_hash', 'synced']).where('snapshot_id', '=', page.currentId).orderBy('book_id').execute();
      // Paging writes nothing: `synced` keeps saying what the device had when the snapshot was written (here nothing).
      expect(hashes).toEqual([
        { book_id: epubOverPdf.bookId, file_hash: `hash-${epubOverPdf.fileIds[1]}`, synced: 0 },
        { book_id: allMissing.bookId, file_hash: `hash-${allMissing.fileIds[1]}`, synced: 0 },
        { book_id: twoEpubs.bookId, file_hash: `hash-${twoEpubs.fileIds[1]}`, synced: 0 },
      ]);
      // The downloads announced are those of the same files.
      expect(page.downloads.map((d) => d.primary.id).sort((a, b) => a - b)).toEqual([epubOverPdf.fileIds[1], allMissing.fileIds[1], twoEpubs.fileIds[1]].sort((a, b) => (a as number) - (b as number)));
      expect(page.downloads.find((d) => d.primary.id === allMissing.fileIds[1])?.primary.missing).toBe(true);
    } finally {
      await catalog.close();
      dir.remove();
    }
  });
});

describe('sync tokens', () => {
  it('round-trip as BOOKLORE. + unpadded base64 of JSON', () => {
    const token = { ongoingSyncPointId: 'a', lastSuccessfulSyncPointId: null, rawKoboSyncToken: 'x.y' };
    const encoded = encodeSyncToken(token);
    expect(encoded.startsWith('BOOKLORE.')).toBe(true);
    expect(encoded).not.toContain('=');
    expect(JSON.parse(Buffer.from(encoded.slice(9), 'base64').toString())).toEqual(token);
    expect(decodeSyncToken(encoded)).toEqual(token);
  });

  it('read a store token as raw, and anything else as a first sync', () => {
    expect(decodeSyncToken('eyJhIjoxfQ.c2ln')).toEqual({ ongoingSyncPointId: null, lastSuccessfulSyncPointId: null, rawKoboSyncToken: 'eyJhIjoxfQ.c2ln' });
    for (const junk of [undefined, '', 'KOMGA', 'BOOKLORE.!!!', `BOOKLORE.${Buffer.from('[1]').toString('base64')}`]) expect(decodeSyncToken(junk)).toEqual(emptySyncToken());
  });
});

describe('Kobo time and names', () => {
  it('writes seven fraction digits and reads the spellings devices and catalogs use', () => {
    expect(koboTimestamp(new Date('2025-01-02T10:00:00.123Z'))).toBe('2025-01-02T10:00:00.1230000Z');
    expect(parseKoboTime('2025-01-02T10:00:00.1234567Z')?.toISOString()).toBe('2025-01-02T10:00:00.123Z');
    expect(parseKoboTime('2025-01-02T12:00:00+02:00')?.toISOString()).toBe('2025-01-02T10:00:00.000Z');
    expect(parseKoboTime('2025-01-02 10:00:00.5')?.toISOString()).toBe('2025-01-02T10:00:00.500Z');
    expect(parseKoboTime('null')).toBeUndefined();
    expect(normalizeKoboTime('2025-01-02T10:00:00.987Z')).toBe('2025-01-02T10:00:00.0000000Z');
    expect(normalizeKoboTime('whenever')).toBe('whenever');
  });

  it('spells catalog instants as through a Date, whatever their spelling', () => {
    const edges = ['2024-02-29', '2023-02-29', '2100-02-29', '2000-02-29', '2024-04-31', '2024-12-31', '2024-00-10', '2024-01-00', '2024-13-01', '0000-01-01'].map((day) => `${day}T12:00:00.000Z`);
    const times = ['24:00:00.000', '23:60:00.000', '23:59:60.000', '23:59:59.999', '00:00:00.000'].map((time) => `2024-03-01T${time}Z`);
    for (const value of ['2024-01-02T03:04:05.678Z', '2024-02-30T00:00:00.000Z', ...edges, ...times, '2024-01-02 03:04:05', '2024-01-02T03:04:05.6789+02:00', '', 'null', null, undefined]) {
      const date = parseKoboTime(value);
      expect(koboTimeOf(value)).toBe(date ? koboTimestamp(date) : undefined);
    }
    expect(koboTimeOf('2024-01-02T03:04:05.678Z')).toBe('2024-01-02T03:04:05.6780000Z');
    // Every month and day number (0-32) of four kinds of year, then every hour, minute and second number.
    const two = (n: number): string => String(n).padStart(2, '0');
    const days = ['2000', '2023', '2024', '2100'].flatMap((year) => Array.from({ length: 14 * 33 }, (_, i) => `${year}-${two(Math.floor(i / 33))}-${two(i % 33)}T23:59:59.999Z`));
    const clock = Array.from({ length: 100 }, (_, n) => [`2024-03-01T${two(n)}:00:00.000Z`, `2024-03-01T00:${two(n)}:00.000Z`, `2024-03-01T00:00:${two(n)}.000Z`]).flat();
    for (const value of [...days, ...clock]) {
      const date = parseKoboTime(value);
      expect(koboTimeOf(value)).toBe(date ? koboTimestamp(date) : undefined);
    }
  });

  it('names series as Java hashes them', () => {
    expect(javaStringHash('hello')).toBe(99162322);
    expect(javaStringHash('')).toBe(0);
  });
});

describe('reading state mapping', () => {
  const progress = (p: Partial<ProgressForKobo>): ProgressForKobo => ({
    read_status: null, read_status_modified_time: null, date_finished: null, last_read_time: null, epub_progress: null, epub_progress_href: null,
    epub_progress_percent: null, kobo_progress_percent: null, kobo_location: null, kobo_location_type: null, kobo_location_source: null,
    kobo_progress_received_time: null, kobo_progress_sent_time: null, kobo_status_sent_time: null, ...p,
  });

  it('maps statuses both ways with the user’s thresholds', () => {
    expect(['READ', 'READING', 'RE_READING', 'PARTIALLY_READ', 'PAUSED', 'UNREAD', 'WONT_READ', 'ABANDONED', 'UNSET', null].map(koboStatusOf)).toEqual([
      'Finished', 'Reading', 'Reading', 'Reading', 'Reading', 'ReadyToRead', 'ReadyToRead', 'ReadyToRead', 'ReadyToRead', 'ReadyToRead',
    ]);
    const defaults = { reading: 1, finished: 99 };
    expect([0, 0.5, 1, 50, 98.9, 99, 100].map((p) => statusFromKoboPercent(p, defaults))).toEqual(['UNREAD', 'UNREAD', 'READING', 'READING', 'READING', 'READ', 'READ']);
    expect(statusFromKoboPercent(90, { reading: 10, finished: 90 })).toBe('READ');
    expect(statusFromKoboPercent(5, { reading: 10, finished: 90 })).toBe('UNREAD');
    expect(statusInfoFromProgress(progress({ read_status: 'READ', date_finished: '2025-03-01T08:00:00.000Z' }), 'now')).toEqual({ LastModified: 'now', Status: 'Finished', TimesStartedReading: 1, LastTimeFinished: '2025-03-01T08:00:00.0000000Z' });
  });

  it('keeps a status set in Bindery until it reached the device, and for 10 s after', () => {
    const sent = '2025-01-01T10:00:00.000Z';
    expect(keepsBinderyStatus(progress({}), new Date())).toBe(false);
    expect(keepsBinderyStatus(progress({ read_status_modified_time: sent }), new Date())).toBe(true);
    expect(keepsBinderyStatus(progress({ read_status_modified_time: '2025-01-01T09:00:00.000Z', kobo_status_sent_time: sent }), new Date('2025-01-01T10:00:05Z'))).toBe(true);
    expect(keepsBinderyStatus(progress({ read_status_modified_time: '2025-01-01T09:00:00.000Z', kobo_status_sent_time: sent }), new Date('2025-01-01T10:00:11Z'))).toBe(false);
  });

  it('prefers the web reader only with two-way sync and when it is newer', () => {
    const p = progress({ epub_progress_percent: 40, last_read_time: '2025-01-02T00:00:00Z', kobo_progress_received_time: '2025-01-01T00:00:00Z' });
    expect(webReaderIsNewer(p, true)).toBe(true);
    expect(webReaderIsNewer(p, false)).toBe(false);
    expect(webReaderIsNewer({ ...p, kobo_progress_received_time: '2025-01-03T00:00:00Z' }, true)).toBe(false);
  });

  it('merges part by part, keeping whatever is newer', () => {
    const existing = { EntitlementId: '1', Created: 'c', LastModified: '2025-01-02T00:00:00Z', CurrentBookmark: { LastModified: '2025-01-02T00:00:00Z', ProgressPercent: 50 }, StatusInfo: { LastModified: '2025-01-01T00:00:00Z', Status: 'Reading' } };
    const merged = mergeStates(existing, { EntitlementId: '1', CurrentBookmark: { LastModified: '2025-01-01T00:00:00Z', ProgressPercent: 10 }, StatusInfo: { LastModified: '2025-01-03T00:00:00Z', Status: 'Finished' } });
    expect(merged.CurrentBookmark?.ProgressPercent).toBe(50);
    expect(merged.StatusInfo?.Status).toBe('Finished');
    expect(merged.PriorityTimestamp).toBe('2025-01-03T00:00:00.0000000Z');
  });

  it('places web positions in the KEPUB by chapter and percentage', () => {
    const map = {
      'OEBPS/one.xhtml': { ids: ['kobo.0.1', 'kobo.1.1', 'kobo.1.2'], offsets: [0, 10, 60], length: 100 },
      'OEBPS/Text/two%.xhtml': { ids: ['kobo.1.1', 'kobo.2.1'], offsets: [0, 50], length: 100 },
    };
    const p = progress({ epub_progress_percent: 80, epub_progress_href: 'Text/two%25.xhtml#frag' });
    expect(locate(map, p, undefined)).toEqual({ value: 'kobo.1.1', source: 'OEBPS/Text/two%.xhtml', chapterPercent: 0 });
    const file = { progress_percent: 80, content_source_progress_percent: 55, position_href: '/OEBPS/one.xhtml', position_data: null, last_read_time: null };
    expect(locate(map, p, file)).toEqual({ value: 'kobo.1.1', source: 'OEBPS/one.xhtml', chapterPercent: 55 });
    // No chapter named: the overall percentage over both chapters (75 % is half-way through the second).
    expect(locate(map, progress({ epub_progress_percent: 75 }), undefined)).toEqual({ value: 'kobo.2.1', source: 'OEBPS/Text/two%.xhtml', chapterPercent: 50 });
    expect(locate({}, p, undefined)).toBeUndefined();
  });

  it('reads device bodies defensively', () => {
    expect(parseDeviceState('x')).toBeUndefined();
    expect(parseDeviceState({ EntitlementId: 7, CurrentBookmark: { ProgressPercent: '50', Location: { Value: 'kobo.1.1', Extra: 1 } }, Junk: true })).toEqual({ EntitlementId: '7', CurrentBookmark: { Location: { Value: 'kobo.1.1' } } });
  });
});
