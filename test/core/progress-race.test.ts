// Progress reports for one book arriving at the same instant through two connections to the catalog (two replicas
// on PostgreSQL, two processes on SQLite): whatever the order they commit in, the answer is one a serial order gives.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordProgress } from '../../src/core/reading/progress.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { createUser } from '../../src/core/users/users.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { onPostgres } from '../helpers/engine.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

const ROUNDS = 12;

let tmp: TempDir;
let first: Store;
let second: Store;
let userId: number;
let books: { bookId: number; fileId: number }[];

beforeAll(async () => {
  if (!onPostgres) return;
  tmp = makeTempDir('bindery-progress-race-');
  first = await openStore(tmp.file('catalog.sqlite'));
  second = await openStore(tmp.file('catalog.sqlite'));
  const library = await seedLibrary(first.db, tmp.dir, 'lib');
  userId = await createUser(first.db, { username: 'racer', password: 'racer-password', name: 'Racer', permissions: {}, libraryIds: [library] });
  books = [];
  for (let i = 0; i < ROUNDS; i++) {
    const { bookId, fileIds } = await seedBook(first.db, library, { title: `Race ${i}` });
    books.push({ bookId, fileId: fileIds[0] as number });
  }
});

afterAll(async () => {
  await first?.close();
  await second?.close();
  tmp?.remove();
});

const report = (store: Store, book: { bookId: number; fileId: number }, percent: number) =>
  recordProgress(store.db, userId, { bookId: book.bookId, fileProgress: { bookFileId: book.fileId, positionData: null, positionHref: null, progressPercent: percent } });

// PostgreSQL only: two SQLite connections in one process cannot overlap writes (the second waits for the write lock by
// blocking the thread the first needs to finish), and across processes SQLite's one write lock serialises them anyway.
describe.runIf(onPostgres)('progress reports racing through two connections', () => {
  it('never lets a report decided on a stale status undo a finish', async () => {
    // A finish (100 %) and an untouched position (0 %) at once: in either serial order the book ends READ, as a 0 %
    // report keeps a status the reader already has. Deciding on what was read before the other committed gives UNREAD.
    await Promise.all(books.map((book) => Promise.all([report(first, book, 100), report(second, book, 0)])));
    const rows = await first.db.selectFrom('user_book_progress').select(['book_id', 'read_status', 'date_finished']).where('user_id', '=', userId).execute();
    expect(rows).toHaveLength(ROUNDS);
    for (const row of rows) {
      expect(row.read_status, `book ${row.book_id}`).toBe('READ');
      expect(row.date_finished, `book ${row.book_id}`).not.toBeNull();
    }
  });
});
