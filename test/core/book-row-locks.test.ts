// Two writers of one book at once, each from its own connection, the way a bulk metadata edit and the match score
// recomputed after the edit before it meet: one writes the book's tags and then its row in a transaction, the other
// updates the row in one statement between the two. Both must succeed (they once took the book's row and its version
// row in opposite orders, and PostgreSQL ended one of them with a deadlock error). PostgreSQL only: SQLite has no row
// locks (a write transaction holds the whole database), and both connections of this test would share one thread
// there, the second waiting for the first without end.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { onPostgres } from '../helpers/engine.ts';

let dir: string;
let first: Store;
let second: Store;
let bookId: number;
let tagId: number;

beforeAll(async () => {
  if (!onPostgres) return;
  dir = mkdtempSync(join(tmpdir(), 'bindery-row-locks-'));
  const path = join(dir, 'catalog.sqlite');
  first = await openStore(path);
  second = await openStore(path);
  const libraryId = await seedLibrary(first.db, dir, 'Books');
  bookId = (await seedBook(first.db, libraryId, { title: 'Dune' })).bookId;
  tagId = (await first.db.insertInto('tag').values({ name: 'Classic' }).returning('id').executeTakeFirstOrThrow()).id;
});

afterAll(async () => {
  await second?.close();
  await first?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const version = async (): Promise<number> => (await first.db.selectFrom('book_version').select('version').where('book_id', '=', bookId).executeTakeFirst())?.version ?? 0;

describe.skipIf(!onPostgres)("a book's rows written from two connections at once", () => {
  it("lets a transaction that writes a book's tags and then its row, and an update of the row between the two, both finish", async () => {
    const before = await version();
    let scored: Promise<unknown> | undefined;
    await first.db.transaction().execute(async (trx) => {
      await trx.insertInto('book_metadata_tag_mapping').values({ book_id: bookId, tag_id: tagId }).execute();
      // The other connection's update starts now and waits for this transaction's lock on the book's row.
      scored = second.db.updateTable('book').set({ metadata_match_score: 42 }).where('id', '=', bookId).execute();
      await new Promise((resolve) => setTimeout(resolve, 300));
      await trx.updateTable('book').set({ metadata_updated_at: new Date().toISOString() }).where('id', '=', bookId).execute();
    });
    await scored;
    const row = await first.db.selectFrom('book').select('metadata_match_score').where('id', '=', bookId).executeTakeFirstOrThrow();
    expect(row.metadata_match_score).toBe(42);
    const tags = await first.db.selectFrom('book_metadata_tag_mapping').select('tag_id').where('book_id', '=', bookId).execute();
    expect(tags.map((t) => t.tag_id)).toEqual([tagId]);
    // The tag, the row's listed column (the score): the version moved with each.
    expect(await version()).toBeGreaterThanOrEqual(before + 2);
  });
});
