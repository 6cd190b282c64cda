// `bindery import calibre` on a library made by calibre's own calibredb (test/fixtures/calibre/make.sh), compared with
// calibre's own view of it (`calibredb list --for-machine`, kept beside the fixture).
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/core/store/store.ts';
import { CALIBRE_FIXTURE, materializeCalibreLibrary } from '../helpers/calibre-library.ts';
import { readRows } from '../helpers/catalog-read.ts';
import { runCli } from '../helpers/cli.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

interface CalibreListed {
  id: number;
  title: string;
  authors: string;
  tags: string[];
  series?: string;
  series_index: number;
  publisher?: string;
  languages: string[];
  rating?: number;
  identifiers: Record<string, string>;
  comments?: string;
  pubdate: string;
  '*read'?: boolean;
  '*shelf': string[];
}

const listed = JSON.parse(readFileSync(join(CALIBRE_FIXTURE, 'list.json'), 'utf8')) as CalibreListed[];

const digest = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('bindery import calibre', () => {
  let tmp: TempDir;
  let root: string;
  let dataDir: string;
  let catalog: string;
  const bindery = (...args: string[]): ReturnType<typeof runCli> => runCli(['--data-dir', dataDir, ...args], { input: 'admin-password\n' });

  beforeAll(async () => {
    tmp = makeTempDir('bindery-calibre-');
    root = tmp.file('Calibre Library');
    dataDir = tmp.file('data');
    catalog = join(dataDir, 'bindery.sqlite');
    await materializeCalibreLibrary(join(CALIBRE_FIXTURE, 'metadata.db'), root);
    expect((await bindery('setup', '--username', 'admin', '--password-stdin')).code).toBe(0);
  });
  afterAll(() => tmp.remove());

  it('lists the custom columns with what each can map to', async () => {
    const result = await bindery('--json', 'import', 'calibre', root, '--list-columns');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).columns).toEqual([
      { column: '#myrating', name: 'My rating', datatype: 'rating', multiple: false, books: 2, suggested: ['personalRating'] },
      { column: '#read', name: 'Read', datatype: 'bool', multiple: false, books: 2, suggested: ['readStatus'] },
      { column: '#readdate', name: 'Read on', datatype: 'datetime', multiple: false, books: 1, suggested: ['dateFinished'] },
      { column: '#shelf', name: 'Shelf', datatype: 'text', multiple: true, books: 2, suggested: ['shelf', 'tags', 'categories', 'moods', 'readStatus'] },
    ]);
    const notCalibre = await bindery('--json', 'import', 'calibre', tmp.dir);
    expect(notCalibre.code).toBe(3);
    expect(JSON.parse(notCalibre.stdout).error).toMatchObject({ code: 'PATH_NOT_FOUND', message: expect.stringContaining('has no metadata.db') });
    const noUser = await bindery('--json', 'import', 'calibre', root, '--map-column', '#read=readStatus');
    expect(noUser.code).toBe(2);
    expect(JSON.parse(noUser.stdout).error.message).toContain('--user NAME');
    const refused = await bindery('--json', 'import', 'calibre', root, '--map-column', '#readdate=shelf', '--user', 'admin');
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stdout).error.message).toContain('#readdate holds datetime values');
  });

  it('makes the library a Bindery library in place, field for field as calibre lists it; a re-run picks up only changes', async () => {
    const before = digest(join(root, 'metadata.db'));
    const args = ['--json', 'import', 'calibre', root, '--user', 'admin', '--map-column', '#read=readStatus', '--map-column', '#shelf=shelf', '--map-column', '#myrating=personalRating', '--map-column', '#readdate=dateFinished'];
    const first = await bindery(...args);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const report = JSON.parse(first.stdout);
    expect(report.library).toMatchObject({ name: 'Calibre Library', path: root, created: true });
    expect(report.books).toMatchObject({ imported: 5, skipped: [] });
    expect(report.files.imported).toBe(6);
    expect(report.covers.imported).toBe(1);
    expect(digest(join(root, 'metadata.db'))).toBe(before);

    const meta = async (title: string): Promise<Record<string, unknown>> => (await readRows<Record<string, unknown>>(catalog, 'select * from book_metadata m where m.title = ?', title))[0] as Record<string, unknown>;
    for (const book of listed) {
      const m = await meta(book.title);
      expect(m, book.title).toBeDefined();
      const bookId = m.book_id as number;
      const authors = (await readRows<{ name: string }>(catalog, 'select a.name from book_metadata_author_mapping x join author a on a.id = x.author_id where x.book_id = ? order by x.sort_order', bookId)).map((a) => a.name);
      expect(authors.join(' & ')).toBe(book.authors);
      const tags = (await readRows<{ name: string }>(catalog, 'select t.name from book_metadata_tag_mapping x join tag t on t.id = x.tag_id where x.book_id = ? order by t.name', bookId)).map((t) => t.name);
      expect(tags).toEqual([...book.tags].sort());
      expect(m.series_name).toBe(book.series ?? null);
      expect(m.series_number).toBe(book.series ? book.series_index : null);
      expect(m.publisher).toBe(book.publisher ?? null);
      expect(m.language).toBe({ eng: 'en', deu: 'de' }[book.languages[0] as string]);
      expect(m.rating).toBe(book.rating ? book.rating / 2 : null);
      expect(m.description).toBe(book.comments ?? null);
      expect(m.published_date).toBe(book.pubdate.slice(0, 10));
      const isbn = book.identifiers.isbn ?? null;
      expect(m.isbn_13 ?? m.isbn_10 ?? null).toBe(isbn);
      expect(m.asin).toBe(book.identifiers.amazon ?? null);
      expect(m.goodreads_id).toBe(book.identifiers.goodreads ?? null);
      expect(m.google_id).toBe(book.identifiers.google ?? null);
      expect(m.hardcover_id).toBe(book.identifiers.hardcover ?? null);
    }
    // Files stay in calibre's folders; the cover comes from cover.jpg.
    const [leGuin] = await readRows<{ id: number; book_cover_hash: string }>(catalog, "select b.id, b.book_cover_hash from book b join book_metadata m on m.book_id = b.id where m.title = 'The Left Hand of Darkness'");
    expect(await readRows(catalog, 'select file_sub_path, file_name, book_type from book_file where book_id = ? order by id', leGuin?.id as number)).toEqual([
      { file_sub_path: 'Ursula K. Le Guin/The Left Hand of Darkness (1)', file_name: 'The Left Hand of Darkness - Ursula K. Le Guin.epub', book_type: 'EPUB' },
      { file_sub_path: 'Ursula K. Le Guin/The Left Hand of Darkness (1)', file_name: 'The Left Hand of Darkness - Ursula K. Le Guin.pdf', book_type: 'PDF' },
    ]);
    expect(leGuin?.book_cover_hash).toMatch(/^BL-/);
    expect(existsSync(join(dataDir, 'covers', String(leGuin?.id), 'cover.jpg'))).toBe(true);
    // Mapped columns: read status, personal rating, date finished, shelves of the user.
    expect(await readRows(catalog, "select m.title, p.read_status, p.personal_rating, p.date_finished from user_book_progress p join book_metadata m on m.book_id = p.book_id order by m.title")).toEqual([
      { title: 'A Memory Called Empire', read_status: null, personal_rating: 6, date_finished: null },
      { title: 'Good Omens', read_status: 'UNREAD', personal_rating: null, date_finished: null },
      { title: 'The Left Hand of Darkness', read_status: 'READ', personal_rating: 10, date_finished: '2024-02-11T00:00:00.000Z' },
    ]);
    expect(await readRows(catalog, "select s.name, m.title from book_shelf_mapping x join shelf s on s.id = x.shelf_id join book_metadata m on m.book_id = x.book_id order by s.name, m.title")).toEqual([
      { name: 'Favourites', title: 'A Memory Called Empire' },
      { name: 'Favourites', title: 'The Left Hand of Darkness' },
      { name: 'To lend', title: 'The Left Hand of Darkness' },
    ]);

    const again = JSON.parse((await bindery(...args)).stdout);
    expect(again.books).toMatchObject({ imported: 0, updated: 0, unchanged: 5 });

    // calibre edits two books; in Bindery one of them has its title locked.
    const calibre = new Database(join(root, 'metadata.db'));
    calibre.function('title_sort', (t: unknown) => t);
    calibre.prepare("update books set title = 'Der Proceß', last_modified = '2030-01-01 00:00:00+00:00' where id = 3").run();
    calibre.prepare("update books set title = 'Good Omens (revised)', last_modified = '2030-01-01 00:00:00+00:00' where id = 2").run();
    calibre.close();
    const lock = await openStore(catalog);
    await lock.exec.run("update book_metadata set title_locked = 1 where title = 'Good Omens'");
    await lock.close();
    const third = JSON.parse((await bindery(...args)).stdout);
    expect(third.books).toMatchObject({ imported: 0, updated: 2, unchanged: 3 });
    expect(await meta('Der Proceß')).toBeDefined();
    expect(await meta('Good Omens')).toBeDefined();
    expect(await readRows(catalog, 'select count(*) as n from book')).toEqual([{ n: 5 }]);
  });
});
