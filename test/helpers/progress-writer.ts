// A separate process that keeps writing reading progress, as a reader's devices do, until it is stopped. Each
// transaction adds a reading session numbered `seq` and sets the book's progress to the same `seq`, so a consistent
// copy of the catalog has its progress equal to its newest session.
import Database from 'better-sqlite3';

const [catalog, userArg, bookArg] = process.argv.slice(2);
const db = new Database(catalog as string);
db.pragma('busy_timeout = 15000');
const userId = Number(userArg);
const bookId = Number(bookArg);
const addSession = db.prepare(
  "INSERT INTO reading_sessions (user_id, book_id, book_type, start_time, end_time, duration_seconds) VALUES (?, ?, 'EPUB', ?, ?, ?)",
);
const setProgress = db.prepare('UPDATE user_book_progress SET epub_progress_percent = ?, last_read_time = ? WHERE user_id = ? AND book_id = ?');
const write = db.transaction((seq: number) => {
  const at = new Date().toISOString();
  addSession.run(userId, bookId, at, at, seq);
  setProgress.run(seq, at, userId, bookId);
});
let seq = 0;
let stopping = false;
process.on('SIGTERM', () => (stopping = true));
process.stdout.write('ready\n');
while (!stopping) {
  write(++seq);
  // Yield to the event loop now and then so SIGTERM is seen.
  if (seq % 20 === 0) await new Promise((r) => setImmediate(r));
}
db.close();
process.stdout.write(`wrote ${seq}\n`);
