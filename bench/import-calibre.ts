// npm run bench:import-calibre -- [--books 1000] [--keep DIR]
// Builds a calibre library with calibre's own calibredb (Debian's `calibre` package) from N generated EPUBs with
// covers and full metadata (authors, tags, series, publisher, date, language, rating, ISBN/Amazon/Goodreads/Google
// identifiers, HTML description), times `bindery import calibre` on it (wall, CPU, peak RSS) and a second run, and
// prints the share of fields that match `calibredb list --for-machine`, field by field.
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { languageCode } from '../src/core/import/calibre/languages.ts';
import { containerXml, jpeg, writeZip } from '../test/helpers/epub-fixtures.ts';
import { load, row, runTimed } from './cli-timed.ts';

const { values } = parseArgs({ options: { books: { type: 'string', default: '1000' }, keep: { type: 'string' } } });
const count = Number(values.books);
const base = values.keep ?? mkdtempSync(join(tmpdir(), 'bindery-bench-calibre-'));
const incoming = join(base, 'incoming');
const library = join(base, 'Calibre Library');
const dataDir = join(base, 'data');
mkdirSync(incoming, { recursive: true });
mkdirSync(library, { recursive: true });

const LANGUAGES = ['en', 'de', 'fr', 'es', 'it'];
const xml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
process.stderr.write(`writing ${count} EPUBs…\n`);
const cover = await jpeg(300, 450, '#357');
for (let i = 1; i <= count; i++) {
  const authors = i % 4 === 0 ? [`Ann Author${i % 97}`, `Bob Writer${i % 89}`] : [`Ann Author${i % 97}`];
  const isbn = `978${String(1000000000 + i).slice(0, 10)}`;
  const metadata = [
    `<dc:title>Book Number ${i}${i % 9 === 0 ? ': A Subtitle' : ''}</dc:title>`,
    ...authors.map((a) => `<dc:creator opf:role="aut">${a}</dc:creator>`),
    `<dc:subject>Genre ${i % 13}</dc:subject>`,
    i % 2 ? `<dc:subject>Mood ${i % 5}</dc:subject>` : '',
    `<dc:publisher>Publisher ${i % 17}</dc:publisher>`,
    `<dc:date>${1950 + (i % 70)}-0${1 + (i % 9)}-1${i % 10}</dc:date>`,
    `<dc:language>${LANGUAGES[i % LANGUAGES.length]}</dc:language>`,
    `<dc:identifier opf:scheme="ISBN">${isbn}</dc:identifier>`,
    i % 3 === 0 ? `<dc:identifier opf:scheme="AMAZON">B00${String(i).padStart(7, '0')}</dc:identifier>` : '',
    i % 5 === 0 ? `<dc:identifier opf:scheme="GOODREADS">${100000 + i}</dc:identifier>` : '',
    i % 7 === 0 ? `<dc:identifier opf:scheme="GOOGLE">g${i}x</dc:identifier>` : '',
    `<dc:description>${xml(`<p>The story of book <b>${i}</b>.</p>`)}</dc:description>`,
    i % 3 === 0 ? `<meta name="calibre:series" content="Saga ${i % 31}"/><meta name="calibre:series_index" content="${(i % 12) + 1}"/>` : '',
    i % 2 === 0 ? `<meta name="calibre:rating" content="${(i % 5) * 2 + 2}"/>` : '',
    '<meta name="cover" content="cover-img"/>',
  ].join('\n');
  const opf = `<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="2.0" unique-identifier="bookid">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf">
<dc:identifier id="bookid">urn:uuid:00000000-0000-4000-8000-${String(i).padStart(12, '0')}</dc:identifier>
${metadata}
</metadata>
<manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/><item id="cover-img" href="cover.jpg" media-type="image/jpeg"/></manifest>
<spine><itemref idref="c1"/></spine>
</package>`;
  await writeZip(join(incoming, `book-${i}.epub`), [
    { name: 'mimetype', data: 'application/epub+zip', compress: false },
    { name: 'META-INF/container.xml', data: containerXml('content.opf') },
    { name: 'content.opf', data: opf },
    { name: 'c1.xhtml', data: `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>c</title></head><body><p>Text of book ${i}.</p></body></html>` },
    { name: 'cover.jpg', data: cover },
  ]);
}
const env = { ...process.env, CALIBRE_CONFIG_DIRECTORY: join(base, 'calibre-config') };
const adding = performance.now();
execFileSync('calibredb', ['--library-path', library, 'add', '--recurse', incoming], { env, stdio: 'ignore' });
process.stderr.write(`calibredb add: ${((performance.now() - adding) / 1000).toFixed(1)} s\n`);
const listed = JSON.parse(execFileSync('calibredb', ['--library-path', library, 'list', '--for-machine', '--fields', 'all'], { env, maxBuffer: 1 << 28 }).toString()) as Record<string, unknown>[];

console.log(`calibre import, ${listed.length} books made by calibredb; load before ${load()}`);
const first = await runTimed(['--data-dir', dataDir, '--json', 'import', 'calibre', library]);
const report = JSON.parse(first.stdout) as { library: { id: number }; books: { imported: number }; covers: { imported: number } };
console.log(row('first run', first, `books ${report.books.imported}, covers ${report.covers.imported}`));
const second = await runTimed(['--data-dir', dataDir, '--json', 'import', 'calibre', library]);
console.log(row('second run (nothing changed)', second, `unchanged ${(JSON.parse(second.stdout) as { books: { unchanged: number } }).books.unchanged}`));
console.log(`load after ${load()}`);

// Field by field against calibre's own listing.
const db = new Database(join(dataDir, 'bindery.sqlite'), { readonly: true });
const bookOf = new Map((db.prepare("select source_id, target_id from import_id_map where source = ? and kind = 'book'").all(`calibre:${report.library.id}`) as { source_id: string; target_id: string }[]).map((r) => [Number(r.source_id), Number(r.target_id)]));
const meta = db.prepare('select * from book_metadata where book_id = ?');
const names = (mapping: string, table: string, column: string, order: string): Database.Statement => db.prepare(`select n.name from ${mapping} m join ${table} n on n.id = m.${column} where m.book_id = ? order by ${order}`);
const authorsOf = names('book_metadata_author_mapping', 'author', 'author_id', 'm.sort_order');
const tagsOf = names('book_metadata_tag_mapping', 'tag', 'tag_id', 'n.name');
const filesOf = db.prepare('select count(*) as n from book_file where book_id = ?');
const coverOf = db.prepare('select book_cover_hash from book where id = ?');
/** field → [matching, compared, calibre has a value]: a match of two empty values is a match, but shown apart. */
const tally = new Map<string, [number, number, number]>();
const check = (field: string, ok: boolean, has = true): void => {
  const [hit, all, valued] = tally.get(field) ?? [0, 0, 0];
  tally.set(field, [hit + (ok ? 1 : 0), all + 1, valued + (has ? 1 : 0)]);
};
for (const c of listed) {
  const id = bookOf.get(c.id as number);
  const m = (id === undefined ? undefined : meta.get(id)) as Record<string, unknown> | undefined;
  const ids = (c.identifiers ?? {}) as Record<string, string>;
  const authors = id === undefined ? [] : (authorsOf.all(id) as { name: string }[]).map((a) => a.name);
  const tags = id === undefined ? [] : (tagsOf.all(id) as { name: string }[]).map((a) => a.name);
  check('title', m?.title === c.title);
  check('authors', authors.join(' & ') === c.authors);
  check('tags', JSON.stringify(tags) === JSON.stringify([...((c.tags as string[]) ?? [])].sort()));
  check('series', (m?.series_name ?? null) === (c.series ?? null), Boolean(c.series));
  check('series_index', !c.series || m?.series_number === c.series_index, Boolean(c.series));
  check('publisher', (m?.publisher ?? null) === (c.publisher ?? null), Boolean(c.publisher));
  check('languages', (m?.language ?? null) === (((c.languages as string[]) ?? [])[0] ? languageCode((c.languages as string[])[0] as string) : null));
  check('rating', (m?.rating ?? null) === (c.rating ? (c.rating as number) / 2 : null), Boolean(c.rating));
  check('isbn', (m?.isbn_13 ?? m?.isbn_10 ?? null) === (ids.isbn ?? null), Boolean(ids.isbn));
  check('amazon', (m?.asin ?? null) === (ids.amazon ?? null), Boolean(ids.amazon));
  check('goodreads', (m?.goodreads_id ?? null) === (ids.goodreads ?? null), Boolean(ids.goodreads));
  check('google', (m?.google_id ?? null) === (ids.google ?? null), Boolean(ids.google));
  check('comments', (m?.description ?? null) === (c.comments ?? null), Boolean(c.comments));
  check('pubdate', (m?.published_date ?? null) === (typeof c.pubdate === 'string' && !c.pubdate.startsWith('0101') ? c.pubdate.slice(0, 10) : null));
  check('formats', id !== undefined && (filesOf.get(id) as { n: number }).n === ((c.formats as string[]) ?? []).length);
  check('cover', id !== undefined && Boolean((coverOf.get(id) as { book_cover_hash: string | null }).book_cover_hash) === Boolean(c.cover), Boolean(c.cover));
  // Sorting keys have no place of their own in Bindery's catalog (it sorts by the title and the author names).
  check('title_sort (no place)', false);
  check('author_sort (no place)', false);
}
db.close();
let hits = 0;
let all = 0;
let placedHits = 0;
let placedAll = 0;
for (const [field, [hit, n, valued]] of tally) {
  hits += hit;
  all += n;
  if (!field.includes('no place')) {
    placedHits += hit;
    placedAll += n;
  }
  console.log(`  ${field.padEnd(24)} ${((hit / n) * 100).toFixed(1).padStart(5)} %  (${hit}/${n}; calibre has a value in ${valued})`);
}
console.log(`fields matching calibre: ${((placedHits / placedAll) * 100).toFixed(1)} % of those Bindery has a place for, ${((hits / all) * 100).toFixed(1)} % of all compared`);
if (!values.keep) rmSync(base, { recursive: true, force: true });
