// node bench/catalog-writer.ts <bindery.sqlite> <every ms>
// Another process changing the catalog while the feeds benchmark asks for pages (as a CLI job or a second replica
// would): every <every ms> it renames one book, picked at random, in a transaction of its own. Each commit moves the
// catalog's generation, so every kept page and kept id list is dropped and the next requests build again. Runs until
// it is sent SIGTERM, then prints how many changes it made.
import Database from 'better-sqlite3';

const [path = '', every = '50'] = process.argv.slice(2);
const db = new Database(path);
db.pragma('busy_timeout = 5000');
const { first, last } = db.prepare('SELECT MIN(id) AS first, MAX(id) AS last FROM book').get() as { first: number; last: number };
const rename = db.prepare('UPDATE book_metadata SET title = ? WHERE book_id = ?');
let changes = 0;
const timer = setInterval(() => {
  const bookId = first + Math.floor(Math.random() * (last - first + 1));
  rename.run(`Changed title ${++changes}`, bookId);
}, Number(every));
process.on('SIGTERM', () => {
  clearInterval(timer);
  db.close();
  console.log(String(changes));
  process.exit(0);
});
