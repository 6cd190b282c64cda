// node bench/catalog-writer.ts <bindery.sqlite> <every ms> [rename|progress] [daemon url] [authorization]
// Another writer beside the feeds benchmark's page requests, every <every ms>, on one book picked at random:
// - rename: another process (a CLI job, a second replica) renames the book in a transaction of its own. Each commit
//   moves the catalog's generation, so every kept page and kept id list is dropped and the next requests build again.
// - progress: a reader's device reports reading progress through the daemon (the app API's progress route, as the
//   phone app, a Kobo or KOReader do every few seconds while pages turn), signed in with <authorization>.
// Runs until it is sent SIGTERM, then prints how many changes it made.
import Database from 'better-sqlite3';

const [path = '', every = '50', kind = 'rename', url = '', authorization = ''] = process.argv.slice(2);
if (kind !== 'rename' && kind !== 'progress') throw new Error(`unknown writer kind ${kind}: rename or progress`);
if (kind === 'progress' && (!url || !authorization)) throw new Error('a progress writer needs the daemon url and an authorization header');
const db = new Database(path, { readonly: kind === 'progress' });
db.pragma('busy_timeout = 5000');
const { first, last } = db.prepare('SELECT MIN(id) AS first, MAX(id) AS last FROM book').get() as { first: number; last: number };
if (kind === 'progress') db.close();
const rename = kind === 'rename' ? db.prepare('UPDATE book_metadata SET title = ? WHERE book_id = ?') : undefined;
let changes = 0;
let inFlight: Promise<void> | undefined;

async function reportProgress(bookId: number, percent: number): Promise<void> {
  const response = await fetch(`${url}/api/v1/app/books/${bookId}/progress`, {
    method: 'PUT',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ epubProgress: { cfi: 'epubcfi(/6/4!/4/2)', percentage: percent } }),
  });
  await response.arrayBuffer();
  if (response.ok) changes++;
}

const timer = setInterval(() => {
  const bookId = first + Math.floor(Math.random() * (last - first + 1));
  if (rename) {
    rename.run(`Changed title ${++changes}`, bookId);
    return;
  }
  // One report at a time, as one device sends them.
  inFlight ??= reportProgress(bookId, 1 + (changes % 98))
    .catch(() => undefined)
    .finally(() => (inFlight = undefined));
}, Number(every));
process.on('SIGTERM', () => {
  clearInterval(timer);
  void Promise.resolve(inFlight).then(() => {
    if (rename) db.close();
    console.log(String(changes));
    process.exit(0);
  });
});
