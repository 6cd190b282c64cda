// npm run bench:import-grimmory -- [--books 10000] [--keep DIR]
// A Grimmory database of N books with files on disk, covers in its data folder, two users' progress, annotations,
// notes, bookmarks, reading sessions and Kobo states, in a throwaway MariaDB server (Debian's mariadb-server). Times
// `bindery import grimmory` from the live server, a second run (which changes nothing), and an import from a
// mariadb-dump file, each as its own process: wall time, CPU time, peak RSS, and the load average around them.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { createGrimmorySchema } from '../test/helpers/grimmory-seed.ts';
import { startMariaDb } from '../test/helpers/mariadb.ts';
import { load, row, runTimed } from './cli-timed.ts';

const { values } = parseArgs({ options: { books: { type: 'string', default: '10000' }, keep: { type: 'string' } } });
const books = Number(values.books);
const base = values.keep ?? mkdtempSync(join(tmpdir(), 'bindery-bench-grimmory-'));
const booksDir = join(base, 'books');
const grimmoryData = join(base, 'grimmory-data');
mkdirSync(booksDir, { recursive: true });

const started = performance.now();
const server = await startMariaDb();
process.stderr.write(`MariaDB up in ${((performance.now() - started) / 1000).toFixed(1)} s (install-db + start)\n`);
try {
  const c = await server.connect('grimmory');
  await createGrimmorySchema(c);
  const many = async (table: string, columns: string[], rows: unknown[][]): Promise<void> => {
    for (let i = 0; i < rows.length; i += 2000) await c.query(`insert into \`${table}\` (${columns.map((x) => `\`${x}\``).join(',')}) values ?`, [rows.slice(i, i + 2000)]);
  };
  const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);
  const at = (i: number): string => new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString().slice(0, 19).replace('T', ' ');

  process.stderr.write(`writing ${books} books to MariaDB and disk…\n`);
  const cover = await sharp({ create: { width: 400, height: 600, channels: 3, background: '#468' } }).jpeg().toBuffer();
  const thumb = await sharp({ create: { width: 250, height: 350, channels: 3, background: '#468' } }).jpeg().toBuffer();
  for (const id of range(books)) {
    const folder = join(booksDir, `shelf-${id % 100}`);
    if (id <= 100) mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `book-${id}.epub`), `book ${id}\n`);
    mkdirSync(join(grimmoryData, 'images', String(id)), { recursive: true });
    writeFileSync(join(grimmoryData, 'images', String(id), 'cover.jpg'), cover);
    writeFileSync(join(grimmoryData, 'images', String(id), 'thumbnail.jpg'), thumb);
  }
  await many('flyway_schema_history', ['installed_rank', 'version', 'description', 'type', 'script', 'installed_by', 'execution_time', 'success'], [[1, '144', 'final', 'SQL', 'V144.sql', 'grimmory', 1, 1]]);
  await many('users', ['id', 'username', 'password_hash', 'name', 'is_default_password'], [[1, 'admin', '$2a$10$abcdefghijklmnopqrstuuu5N5Ea5tHtH6jIuBk0MkjNQOf2D2sGe', 'Admin', 0], [2, 'reader', '$2a$10$abcdefghijklmnopqrstuuu5N5Ea5tHtH6jIuBk0MkjNQOf2D2sGe', 'Reader', 0]]);
  await many('user_permissions', ['user_id', 'permission_admin'], [[1, 1], [2, 0]]);
  await many('library', ['id', 'name'], [[1, 'Books']]);
  await many('library_path', ['id', 'path', 'library_id'], [[1, '/books', 1]]);
  await many('author', ['id', 'name'], range(2000).map((i) => [i, `Author ${i}`]));
  await many('tag', ['id', 'name'], range(50).map((i) => [i, `tag-${i}`]));
  await many('book', ['id', 'library_id', 'library_path_id', 'added_on', 'book_cover_hash'], range(books).map((i) => [i, 1, 1, at(i), `BL-${String(i).padStart(13, '0')}`]));
  await many('book_file', ['id', 'book_id', 'file_name', 'file_sub_path', 'is_book', 'book_type', 'initial_hash', 'current_hash'], range(books).map((i) => [i, i, `book-${i}.epub`, `shelf-${i % 100}`, 1, 'EPUB', `h${i}`, `h${i}`]));
  await many('book_metadata', ['book_id', 'title', 'description', 'published_date', 'language', 'series_name', 'series_number', 'title_locked'], range(books).map((i) => [i, `Book ${i}`, `<p>About book ${i}.</p>`, '2001-02-03', 'en', i % 5 ? null : `Series ${i % 300}`, i % 5 ? null : i % 7, i % 10 === 0 ? 1 : 0]));
  await many('book_metadata_author_mapping', ['book_id', 'author_id', 'sort_order'], range(books).map((i) => [i, (i % 2000) + 1, 0]));
  await many('book_metadata_tag_mapping', ['book_id', 'tag_id'], range(books).flatMap((i) => [[i, (i % 50) + 1], [i, ((i + 7) % 50) + 1]]));
  await many('user_book_progress', ['user_id', 'book_id', 'last_read_time', 'epub_progress', 'epub_progress_percent', 'read_status', 'koreader_progress', 'koreader_progress_percent', 'kobo_progress_percent', 'personal_rating'], [1, 2].flatMap((u) => range(books).map((i) => [u, i, at(i), `epubcfi(/6/${i % 40}!/4/2/1:0)`, (i * 7) % 100, i % 3 ? 'READING' : 'READ', `/body/DocFragment[${i % 40}]`, ((i * 7) % 100) / 100, (i * 7) % 100, i % 11])));
  await many('user_book_file_progress', ['user_id', 'book_file_id', 'position_data', 'progress_percent', 'last_read_time'], range(books).map((i) => [1, i, `epubcfi(/6/${i % 40}!/4/2/1:0)`, (i * 7) % 100, at(i)]));
  await many('annotations', ['user_id', 'book_id', 'cfi', 'text', 'color', 'style', 'note', 'chapter_title', 'created_at', 'updated_at'], range(books).flatMap((i) => [1, 2, 3].map((k) => [1, i, `epubcfi(/6/${k * 2}!/4/${i % 90}/1:0)`, `Highlighted passage ${k} of book ${i}, long enough to look like one.`, '#FFFF00', 'highlight', k === 1 ? 'a note' : null, `Chapter ${k}`, at(i), at(i)])));
  await many('book_notes_v2', ['user_id', 'book_id', 'cfi', 'selected_text', 'note_content', 'created_at', 'updated_at'], range(books).map((i) => [1, i, `epubcfi(/6/8!/4/${i % 90}/1:0)`, 'selected', `Note on book ${i}`, at(i), at(i)]));
  await many('book_marks', ['user_id', 'book_id', 'cfi', 'title', 'created_at'], range(books).map((i) => [1, i, `epubcfi(/6/10!/4/${i % 90}/1:0)`, `Mark ${i}`, at(i)]));
  await many('reading_sessions', ['user_id', 'book_id', 'book_type', 'start_time', 'end_time', 'duration_seconds', 'start_progress', 'end_progress', 'progress_delta'], range(books).flatMap((i) => [0, 1].map((k) => [1 + k, i, 'EPUB', at(i + k * 100), at(i + k * 100 + 30), 1800, 10, 20, 10])));
  await many('kobo_reading_state', ['entitlement_id', 'user_id', 'current_bookmark_json', 'status_info_json'], range(Math.floor(books / 2)).map((i) => [String(i), 1, JSON.stringify({ ProgressPercent: i % 100 }), JSON.stringify({ Status: 'Reading' })]));
  await c.end();

  const dump = join(base, 'grimmory.sql');
  execFileSync('sh', ['-c', `mariadb-dump --host=127.0.0.1 --port=${server.port} --user=root --single-transaction grimmory > '${dump}'`]);
  const url = `mysql://root@127.0.0.1:${server.port}/grimmory`;
  const args = (dataDir: string, ...from: string[]): string[] => ['--data-dir', dataDir, '--json', 'import', 'grimmory', ...from, '--map', `/books=${booksDir}`, '--grimmory-data', grimmoryData];
  const imported = (stdout: string): string => {
    try {
      const report = JSON.parse(stdout) as { stages: { tables: { imported: number; unchanged: number }[] }[] };
      const tables = report.stages.flatMap((s) => s.tables);
      return `rows imported ${tables.reduce((n, t) => n + t.imported, 0)}, unchanged ${tables.reduce((n, t) => n + t.unchanged, 0)}`;
    } catch {
      return stdout.slice(0, 200);
    }
  };

  console.log(`Grimmory import, ${books} books (2 users' progress, 3 annotations, a note, a bookmark and 2 sessions per book; ${books * 2} cover files); load before ${load()}`);
  const live = await runTimed(args(join(base, 'data-live'), '--from', url));
  console.log(row('live server, first run', live, imported(live.stdout)));
  const again = await runTimed(args(join(base, 'data-live'), '--from', url));
  console.log(row('live server, second run', again, imported(again.stdout)));
  const fromDump = await runTimed(args(join(base, 'data-dump'), '--from-dump', dump));
  console.log(row('mariadb-dump file, first run', fromDump, imported(fromDump.stdout)));
  console.log(`load after ${load()}`);
} finally {
  await server.stop();
  if (!values.keep) rmSync(base, { recursive: true, force: true });
}
