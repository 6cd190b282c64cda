// bindery export and import bindery-export between two catalogs: what a user owns goes out as JSON Lines and Markdown
// and comes back into another Bindery, books matched by file hash, path and ISBN; a second import changes nothing;
// the API gives a signed-in user their own data only.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTar } from '../../src/core/backup/tar.ts';
import { openStore, type Store } from '../../src/core/store/store.ts';
import { catalogRows } from '../helpers/catalog-rows.ts';
import { seedBook, seedLibrary } from '../helpers/catalog-seed.ts';
import { runCli } from '../helpers/cli.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.ts';

let tmp: TempDir;
const source = (): string => tmp.file('source');
const target = (): string => tmp.file('target');
const bindery = (dir: string, ...args: string[]) => runCli(['--data-dir', dir, ...args]);

async function addUser(store: Store, username: string): Promise<number> {
  return (await store.db.insertInto('users').values({ username, password_hash: 'x', name: username }).returning('id').executeTakeFirstOrThrow()).id;
}

/** Books by title → id in a catalog. */
async function seedBooks(store: Store, root: string, books: { title: string; file: string; hash: string | null; isbn?: string }[]): Promise<Record<string, number>> {
  const libraryId = await seedLibrary(store.db, root, 'Books');
  const ids: Record<string, number> = {};
  for (const b of books) {
    const { bookId, fileIds } = await seedBook(store.db, libraryId, { title: b.title, authors: ['Ursula K. Le Guin'] });
    const slash = b.file.lastIndexOf('/');
    const place = { file_sub_path: slash < 0 ? '' : b.file.slice(0, slash), file_name: b.file.slice(slash + 1) };
    await store.db.updateTable('book_file').set({ ...place, current_hash: b.hash, initial_hash: b.hash }).where('id', '=', fileIds[0] as number).execute();
    if (b.isbn) await store.db.updateTable('book_metadata').set({ isbn_13: b.isbn }).where('book_id', '=', bookId).execute();
    ids[b.title] = bookId;
  }
  return ids;
}

async function digest(dir: string): Promise<string> {
  return createHash('sha256').update(JSON.stringify(await catalogRows(join(dir, 'bindery.sqlite')))).digest('hex');
}

async function members(archive: Buffer): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const entry of readTar((async function* () {
    yield gunzipSync(archive);
  })())) {
    const parts: Buffer[] = [];
    for await (const chunk of entry.body) parts.push(chunk);
    out[entry.path] = Buffer.concat(parts).toString('utf8');
  }
  return out;
}

const lines = (text: string | undefined): Record<string, unknown>[] => (text ?? '').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

let aliceArchive: string;

beforeAll(async () => {
  tmp = makeTempDir('bindery-export-');
  const src = await openStore(join(source(), 'bindery.sqlite'));
  const alice = await addUser(src, 'alice');
  const bob = await addUser(src, 'bob');
  const b = await seedBooks(src, tmp.file('src-books'), [
    { title: 'The Dispossessed', file: 'dispossessed.epub', hash: 'hash-dispossessed' },
    { title: 'The Lathe of Heaven', file: 'Le Guin/lathe.epub', hash: 'hash-lathe-old' },
    { title: 'Always Coming Home', file: 'always.epub', hash: null, isbn: '9780520227354' },
    { title: 'Not Over There', file: 'missing.epub', hash: 'hash-nowhere' },
  ]);
  const [dispossessed, lathe, always, missing] = [b['The Dispossessed'], b['The Lathe of Heaven'], b['Always Coming Home'], b['Not Over There']] as [number, number, number, number];
  await src.db.insertInto('user_book_progress').values([
    { user_id: alice, book_id: dispossessed, epub_progress: 'epubcfi(/6/8)', epub_progress_percent: 42.5, read_status: 'READING', personal_rating: 5 },
    { user_id: alice, book_id: missing, epub_progress_percent: 10 },
  ]).execute();
  await src.db.insertInto('book_marks').values({ user_id: alice, book_id: lathe, cfi: 'epubcfi(/6/4)', title: 'Chapter 2' }).execute();
  await src.db.insertInto('annotations').values([
    { user_id: alice, book_id: always, cfi: 'epubcfi(/6/10)', text: 'We are the people who came home.', note: 'the heart of it', chapter_title: 'Stone Telling' },
    { user_id: bob, book_id: dispossessed, cfi: 'epubcfi(/6/2)', text: 'bob only', note: null },
  ]).execute();
  await src.db.insertInto('book_notes_v2').values({ user_id: alice, book_id: always, cfi: 'epubcfi(/6/12)', note_content: 'Reread the Kesh poems', selected_text: 'Kesh' }).execute();
  await src.db.insertInto('reading_sessions').values({ user_id: alice, book_id: dispossessed, start_time: '2026-11-01T20:00:00Z', end_time: '2026-11-01T21:00:00Z', duration_seconds: 3600 }).execute();
  const shelf = (await src.db.insertInto('shelf').values({ user_id: alice, name: 'Hainish' }).returning('id').executeTakeFirstOrThrow()).id;
  await src.db.insertInto('book_shelf_mapping').values([{ shelf_id: shelf, book_id: dispossessed }, { shelf_id: shelf, book_id: lathe }]).execute();
  await src.close();

  // The other Bindery: the same books found at other places, with other ids.
  const dst = await openStore(join(target(), 'bindery.sqlite'));
  await addUser(dst, 'carol');
  await addUser(dst, 'alice');
  await seedBooks(dst, tmp.file('dst-books'), [
    { title: 'Unrelated', file: 'unrelated.epub', hash: 'hash-unrelated' },
    { title: 'Always Coming Home', file: 'renamed.epub', hash: 'hash-other', isbn: '9780520227354' },
    { title: 'The Lathe of Heaven', file: 'Le Guin/lathe.epub', hash: 'hash-lathe-new' },
    { title: 'The Dispossessed', file: 'elsewhere/d.epub', hash: 'hash-dispossessed' },
  ]);
  await dst.close();
});
afterAll(() => tmp.remove());

describe('bindery export', () => {
  it("writes one user's own data as JSON Lines and Markdown", async () => {
    const res = await bindery(source(), '--json', 'export', '--user', 'alice', '--to', tmp.file('exports/'));
    expect(res.code, res.stdout + res.stderr).toBe(0);
    const result = JSON.parse(res.stdout) as { path: string; counts: Record<string, number>; markdownFiles: number };
    aliceArchive = result.path;
    expect(result.counts).toEqual({ users: 1, books: 4, shelves: 1, progress: 2, bookmarks: 1, annotations: 1, notes: 1, sessions: 1, ratings: 1 });
    const m = await members(readFileSync(aliceArchive));
    expect(JSON.parse(m['manifest.json'] as string)).toMatchObject({ format: 'bindery-export', formatVersion: 1, scope: 'user', users: ['alice'] });
    expect(lines(m['annotations.jsonl'])).toEqual([expect.objectContaining({ user: 'alice', kind: 'epub', text: 'We are the people who came home.', note: 'the heart of it' })]);
    expect(lines(m['books.jsonl'])[0]).toMatchObject({ library: 'Books', authors: ['Ursula K. Le Guin'], metadata: { title: 'The Dispossessed' }, files: [{ path: 'dispossessed.epub', currentHash: 'hash-dispossessed' }] });
    const page = Object.entries(m).find(([path]) => path.startsWith('markdown/alice/Always Coming Home'))?.[1];
    expect(page).toContain('> We are the people who came home.');
    expect(page).toContain('Reread the Kesh poems');
    expect(JSON.stringify(m)).not.toContain('bob only');
  });

  it('needs --user or --all', async () => {
    expect((await bindery(source(), 'export')).code).toBe(2);
    expect((await bindery(source(), '--json', 'export', '--user', 'nobody')).code).toBe(3);
  });
});

describe('bindery import bindery-export', () => {
  it('matches books by file hash, path and ISBN, and imports what matched', async () => {
    const res = await bindery(target(), '--json', 'import', 'bindery-export', aliceArchive);
    // One book is not in this catalog: a partial import.
    expect(res.code, res.stdout + res.stderr).toBe(5);
    const result = JSON.parse(res.stdout) as { books: { matched: number; unmatched: { title: string }[] }; counts: Record<string, { added: number; skipped: number }> };
    expect(result.books.matched).toBe(3);
    expect(result.books.unmatched).toEqual([expect.objectContaining({ title: 'Not Over There', reason: 'no book with the same file hash, path or ISBN' })]);
    expect(result.counts.progress).toMatchObject({ added: 1, skipped: 1 });
    for (const kind of ['annotations', 'notes', 'bookmarks', 'sessions', 'shelves', 'ratings']) expect(result.counts[kind], kind).toMatchObject({ added: 1 });

    const store = await openStore(join(target(), 'bindery.sqlite'));
    try {
      const one = async (sql: string, ...params: (string | number)[]) => store.exec.get(sql, params);
      const alice = (await one("SELECT id FROM users WHERE username = 'alice'"))?.id as number;
      const titleOf = async (bookId: unknown) => (await one('SELECT title FROM book_metadata WHERE book_id = ?', bookId as number))?.title;
      const progress = (await store.exec.all('SELECT * FROM user_book_progress WHERE user_id = ?', [alice])) as { book_id: number; epub_progress_percent: number; personal_rating: number }[];
      expect(await Promise.all(progress.map(async (p) => [await titleOf(p.book_id), p.epub_progress_percent, p.personal_rating]))).toEqual([['The Dispossessed', 42.5, 5]]);
      const annotation = await one('SELECT book_id, text FROM annotations WHERE user_id = ?', alice);
      expect(await titleOf(annotation?.book_id)).toBe('Always Coming Home');
      const bookmark = await one('SELECT book_id FROM book_marks WHERE user_id = ?', alice);
      expect(await titleOf(bookmark?.book_id)).toBe('The Lathe of Heaven');
      const shelved = await store.exec.all("SELECT m.book_id FROM book_shelf_mapping m JOIN shelf s ON s.id = m.shelf_id WHERE s.name = 'Hainish' AND s.user_id = ?", [alice]);
      expect((await Promise.all(shelved.map((r) => titleOf(r.book_id)))).sort()).toEqual(['The Dispossessed', 'The Lathe of Heaven']);
    } finally {
      await store.close();
    }
  });

  it('changes nothing when run again', async () => {
    const before = await digest(target());
    const res = await bindery(target(), '--json', 'import', 'bindery-export', aliceArchive);
    const result = JSON.parse(res.stdout) as { counts: Record<string, { added: number; updated: number; unchanged: number }> };
    for (const [kind, c] of Object.entries(result.counts)) expect([kind, c.added, c.updated]).toEqual([kind, 0, 0]);
    expect(await digest(target())).toBe(before);
  });

  it('imports into another user with --as, and skips users this catalog lacks', async () => {
    const asCarol = await bindery(target(), '--json', 'import', 'bindery-export', '--dry-run', '--as', 'carol', aliceArchive);
    expect(JSON.parse(asCarol.stdout)).toMatchObject({ dryRun: true, users: { matched: ['carol'] }, counts: { annotations: { added: 1 } } });
    const all = await bindery(source(), '--json', 'export', '--all', '--to', tmp.file('exports/all.tar.gz'));
    expect(all.code).toBe(0);
    const before = await digest(target());
    const res = await bindery(target(), '--json', 'import', 'bindery-export', '--dry-run', tmp.file('exports/all.tar.gz'));
    expect(JSON.parse(res.stdout)).toMatchObject({ users: { matched: ['alice'], missing: ['bob'] } });
    expect(await digest(target())).toBe(before);
  });

  it('refuses a damaged export and changes nothing', async () => {
    const tar = gunzipSync(readFileSync(aliceArchive));
    const at = tar.indexOf(Buffer.from('Reread the Kesh'));
    tar.write('X', at);
    const bad = tmp.file('bad.tar.gz');
    writeFileSync(bad, gzipSync(tar));
    const before = await digest(target());
    const res = await bindery(target(), '--json', 'import', 'bindery-export', bad);
    expect(res.code).toBe(7);
    expect(JSON.parse(res.stdout).error.message).toMatch(/does not match its checksum/);
    expect(await digest(target())).toBe(before);
  });
});

describe('GET /api/v1/bindery/export', () => {
  it("gives the signed-in user their own data, and nobody else's", async () => {
    const d = await startTestDaemon();
    try {
      const dave = await d.createUser('dave');
      const erin = await d.createUser('erin');
      const lib = await seedLibrary(d.store.db, d.dir, 'Lib');
      const { bookId } = await seedBook(d.store.db, lib, { title: 'Shared Book' });
      await d.store.db.insertInto('annotations').values([
        { user_id: dave.id, book_id: bookId, cfi: 'epubcfi(/6/2)', text: 'dave wrote this' },
        { user_id: erin.id, book_id: bookId, cfi: 'epubcfi(/6/2)', text: 'erin wrote this' },
      ]).execute();
      const res = await d.inject({ method: 'GET', url: '/api/v1/bindery/export', headers: { authorization: `Bearer ${dave.token}` } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/gzip');
      expect(res.headers['content-disposition']).toMatch(/attachment; filename="bindery-export-dave-/);
      const m = await members(res.rawPayload);
      expect(lines(m['users.jsonl'])).toEqual([{ username: 'dave', name: 'dave', email: null }]);
      expect(m['annotations.jsonl']).toContain('dave wrote this');
      expect(JSON.stringify(m)).not.toContain('erin wrote this');
      expect((await d.inject({ method: 'GET', url: '/api/v1/bindery/export' })).statusCode).toBe(401);
    } finally {
      await d.close();
    }
  });
});
