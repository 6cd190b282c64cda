// `bindery export` and the API download: one user's own data (or every user's) as JSON Lines and Markdown, read from
// a connection of its own in one read transaction (a consistent export while the daemon keeps writing, without
// holding the daemon's connection), spooled to work files so memory stays small, then archived atomically.
import Database from 'better-sqlite3';
import { mkdir } from 'node:fs/promises';
import { VERSION } from '../../version.ts';
import { addBuffer, partialPath, removeAbandoned, Spool, writeArchive } from '../backup/archive-file.ts';
import { bookMarkdown, markdownName } from './export-markdown.ts';
import { EXPORT_FORMAT, EXPORT_FORMAT_VERSION, EXPORT_KINDS, ExportError, kindMember, rowFields, type ExportKind, type ExportManifest } from './export-format.ts';

export interface ExportInput {
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

type Row = Record<string, unknown>;

function line(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

export async function createExport(input: ExportInput): Promise<ExportResult> {
  const now = input.now ?? new Date();
  await mkdir(input.workDir, { recursive: true });
  await removeAbandoned(input.workDir);
  const db = new Database(input.catalogPath, { readonly: true, fileMustExist: true });
  const spools = Object.fromEntries(EXPORT_KINDS.map((kind) => [kind, new Spool(partialPath(input.workDir, `export-${kind}`))])) as Record<ExportKind, Spool>;
  try {
    db.pragma('busy_timeout = 15000');
    db.prepare('BEGIN').run();
    const userRows = (input.users === 'all'
      ? db.prepare('SELECT id, username, name, email FROM users ORDER BY id').all()
      : input.users.map((name) => {
          const row = db.prepare('SELECT id, username, name, email FROM users WHERE username = ?').get(name);
          if (!row) throw new ExportError('USER_NOT_FOUND', `no user named "${name}"`);
          return row;
        })) as { id: number; username: string; name: string; email: string | null }[];
    const books = new Set<number>();

    for (const user of userRows) {
      const u = user.username;
      await spools.users.add(line({ username: u, name: user.name, email: user.email }));
      const perUser = (sql: string): Row[] => db.prepare(sql).all(user.id) as Row[];

      const fileProgress = db.prepare(
        `SELECT fp.*, bf.file_sub_path, bf.file_name FROM user_book_file_progress fp JOIN book_file bf ON bf.id = fp.book_file_id
         WHERE fp.user_id = ? AND bf.book_id = ? ORDER BY fp.id`,
      );
      for (const row of perUser('SELECT * FROM user_book_progress WHERE user_id = ? ORDER BY book_id')) {
        const book = row.book_id as number;
        books.add(book);
        const files = (fileProgress.all(user.id, book) as Row[]).map((f) => ({
          file: filePath(f.file_sub_path as string, f.file_name as string),
          ...rowFields(f, ['file_sub_path', 'file_name']),
        }));
        await spools.progress.add(line({ user: u, book, ...rowFields(row, ['personal_rating']), files }));
        if (row.personal_rating !== null) await spools.ratings.add(line({ user: u, book, rating: row.personal_rating }));
      }
      for (const row of perUser('SELECT * FROM book_marks WHERE user_id = ? ORDER BY id')) {
        books.add(row.book_id as number);
        await spools.bookmarks.add(line({ user: u, book: row.book_id, ...rowFields(row) }));
      }
      for (const row of perUser('SELECT * FROM annotations WHERE user_id = ? ORDER BY id')) {
        books.add(row.book_id as number);
        await spools.annotations.add(line({ user: u, book: row.book_id, kind: 'epub', ...rowFields(row) }));
      }
      for (const row of perUser('SELECT * FROM pdf_annotations WHERE user_id = ? ORDER BY id')) {
        books.add(row.book_id as number);
        await spools.annotations.add(line({ user: u, book: row.book_id, kind: 'pdf', ...rowFields(row) }));
      }
      for (const row of perUser('SELECT * FROM book_notes WHERE user_id = ? ORDER BY id')) {
        books.add(row.book_id as number);
        await spools.notes.add(line({ user: u, book: row.book_id, version: 1, ...rowFields(row) }));
      }
      for (const row of perUser('SELECT * FROM book_notes_v2 WHERE user_id = ? ORDER BY id')) {
        books.add(row.book_id as number);
        await spools.notes.add(line({ user: u, book: row.book_id, version: 2, ...rowFields(row) }));
      }
      for (const row of perUser('SELECT * FROM reading_sessions WHERE user_id = ? ORDER BY id')) {
        books.add(row.book_id as number);
        await spools.sessions.add(line({ user: u, book: row.book_id, ...rowFields(row) }));
      }
      const shelfBooks = db.prepare('SELECT book_id FROM book_shelf_mapping WHERE shelf_id = ? ORDER BY book_id').pluck();
      for (const row of perUser('SELECT * FROM shelf WHERE user_id = ? ORDER BY id')) {
        const ids = shelfBooks.all(row.id) as number[];
        for (const id of ids) books.add(id);
        await spools.shelves.add(line({ user: u, kind: 'shelf', ...rowFields(row), books: ids }));
      }
      for (const row of perUser('SELECT * FROM magic_shelf WHERE user_id = ? ORDER BY id')) {
        await spools.shelves.add(line({ user: u, kind: 'magic', ...rowFields(row) }));
      }
    }

    await writeBooks(db, spools.books, input.users === 'all', books);

    const counts = Object.fromEntries(EXPORT_KINDS.map((kind) => [kind, spools[kind].lines])) as Record<ExportKind, number>;
    const manifest: ExportManifest = {
      format: EXPORT_FORMAT,
      formatVersion: EXPORT_FORMAT_VERSION,
      createdAt: now.toISOString(),
      binderyVersion: VERSION,
      scope: input.users === 'all' ? 'all' : 'user',
      users: userRows.map((u) => u.username),
      counts,
    };
    const { bytes, value: markdownFiles } = await writeArchive(input.target, { gzip: true }, async (tar) => {
      await addBuffer(tar, 'manifest.json', `${JSON.stringify(manifest, null, 2)}\n`);
      for (const kind of EXPORT_KINDS) await spools[kind].addTo(tar, kindMember(kind));
      let pages = 0;
      for (const user of userRows) {
        for (const page of bookPages(db, user.id)) {
          await addBuffer(tar, `markdown/${user.username.replace(/[/\\\0]/g, '_')}/${page.name}`, page.text);
          pages++;
        }
      }
      return pages;
    });
    db.prepare('COMMIT').run();
    return { path: input.target, bytes, users: manifest.users, counts, markdownFiles };
  } finally {
    db.close();
    await Promise.all(Object.values(spools).map((spool) => spool.discard()));
  }
}

function filePath(subPath: string, name: string): string {
  return subPath ? `${subPath}/${name}` : name;
}

/** Books in id order: every live one for an export of everything, otherwise those the exported data refers to. */
async function writeBooks(db: Database.Database, spool: Spool, everything: boolean, referenced: Set<number>): Promise<void> {
  const names = (sql: string) => db.prepare(sql).pluck();
  const authors = names('SELECT a.name FROM book_metadata_author_mapping m JOIN author a ON a.id = m.author_id WHERE m.book_id = ? ORDER BY m.sort_order, a.name');
  const categories = names('SELECT c.name FROM book_metadata_category_mapping m JOIN category c ON c.id = m.category_id WHERE m.book_id = ? ORDER BY c.name');
  const tags = names('SELECT t.name FROM book_metadata_tag_mapping m JOIN tag t ON t.id = m.tag_id WHERE m.book_id = ? ORDER BY t.name');
  const moods = names('SELECT o.name FROM book_metadata_mood_mapping m JOIN mood o ON o.id = m.mood_id WHERE m.book_id = ? ORDER BY o.name');
  const metadata = db.prepare('SELECT * FROM book_metadata WHERE book_id = ?');
  const files = db.prepare('SELECT file_sub_path, file_name, book_type, size_bytes, current_hash, initial_hash, is_book FROM book_file WHERE book_id = ? ORDER BY id');
  const rows = db.prepare('SELECT b.id, b.added_on, b.deleted, l.name AS library FROM book b JOIN library l ON l.id = b.library_id ORDER BY b.id');
  for (const book of rows.iterate() as IterableIterator<{ id: number; added_on: string; deleted: number; library: string }>) {
    if (!(everything && book.deleted === 0) && !referenced.has(book.id)) continue;
    const meta = metadata.get(book.id) as Row | undefined;
    await spool.add(
      line({
        ref: book.id,
        library: book.library,
        addedOn: book.added_on,
        authors: authors.all(book.id),
        categories: categories.all(book.id),
        tags: tags.all(book.id),
        moods: moods.all(book.id),
        metadata: meta ? rowFields(meta, ['search_text']) : {},
        files: (files.all(book.id) as Row[]).map((f) => ({
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

/** One Markdown page per book the user highlighted, annotated or bookmarked. */
function* bookPages(db: Database.Database, userId: number): Generator<{ name: string; text: string }> {
  const bookIds = db
    .prepare(
      `SELECT book_id FROM annotations WHERE user_id = @user UNION SELECT book_id FROM book_notes WHERE user_id = @user
       UNION SELECT book_id FROM book_notes_v2 WHERE user_id = @user UNION SELECT book_id FROM book_marks WHERE user_id = @user ORDER BY 1`,
    )
    .pluck()
    .all({ user: userId }) as number[];
  const meta = db.prepare('SELECT title, series_name, series_number FROM book_metadata WHERE book_id = ?');
  const authors = db.prepare('SELECT a.name FROM book_metadata_author_mapping m JOIN author a ON a.id = m.author_id WHERE m.book_id = ? ORDER BY m.sort_order').pluck();
  const annotations = db.prepare('SELECT text, note, chapter_title, color, created_at FROM annotations WHERE user_id = ? AND book_id = ? ORDER BY created_at, id');
  const notesV1 = db.prepare('SELECT title, content, NULL AS selected_text, NULL AS chapter_title, created_at FROM book_notes WHERE user_id = ? AND book_id = ?');
  const notesV2 = db.prepare('SELECT NULL AS title, note_content AS content, selected_text, chapter_title, created_at FROM book_notes_v2 WHERE user_id = ? AND book_id = ?');
  const bookmarks = db.prepare('SELECT title, notes, created_at FROM book_marks WHERE user_id = ? AND book_id = ? ORDER BY created_at, id');
  for (const bookId of bookIds) {
    const m = (meta.get(bookId) ?? { title: null, series_name: null, series_number: null }) as { title: string | null; series_name: string | null; series_number: number | null };
    type NoteRow = { title: string | null; content: string; selected_text: string | null; chapter_title: string | null; created_at: string };
    const notes = [...(notesV1.all(userId, bookId) as NoteRow[]), ...(notesV2.all(userId, bookId) as NoteRow[])].sort((a, b) => a.created_at.localeCompare(b.created_at));
    const text = bookMarkdown(
      { title: m.title, authors: authors.all(bookId) as string[], seriesName: m.series_name, seriesNumber: m.series_number },
      (annotations.all(userId, bookId) as { text: string; note: string | null; chapter_title: string | null; color: string | null; created_at: string }[]).map((a) => ({ text: a.text, note: a.note, chapterTitle: a.chapter_title, color: a.color, createdAt: a.created_at })),
      notes.map((n) => ({ title: n.title, content: n.content, selectedText: n.selected_text, chapterTitle: n.chapter_title, createdAt: n.created_at })),
      (bookmarks.all(userId, bookId) as { title: string | null; notes: string | null; created_at: string }[]).map((b) => ({ title: b.title, notes: b.notes, createdAt: b.created_at })),
    );
    yield { name: markdownName(m.title, bookId), text };
  }
}
