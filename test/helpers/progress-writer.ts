// A separate process that keeps writing reading progress, as a reader's devices do, until it is stopped. Each
// transaction adds a reading session numbered `seq` and sets the book's progress to the same `seq`, so a consistent
// copy of the catalog has its progress equal to its newest session. Writes through the store, so on either engine.
import { openStore } from '../../src/core/store/store.ts';

const [catalog, userArg, bookArg] = process.argv.slice(2);
const store = await openStore(catalog as string, { poolSize: 1 });
const userId = Number(userArg);
const bookId = Number(bookArg);
const write = (seq: number): Promise<void> =>
  store.write(async ({ exec }) => {
    const at = new Date().toISOString();
    await exec.run("INSERT INTO reading_sessions (user_id, book_id, book_type, start_time, end_time, duration_seconds) VALUES (?, ?, 'EPUB', ?, ?, ?)", [userId, bookId, at, at, seq]);
    await exec.run('UPDATE user_book_progress SET epub_progress_percent = ?, last_read_time = ? WHERE user_id = ? AND book_id = ?', [seq, at, userId, bookId]);
  });
let seq = 0;
let stopping = false;
process.on('SIGTERM', () => (stopping = true));
process.stdout.write('ready\n');
while (!stopping) {
  await write(++seq);
  // Yield to the event loop now and then so SIGTERM is seen.
  if (seq % 20 === 0) await new Promise((r) => setImmediate(r));
}
await store.close();
process.stdout.write(`wrote ${seq}\n`);
