// npm run bench:duplicates -- [--books 100000] [--with-books] [--keep DIR]
// Fills a temp catalog with generated books (about 15% of them duplicates of another in some way), then, in a fresh
// process, times duplicate detection with every strategy and prints group counts and peak RSS.
// --with-books also times building the API response (full Book JSON for every grouped book).
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { peakRssMb } from './daemon-process.ts';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openStore } from '../src/core/store/store.ts';

const { values } = parseArgs({
  options: {
    books: { type: 'string', default: '100000' },
    'with-books': { type: 'boolean', default: false },
    measure: { type: 'string' },
    keep: { type: 'string' },
  },
});

/** Deterministic pseudo-random numbers, so every run builds the same catalog. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ('shadow river night crown glass winter empire garden silent iron storm dragon city ocean secret house fire stone mirror '
  + 'queen forest war star blood moon king road dream golden lost last wind black white hollow bright broken north lady song '
  + 'memory island echo tower wolf clock paper salt thorn ember harbor raven summer hunger orchard machine ghost').split(' ');
const FIRST = 'Anna Ben Clara David Elena Frank George Hannah Ivan Julia Karl Laura Marco Nina Oscar Paula Quentin Rosa Samuel Tara Ugo Vera Walter Yara Zoe Émile Søren Inés'.split(' ');
const LAST = 'Smith Müller García Rossi Dubois Novak Kowalski Jensen Silva Ivanov Brown Martin Moreau Fischer Costa Larsen Nowak Weber Russo López Herbert Austen Tolkien Brontë Lewis'.split(' ');
const TYPES: [string, string, number][] = [['EPUB', 'epub', 0.6], ['PDF', 'pdf', 0.2], ['MOBI', 'mobi', 0.1], ['AZW3', 'azw3', 0.05], ['CBX', 'cbz', 0.05]];

interface Generated {
  title: string;
  author: string;
  isbn: string | null;
  goodreads: string | null;
  type: [string, string];
  subPath: string;
  fileName: string;
  hash: string;
}

function build(dbPath: string, count: number): Record<string, number> {
  const rand = mulberry32(42);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)] as T;
  const type = (): [string, string] => {
    let r = rand();
    for (const [t, ext, share] of TYPES) if ((r -= share) < 0) return [t, ext];
    return ['EPUB', 'epub'];
  };
  const authors: string[] = [];
  for (let i = 0; i < 20_000; i++) authors.push(`${pick(FIRST)} ${String.fromCharCode(65 + (i % 26))}. ${pick(LAST)}${i >= 26 * 25 ? ` ${i}` : ''}`);
  const hex = (): string => randomBytes(32).toString('hex');
  const isbn = (n: number): string => `978${String(100_000_000 + n).padStart(9, '0')}${n % 10}`;

  const books: Generated[] = [];
  const kinds: Record<string, number> = { original: 0, identicalCopy: 0, otherFormatSameIsbn: 0, sameGoodreadsId: 0, titleAuthorVariant: 0, sameFileName: 0 };
  const fresh = (i: number): Generated => {
    const title = `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)} ${i}`.replace(/^./, (c) => c.toUpperCase());
    const author = pick(authors);
    const t = type();
    const subPath = `${author}/${title}`;
    return { title, author, isbn: rand() < 0.7 ? isbn(i) : null, goodreads: rand() < 0.3 ? String(1_000_000 + i) : null, type: t, subPath, fileName: `${title}.${t[1]}`, hash: hex() };
  };
  for (let i = 0; i < count; i++) {
    const r = rand();
    const base = books.length > 100 ? books[Math.floor(rand() * books.length)] : undefined;
    if (!base || r >= 0.15) {
      books.push(fresh(i));
      kinds.original!++;
    } else if (r < 0.04) {
      books.push({ ...base, subPath: `Imports/${i}`, fileName: base.fileName });
      kinds.identicalCopy!++;
    } else if (r < 0.07 && base.isbn) {
      const t: [string, string] = base.type[0] === 'PDF' ? ['EPUB', 'epub'] : ['PDF', 'pdf'];
      books.push({ ...base, type: t, fileName: `${base.title} (${i}).${t[1]}`, hash: hex() });
      kinds.otherFormatSameIsbn!++;
    } else if (r < 0.09) {
      const gr = base.goodreads ?? String(5_000_000 + i);
      base.goodreads = gr;
      books.push({ ...fresh(i), title: base.title.toLowerCase(), goodreads: gr, isbn: null });
      kinds.sameGoodreadsId!++;
    } else if (r < 0.13) {
      const parts = base.author.split(' ');
      const last = parts.pop() as string;
      books.push({ ...fresh(i), title: `The ${base.title}: A Novel`, author: `${last}, ${parts.join(' ')}`, isbn: null, goodreads: null });
      kinds.titleAuthorVariant!++;
    } else {
      books.push({ ...fresh(i), fileName: base.fileName.replace(/\.\w+$/, '.pdf').replace(/ /g, '_'), subPath: `Unsorted/${i}`, isbn: null, goodreads: null });
      kinds.sameFileName!++;
    }
  }

  const db = new Database(dbPath);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const library = db.prepare("insert into library (name, organization_mode) values ('bench', 'BOOK_PER_FILE')").run().lastInsertRowid;
  const root = db.prepare('insert into library_path (library_id, path) values (?, ?)').run(library, '/bench/books').lastInsertRowid;
  const insertBook = db.prepare('insert into book (library_id, library_path_id, added_on) values (?, ?, ?)');
  const insertMeta = db.prepare('insert into book_metadata (book_id, title, isbn_13, goodreads_id, search_text) values (?, ?, ?, ?, ?)');
  const insertAuthor = db.prepare('insert into author (name) values (?) on conflict (name) do update set name = excluded.name returning id');
  const insertMapping = db.prepare('insert into book_metadata_author_mapping (book_id, author_id, sort_order) values (?, ?, 0)');
  const insertFile = db.prepare(
    `insert into book_file (book_id, library_path_id, file_sub_path, file_name, size_bytes, file_size_kb, content_hash, current_hash, book_type, is_book, added_on)
     values (?, ?, ?, ?, 1048576, 1024, ?, ?, ?, 1, ?)`,
  );
  const authorIds = new Map<string, number>();
  const now = new Date().toISOString();
  db.transaction(() => {
    for (const b of books) {
      const id = insertBook.run(library, root, now).lastInsertRowid as number;
      insertMeta.run(id, b.title, b.isbn, b.goodreads, `${b.title} ${b.author}`.toLowerCase());
      let authorId = authorIds.get(b.author);
      if (authorId === undefined) {
        authorId = (insertAuthor.get(b.author) as { id: number }).id;
        authorIds.set(b.author, authorId);
      }
      insertMapping.run(id, authorId);
      insertFile.run(id, root, b.subPath, b.fileName, b.hash, b.hash.slice(0, 32), b.type[0], now);
    }
  })();
  db.close();
  return kinds;
}

/** One detection pass, as findDuplicates runs it (read compact rows, group), timed step by step. */
async function measure(dbPath: string, withBooks: boolean): Promise<void> {
  const { loadCandidates } = await import('../src/core/duplicates/find.ts');
  const { groupDuplicates, MATCH_REASONS } = await import('../src/core/duplicates/detect.ts');
  const store = await openStore(dbPath);
  const cpu0 = process.cpuUsage();
  let t = performance.now();
  const rows = await loadCandidates(store, 1);
  const loadMs = performance.now() - t;
  t = performance.now();
  const groups = groupDuplicates(rows, { strategies: new Set(MATCH_REASONS), formatPriority: null });
  const groupMs = performance.now() - t;
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const peakRss = Math.round(peakRssMb(process.pid));

  const perReason: Record<string, number> = {};
  for (const g of groups) perReason[g.matchReason] = (perReason[g.matchReason] ?? 0) + 1;
  const grouped = groups.reduce((n, g) => n + g.bookIds.length, 0);

  let booksMs: number | undefined;
  if (withBooks) {
    const { bookJson } = await import('../src/core/books/book-view.ts');
    t = performance.now();
    for (const g of groups) for (const id of g.bookIds) await bookJson(store.db, id);
    booksMs = performance.now() - t;
  }
  await store.close();
  process.stdout.write(`${JSON.stringify({ scanned: rows.length, groups: groups.length, grouped, perReason, totalMs: loadMs + groupMs, cpuMs, loadMs, groupMs, booksMs, peakRssMb: peakRss })}\n`);
}

if (values.measure) {
  await measure(values.measure, values['with-books']);
} else {
  const count = Number(values.books);
  const dir = values.keep ?? mkdtempSync(join(tmpdir(), 'bindery-bench-dup-'));
  try {
    const dbPath = join(dir, `bindery-${count}.sqlite`);
    if (!existsSync(dbPath)) {
      mkdirSync(dir, { recursive: true });
      await (await openStore(`${dbPath}.tmp`)).close();
      const t = performance.now();
      const kinds = build(`${dbPath}.tmp`, count);
      renameSync(`${dbPath}.tmp`, dbPath);
      console.log(`catalog: ${count} books generated in ${((performance.now() - t) / 1000).toFixed(1)} s (${Object.entries(kinds).map(([k, v]) => `${k} ${v}`).join(', ')})`);
    }
    const args = [import.meta.filename, '--measure', dbPath, ...(values['with-books'] ? ['--with-books'] : [])];
    const figures = JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 26 })) as {
      scanned: number; groups: number; grouped: number; perReason: Record<string, number>; totalMs: number; cpuMs: number; loadMs: number; groupMs: number; booksMs?: number; peakRssMb: number;
    };
    console.log(`detection:  ${figures.scanned} books, ${figures.groups} groups holding ${figures.grouped} books (${Object.entries(figures.perReason).map(([k, v]) => `${k} ${v}`).join(', ')})`);
    console.log(`time:       ${(figures.totalMs / 1000).toFixed(2)} s all strategies (reading rows ${(figures.loadMs / 1000).toFixed(2)} s, grouping ${(figures.groupMs / 1000).toFixed(2)} s; CPU ${(figures.cpuMs / 1000).toFixed(2)} s)`);
    if (figures.booksMs !== undefined) console.log(`response:   Book JSON for the ${figures.grouped} grouped books in ${(figures.booksMs / 1000).toFixed(1)} s`);
    console.log(`peak RSS:   ${figures.peakRssMb} MB (detection process)`);
  } finally {
    if (!values.keep) rmSync(dir, { recursive: true, force: true });
  }
}
