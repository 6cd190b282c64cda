// `bindery export` and the API download: one user's own data (or every user's) as JSON Lines and Markdown, read from
// a store of its own in one read snapshot (a consistent export while the daemon keeps writing, without holding the
// daemon's connection), spooled to work files so memory stays small, then archived atomically.
import { mkdir } from 'node:fs/promises';
import type { SqlExec, SqlRow } from '../store/sql-exec.ts';
import { openStore, type Store } from '../store/store.ts';
import { VERSION } from '../../version.ts';
import { addBuffer, partialPath, removeAbandoned, Spool, writeArchive, type WorkSite } from '../backup/archive-file.ts';
import { workMark } from '../work-files.ts';
import { bookMarkdown, markdownName } from './export-markdown.ts';
import { EXPORT_FORMAT, EXPORT_FORMAT_VERSION, EXPORT_KINDS, ExportError, kindMember, rowFields, type ExportKind, type ExportManifest } from './export-format.ts';

export interface ExportInput {
  /** The catalog: its SQLite file, or its postgres:// URL. */
  catalogPath: string;
  /** Usernames whose data is exported, or every user's. */
  users: string[] | 'all';
  /** The archive's path. */
  target: string;
  /** A folder for work files (the data directory's tmp). */
  workDir: string;
  now?: Date;
}

export interface ExportResult {
  path: string;
  bytes: number;
  users: string[];
  counts: Record<ExportKind, number>;
  markdownFiles: number;
}

type Row = SqlRow;

const PAGE = 500;

function line(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

/**
 * The rows of `select` (which ends in a WHERE clause) in order of the unique column `key`, a page at a time, so a
 * user with a hundred thousand sessions never sits in memory at once.
 */
async function* paged(exec: SqlExec, select: string, params: readonly (string | number)[], key: string): AsyncGenerator<Row> {
  let after: unknown;
  for (;;) {
    const rows = await exec.all(`${select}${after === undefined ? '' : ` AND ${key} > ?`} ORDER BY ${key} LIMIT ${PAGE}`, after === undefined ? params : [...params, after as number]);
    yield* rows;
    if (rows.length < PAGE) return;
    after = rows.at(-1)?.[key.replace(/^\w+\./, '')];
  }
}

/** Rows of `sql` grouped by their `book_id`; its last `?` takes the ids (as a JSON array), `params` the others. */
async function byBook(exec: SqlExec, sql: string, ids: readonly number[], params: readonly number[] = []): Promise<Map<number, Row[]>> {
  const out = new Map<number, Row[]>();
  for (const row of await exec.all(sql, [...params, JSON.stringify(ids)])) {
    const id = row.book_id as number;
    let list = out.get(id);
    if (!list) out.set(id, (list = []));
    list.push(row);
  }
  return out;
}

export async function createExport(input: ExportInput): Promise<ExportResult> {
  const now = input.now ?? new Date();
  await mkdir(input.workDir, { recursive: true });
  const store = await openStore(input.catalogPath, { readonly: true, poolSize: 2 });
  let spools: Record<ExportKind, Spool> | undefined;
  try {
    const site: WorkSite = { liveness: store.liveness, mark: await workMark(store.liveness) };
    await removeAbandoned(input.workDir, store.liveness);
    const opened = Object.fromEntries(EXPORT_KINDS.map((kind) => [kind, new Spool(partialPath(input.workDir, `export-${kind}`, site.mark))])) as Record<ExportKind, Spool>;
    spools = opened;
    return await store.read(({ exec }) => writeExport(store, exec, input, opened, site, now));
  } finally {
    if (spools) await Promise.all(Object.values(spools).map((spool) => spool.discard()));
    await store.close();
  }
}

async function writeExport(store: Store, exec: SqlExec, input: ExportInput, spools: Record<ExportKind, Spool>, site: WorkSite, now: Date): Promise<ExportResult> {
  const inList = store.dialect.jsonValues('integer');
  const userRows: Row[] = [];
  if (input.users === 'all') userRows.push(...(await exec.all('SELECT id, username, name, email FROM users ORDER BY id')));
  else {
    for (const name of input.users) {
      const row = await exec.get('SELECT id, username, name, email FROM users WHERE username = ?', [name]);
      if (!row) throw new ExportError('USER_NOT_FOUND', `no user named "${name}"`);
      userRows.push(row);
    }
  }
  const books = new Set<number>();

  for (const user of userRows) {
    const u = user.username as string;
    const userId = user.id as number;
    await spools.users.add(line({ username: u, name: user.name, email: user.email }));
    const perUser = (table: string): AsyncGenerator<Row> => paged(exec, `SELECT * FROM ${table} WHERE user_id = ?`, [userId], 'id');

    let progressPage: Row[] = [];
    const flushProgress = async (): Promise<void> => {
      const files = await byBook(
        exec,
        `SELECT fp.*, bf.book_id AS book_id, bf.file_sub_path, bf.file_name FROM user_book_file_progress fp JOIN book_file bf ON bf.id = fp.book_file_id
          WHERE fp.user_id = ? AND bf.book_id IN (${inList}) ORDER BY fp.id`,
        progressPage.map((r) => r.book_id as number),
        [userId],
      );
      for (const row of progressPage) {
        const book = row.book_id as number;
        books.add(book);
        const fileLines = (files.get(book) ?? []).map((f) => ({ file: filePath(f.file_sub_path as string, f.file_name as string), ...rowFields(f, ['file_sub_path', 'file_name']) }));
        await spools.progress.add(line({ user: u, book, ...rowFields(row, ['personal_rating']), files: fileLines }));
        if (row.personal_rating !== null) await spools.ratings.add(line({ user: u, book, rating: row.personal_rating }));
      }
      progressPage = [];
    };
    for await (const row of paged(exec, 'SELECT * FROM user_book_progress WHERE user_id = ?', [userId], 'book_id')) {
      progressPage.push(row);
      if (progressPage.length >= PAGE) await flushProgress();
    }
    await flushProgress();

    for await (const row of perUser('book_marks')) {
      books.add(row.book_id as number);
      await spools.bookmarks.add(line({ user: u, book: row.book_id, ...rowFields(row) }));
    }
    for await (const row of perUser('annotations')) {
      books.add(row.book_id as number);
      await spools.annotations.add(line({ user: u, book: row.book_id, kind: 'epub', ...rowFields(row) }));
    }
    for await (const row of perUser('pdf_annotations')) {
      books.add(row.book_id as number);
      await spools.annotations.add(line({ user: u, book: row.book_id, kind: 'pdf', ...rowFields(row) }));
    }
    for await (const row of perUser('book_notes')) {
      books.add(row.book_id as number);
      await spools.notes.add(line({ user: u, book: row.book_id, version: 1, ...rowFields(row) }));
    }
    for await (const row of perUser('book_notes_v2')) {
      books.add(row.book_id as number);
      await spools.notes.add(line({ user: u, book: row.book_id, version: 2, ...rowFields(row) }));
    }
    for await (const row of perUser('reading_sessions')) {
      books.add(row.book_id as number);
      await spools.sessions.add(line({ user: u, book: row.book_id, ...rowFields(row) }));
    }
    for await (const row of perUser('shelf')) {
      const ids = (await exec.all('SELECT book_id FROM book_shelf_mapping WHERE shelf_id = ? ORDER BY book_id', [row.id as number])).map((r) => r.book_id as number);
      for (const id of ids) books.add(id);
      await spools.shelves.add(line({ user: u, kind: 'shelf', ...rowFields(row), books: ids }));
    }
    for await (const row of perUser('magic_shelf')) {
      await spools.shelves.add(line({ user: u, kind: 'magic', ...rowFields(row) }));
    }
  }

  await writeBooks(exec, inList, spools.books, input.users === 'all', books);

  const counts = Object.fromEntries(EXPORT_KINDS.map((kind) => [kind, spools[kind].lines])) as Record<ExportKind, number>;
  const manifest: ExportManifest = {
    format: EXPORT_FORMAT,
    formatVersion: EXPORT_FORMAT_VERSION,
    createdAt: now.toISOString(),
    binderyVersion: VERSION,
    scope: input.users === 'all' ? 'all' : 'user',
    users: userRows.map((u) => u.username as string),
    counts,
  };
  const { bytes, value: markdownFiles } = await writeArchive(input.target, { gzip: true, site }, async (tar) => {
    await addBuffer(tar, 'manifest.json', `${JSON.stringify(manifest, null, 2)}\n`);
    for (const kind of EXPORT_KINDS) await spools[kind].addTo(tar, kindMember(kind));
    let pages = 0;
    for (const user of userRows) {
      for await (const page of bookPages(exec, user.id as number)) {
        await addBuffer(tar, `markdown/${(user.username as string).replace(/[/\\\0]/g, '_')}/${page.name}`, page.text);
        pages++;
      }
    }
    return pages;
  });
  return { path: input.target, bytes, users: manifest.users, counts, markdownFiles };
}

function filePath(subPath: string, name: string): string {
  return subPath ? `${subPath}/${name}` : name;
}

const names = (rows: Row[] | undefined): string[] => (rows ?? []).map((r) => r.name as string);

/** Books in id order: every live one for an export of everything, otherwise those the exported data refers to. */
async function writeBooks(exec: SqlExec, inList: string, spool: Spool, everything: boolean, referenced: Set<number>): Promise<void> {
  const ordered = [...referenced].sort((a, b) => a - b);
  const select = 'SELECT b.id, b.added_on, b.deleted, l.name AS library FROM book b JOIN library l ON l.id = b.library_id';
  for (let after = 0; ; ) {
    // Everything: every book in id order, a page at a time; otherwise the referenced ids, a page of them at a time.
    const rows = everything
      ? await exec.all(`${select} WHERE b.id > ? ORDER BY b.id LIMIT ${PAGE}`, [after])
      : await exec.all(`${select} WHERE b.id IN (${inList}) ORDER BY b.id`, [JSON.stringify(ordered.slice(after, after + PAGE))]);
    const wanted = rows.filter((b) => (everything && b.deleted === 0) || referenced.has(b.id as number));
    const ids = wanted.map((b) => b.id as number);
    if (ids.length > 0) {
      const metadata = await byBook(exec, `SELECT * FROM book_metadata WHERE book_id IN (${inList})`, ids);
      const namesOf = (mapping: string, column: string, table: string, order: string): Promise<Map<number, Row[]>> =>
        byBook(exec, `SELECT m.book_id, n.name FROM ${mapping} m JOIN ${table} n ON n.id = m.${column} WHERE m.book_id IN (${inList}) ORDER BY m.book_id, ${order}`, ids);
      const authors = await namesOf('book_metadata_author_mapping', 'author_id', 'author', 'm.sort_order, n.name');
      const categories = await namesOf('book_metadata_category_mapping', 'category_id', 'category', 'n.name');
      const tags = await namesOf('book_metadata_tag_mapping', 'tag_id', 'tag', 'n.name');
      const moods = await namesOf('book_metadata_mood_mapping', 'mood_id', 'mood', 'n.name');
      const files = await byBook(exec, `SELECT book_id, file_sub_path, file_name, book_type, size_bytes, current_hash, initial_hash, is_book FROM book_file WHERE book_id IN (${inList}) ORDER BY book_id, id`, ids);
      for (const book of wanted) {
        const id = book.id as number;
        const meta = metadata.get(id)?.[0];
        await spool.add(
          line({
            ref: id,
            library: book.library,
            addedOn: book.added_on,
            authors: names(authors.get(id)),
            categories: names(categories.get(id)),
            tags: names(tags.get(id)),
            moods: names(moods.get(id)),
            metadata: meta ? rowFields(meta, ['search_text']) : {},
            files: (files.get(id) ?? []).map((f) => ({
              path: filePath(f.file_sub_path as string, f.file_name as string),
              type: f.book_type,
              isBook: f.is_book === 1,
              sizeBytes: f.size_bytes,
              currentHash: f.current_hash,
              initialHash: f.initial_hash,
            })),
          }),
        );
      }
    }
    if (everything) {
      if (rows.length < PAGE) return;
      after = rows.at(-1)?.id as number;
    } else {
      after += PAGE;
      if (after >= ordered.length) return;
    }
  }
}

type NoteRow = { title: string | null; content: string; selected_text: string | null; chapter_title: string | null; created_at: string };

/** One Markdown page per book the user highlighted, annotated or bookmarked. */
async function* bookPages(exec: SqlExec, userId: number): AsyncGenerator<{ name: string; text: string }> {
  const bookIds = (
    await exec.all(
      `SELECT book_id FROM annotations WHERE user_id = ? UNION SELECT book_id FROM book_notes WHERE user_id = ?
       UNION SELECT book_id FROM book_notes_v2 WHERE user_id = ? UNION SELECT book_id FROM book_marks WHERE user_id = ? ORDER BY 1`,
      [userId, userId, userId, userId],
    )
  ).map((r) => r.book_id as number);
  for (const bookId of bookIds) {
    const m = (await exec.get('SELECT title, series_name, series_number FROM book_metadata WHERE book_id = ?', [bookId])) ?? { title: null, series_name: null, series_number: null };
    const authors = await exec.all('SELECT a.name FROM book_metadata_author_mapping m JOIN author a ON a.id = m.author_id WHERE m.book_id = ? ORDER BY m.sort_order', [bookId]);
    const annotations = await exec.all('SELECT text, note, chapter_title, color, created_at FROM annotations WHERE user_id = ? AND book_id = ? ORDER BY created_at, id', [userId, bookId]);
    const notesV1 = await exec.all('SELECT title, content, created_at FROM book_notes WHERE user_id = ? AND book_id = ?', [userId, bookId]);
    const notesV2 = await exec.all('SELECT note_content AS content, selected_text, chapter_title, created_at FROM book_notes_v2 WHERE user_id = ? AND book_id = ?', [userId, bookId]);
    const bookmarks = await exec.all('SELECT title, notes, created_at FROM book_marks WHERE user_id = ? AND book_id = ? ORDER BY created_at, id', [userId, bookId]);
    const notes = [
      ...notesV1.map((n) => ({ title: n.title, content: n.content, selected_text: null, chapter_title: null, created_at: n.created_at }) as NoteRow),
      ...notesV2.map((n) => ({ title: null, content: n.content, selected_text: n.selected_text, chapter_title: n.chapter_title, created_at: n.created_at }) as NoteRow),
    ].sort((a, b) => a.created_at.localeCompare(b.created_at));
    const text = bookMarkdown(
      { title: m.title as string | null, authors: names(authors), seriesName: m.series_name as string | null, seriesNumber: m.series_number as number | null },
      annotations.map((a) => ({ text: a.text as string, note: a.note as string | null, chapterTitle: a.chapter_title as string | null, color: a.color as string | null, createdAt: a.created_at as string })),
      notes.map((n) => ({ title: n.title, content: n.content, selectedText: n.selected_text, chapterTitle: n.chapter_title, createdAt: n.created_at })),
      bookmarks.map((b) => ({ title: b.title as string | null, notes: b.notes as string | null, createdAt: b.created_at as string })),
    );
    yield { name: markdownName(m.title as string | null, bookId), text };
  }
}
