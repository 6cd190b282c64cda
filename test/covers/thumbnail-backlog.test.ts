// Thumbnails a scan leaves to be made: made when first asked and kept, made by the backlog job, kept in the catalog's
// queue across a restart, made again for a replaced cover; and the daemon's background job.
import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { coverFile } from '../../src/core/covers/cover-store.ts';
import { ensureThumbnail, makePendingThumbnails, pendingThumbnailCount } from '../../src/core/covers/thumbnail-backlog.ts';
import { createLibrary, findLibrary, type Library } from '../../src/core/libraries/libraries.ts';
import { coverResource } from '../../src/core/media/cover-media.ts';
import { scanLibrary } from '../../src/core/scan/scanner.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { runCli } from '../helpers/cli.ts';
import { makeTempLibrary, writeSimpleEpub, type TempLibrary } from '../helpers/library-fixtures.ts';
import { startAdminDaemon, until } from '../helpers/served-daemon.ts';

let lib: TempLibrary;
let store: Store;
let covers: string;
const catalogPath = (): string => join(lib.dataDir, 'bindery.sqlite');

beforeEach(async () => {
  lib = makeTempLibrary();
  covers = join(lib.dataDir, 'covers');
  store = await openStore(catalogPath());
});

afterEach(async () => {
  await store.close();
  lib.cleanup();
});

async function library(): Promise<Library> {
  return createLibrary(store.db, { name: 'books', paths: [lib.root], organizationMode: 'BOOK_PER_FILE' });
}

/** Three books with covers of different colours, scanned; their ids by title. */
async function scanThree(): Promise<Record<string, number>> {
  for (const [title, colour] of [['Red', '#c22'], ['Green', '#2c2'], ['Blue', '#22c']] as const) {
    await writeSimpleEpub(lib.path(`${title}.epub`), { title, authors: ['A. Painter'], cover: colour });
  }
  const summary = await scanLibrary(store, await library(), { coversRoot: covers, workers: 0 });
  expect(summary).toMatchObject({ added: 3, failed: [], thumbnailsPending: 3 });
  const rows = await store.db.selectFrom('book_metadata').select(['book_id', 'title']).execute();
  return Object.fromEntries(rows.map((r) => [r.title as string, r.book_id]));
}

const thumbnailOf = (bookId: number): string => coverFile(covers, bookId, 'book', 'thumbnail');

/** The colour in the middle of an image file. */
async function middle(path: string): Promise<[number, number, number]> {
  const { data, info } = await sharp(path).raw().toBuffer({ resolveWithObject: true });
  const at = (Math.floor(info.height / 2) * info.width + Math.floor(info.width / 2)) * info.channels;
  return [data[at]!, data[at + 1]!, data[at + 2]!];
}

describe('thumbnails left by a scan', () => {
  it('stores each cover and queues its thumbnail, which a request then makes at once and keeps', async () => {
    const ids = await scanThree();
    for (const id of Object.values(ids)) {
      expect(existsSync(coverFile(covers, id, 'book', 'cover'))).toBe(true);
      expect(existsSync(thumbnailOf(id))).toBe(false);
    }
    const asked = await coverResource(store.db, covers, ids.Green!, 'book', 'thumbnail');
    expect(asked).toMatchObject({ kind: 'file', path: thumbnailOf(ids.Green!) });
    const made = await sharp(thumbnailOf(ids.Green!)).metadata();
    expect([made.format, made.width, made.height]).toEqual(['jpeg', 233, 350]);
    const [r, g, b] = await middle(thumbnailOf(ids.Green!));
    expect(g).toBeGreaterThan(150);
    expect(r + b).toBeLessThan(200);
    // Kept: asked again, the same file is served, not made anew.
    const mtime = statSync(thumbnailOf(ids.Green!)).mtimeMs;
    const again = await coverResource(store.db, covers, ids.Green!, 'book', 'thumbnail');
    expect(again.etag).toBe(asked.etag);
    expect(statSync(thumbnailOf(ids.Green!)).mtimeMs).toBe(mtime);

    // The backlog makes the other two, settles all three rows, and leaves the one already made as it was.
    expect(await makePendingThumbnails(store, covers)).toBe(2);
    expect(await pendingThumbnailCount(store)).toBe(0);
    expect(statSync(thumbnailOf(ids.Green!)).mtimeMs).toBe(mtime);
    for (const id of Object.values(ids)) expect((await sharp(thumbnailOf(id)).metadata()).height).toBe(350);
  });

  it('shares one making between concurrent requests for the same thumbnail', async () => {
    const ids = await scanThree();
    const states = await Promise.all([1, 2, 3, 4].map(() => ensureThumbnail(covers, ids.Red!, 'book')));
    expect(states).toEqual(['made', 'made', 'made', 'made']);
    expect(await ensureThumbnail(covers, ids.Red!, 'book')).toBe('present');
  });

  it('keeps the queue across a restart', async () => {
    await scanThree();
    await store.close();
    store = await openStore(catalogPath());
    expect(await pendingThumbnailCount(store)).toBe(3);
    expect(await makePendingThumbnails(store, covers, { concurrency: 2 })).toBe(3);
    expect(await pendingThumbnailCount(store)).toBe(0);
  });

  it('drops the stale thumbnail of a replaced cover and queues the new one', async () => {
    const ids = await scanThree();
    await makePendingThumbnails(store, covers);
    expect((await middle(thumbnailOf(ids.Blue!)))[2]).toBeGreaterThan(150);
    // The book's file changes, with a yellow cover now.
    await writeSimpleEpub(lib.path('Blue.epub'), { title: 'Blue', authors: ['A. Painter'], cover: '#cc2', body: 'repainted' });
    const later = new Date(Date.now() + 5000);
    utimesSync(lib.path('Blue.epub'), later, later);
    const summary = await scanLibrary(store, await findLibrary(store.db, 'books'), { coversRoot: covers, workers: 0 });
    expect(summary).toMatchObject({ updated: 1, thumbnailsPending: 1 });
    expect(existsSync(thumbnailOf(ids.Blue!))).toBe(false);
    await makePendingThumbnails(store, covers);
    const [r, g, b] = await middle(thumbnailOf(ids.Blue!));
    expect(r).toBeGreaterThan(150);
    expect(g).toBeGreaterThan(150);
    expect(b).toBeLessThan(100);
  });

  it('removes a cover that cannot be decoded, so the book shows no cover rather than a broken one', async () => {
    const ids = await scanThree();
    const cover = coverFile(covers, ids.Red!, 'book', 'cover');
    // A JPEG whose header is sound and whose image data is cut off.
    const bytes = readFileSync(cover);
    writeFileSync(cover, bytes.subarray(0, Math.floor(bytes.length / 3)));
    expect(await makePendingThumbnails(store, covers)).toBe(2);
    expect(existsSync(cover)).toBe(false);
    expect(await pendingThumbnailCount(store)).toBe(0);
    expect((await coverResource(store.db, covers, ids.Red!, 'book', 'thumbnail')).kind).toBe('placeholder');
  });
});

describe('bindery scan and bindery serve', () => {
  it('scan --json says how many thumbnails are left; --thumbnails makes them before returning', async () => {
    await store.close();
    for (const title of ['One', 'Two']) await writeSimpleEpub(lib.path(`${title}.epub`), { title, authors: ['A. Painter'], cover: '#48c' });
    const env = { BINDERY_DATA_DIR: lib.dataDir, BINDERY_FROM_SOURCE: '1' };
    expect((await runCli(['library', 'add', 'books', lib.root, '--mode', 'BOOK_PER_FILE'], { env })).code).toBe(0);
    const first = await runCli(['scan', 'books', '--json'], { env });
    expect(JSON.parse(first.stdout)).toMatchObject({ added: 2, thumbnailsPending: 2 });
    await writeSimpleEpub(lib.path('Three.epub'), { title: 'Three', authors: ['A. Painter'], cover: '#48c' });
    const second = await runCli(['scan', 'books', '--thumbnails', '--json'], { env });
    expect(JSON.parse(second.stdout)).toMatchObject({ added: 1, thumbnailsPending: 0 });
    store = await openStore(catalogPath());
    for (const { id } of await store.db.selectFrom('book').select('id').execute()) expect(existsSync(thumbnailOf(id))).toBe(true);
  });

  it('serve makes the thumbnails a scan left, in the background', async () => {
    const ids = await scanThree();
    await store.close();
    const { daemon } = await startAdminDaemon(lib.dataDir);
    try {
      await until('the thumbnails', () => Object.values(ids).every((id) => existsSync(thumbnailOf(id))));
      store = await openStore(catalogPath());
      await until('the queue settled', async () => (await pendingThumbnailCount(store)) === 0);
    } finally {
      await daemon.stop();
    }
  });
});
