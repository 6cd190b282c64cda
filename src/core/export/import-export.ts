// `bindery import bindery-export`: reads an export back into this catalog. The archive is checked in full first
// (every member's SHA-256, the format version); then, in one transaction, users are matched by username and books by
// (1) a file hash, (2) a file's path inside its library, (3) ISBN-13 or ISBN-10 — each only when exactly one book
// matches. Data of unmatched books or users is skipped and reported. Every kind is written so that a second run
// changes nothing: progress and ratings per (user, book) are set to the exported values; shelves are matched by name;
// bookmarks, annotations, notes and sessions are added only when no identical one exists.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import { readTar, readVerified, TarFormatError, verifiedBody, type TarEntry } from '../backup/tar.ts';
import type { SqlDialect } from '../store/dialect.ts';
import { writeOrRehearse } from '../store/rehearsal.ts';
import { quoteName, tableFacts } from '../store/schema-facts.ts';
import type { SqlExec, SqlRow, SqlValue } from '../store/sql-exec.ts';
import type { Store } from '../store/store.ts';
import { checkExportManifest, EXPORT_KINDS, ExportError, fieldsRow, kindMember, type ExportKind, type ExportManifest } from './export-format.ts';

export interface ImportExportInput {
  store: Store;
  archive: string;
  /** Import a one-user export into this user instead of the one named in it. */
  asUser?: string | undefined;
  dryRun?: boolean;
}

export interface KindCounts {
  added: number;
  updated: number;
  unchanged: number;
  skipped: number;
}

export interface ImportExportResult {
  dryRun: boolean;
  formatVersion: number;
  users: { matched: string[]; missing: string[] };
  books: { matched: number; unmatched: { ref: number; title: string | null; reason: string }[] };
  counts: Record<Exclude<ExportKind, 'users' | 'books'>, KindCounts>;
}

type Line = Record<string, unknown>;

async function* linesOf(body: AsyncIterable<Buffer>): AsyncGenerator<Line> {
  let rest = '';
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    rest += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = rest.indexOf('\n')) >= 0) {
      const text = rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      if (text.trim()) yield JSON.parse(text) as Line;
    }
  }
  if (rest.trim()) yield JSON.parse(rest) as Line;
}

function damaged(error: unknown): never {
  if (error instanceof ExportError) throw error;
  if (error instanceof TarFormatError || error instanceof SyntaxError) throw new ExportError('DAMAGED', `the export is damaged: ${error.message}`);
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'Z_BUF_ERROR' || code === 'Z_DATA_ERROR') throw new ExportError('DAMAGED', `the export is damaged or cut short (${(error as Error).message})`);
  throw error;
}

async function* entriesOf(archive: string): AsyncGenerator<TarEntry> {
  try {
    yield* readTar(createReadStream(archive).pipe(createGunzip()) as AsyncIterable<Buffer>);
  } catch (error) {
    damaged(error);
  }
}

/** Pass one: every checksum and the manifest, before anything is written. */
async function verifyExport(archive: string): Promise<ExportManifest> {
  await stat(archive).catch(() => {
    throw new ExportError('NOT_FOUND', `no such archive: ${archive}`);
  });
  return checkEveryMember(archive).catch(damaged);
}

async function checkEveryMember(archive: string): Promise<ExportManifest> {
  let manifest: ExportManifest | undefined;
  const seen = new Set<string>();
  for await (const entry of entriesOf(archive)) {
    if (!manifest) {
      if (entry.path !== 'manifest.json') throw new ExportError('UNSUPPORTED', `not a Bindery export: the first member is ${entry.path}`);
      manifest = checkExportManifest(JSON.parse((await readVerified(entry, 4 * 1024 * 1024)).toString('utf8')));
      continue;
    }
    for await (const _chunk of verifiedBody(entry)) {
      // the check is the point
    }
    seen.add(entry.path);
  }
  if (!manifest) throw new ExportError('DAMAGED', 'the export is empty');
  const missing = EXPORT_KINDS.map(kindMember).filter((m) => !seen.has(m));
  if (missing.length > 0) throw new ExportError('DAMAGED', `the export is incomplete: ${missing.join(', ')} missing`);
  return manifest;
}

/** Reads and writes of the import, inside its one transaction. */
class CatalogWriter {
  readonly exec: SqlExec;
  private readonly dialect: SqlDialect;
  private readonly columnsOf = new Map<string, string[]>();

  constructor(exec: SqlExec, dialect: SqlDialect) {
    this.exec = exec;
    this.dialect = dialect;
  }

  async columns(table: string): Promise<string[]> {
    let c = this.columnsOf.get(table);
    if (!c) this.columnsOf.set(table, (c = ((await tableFacts(this.exec, this.dialect, table))?.columns ?? []).map((col) => col.name)));
    return c;
  }

  private insertSql(table: string, row: Record<string, unknown>): [string, SqlValue[]] {
    const cols = Object.keys(row);
    return [`INSERT INTO ${quoteName(table)} (${cols.map(quoteName).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`, cols.map((c) => row[c] as SqlValue)];
  }

  async insert(table: string, row: Record<string, unknown>): Promise<void> {
    const [sql, params] = this.insertSql(table, row);
    await this.exec.run(sql, params);
  }

  async insertId(table: string, row: Record<string, unknown>): Promise<number> {
    const [sql, params] = this.insertSql(table, row);
    return (await this.exec.get(`${sql} RETURNING id`, params))?.id as number;
  }

  async find(table: string, keys: Record<string, unknown>): Promise<SqlRow | undefined> {
    const cols = Object.keys(keys);
    // `= NULL` matches nothing: a key that is null is compared with IS NULL.
    const where = cols.map((c) => (keys[c] === null ? `${quoteName(c)} IS NULL` : `${quoteName(c)} = ?`)).join(' AND ');
    return this.exec.get(`SELECT * FROM ${quoteName(table)} WHERE ${where} LIMIT 1`, cols.filter((c) => keys[c] !== null).map((c) => keys[c] as SqlValue));
  }

  /** Sets the row named by `keys` to `row`: added, updated, or unchanged when it already holds those values. */
  async upsert(table: string, keys: Record<string, unknown>, row: Record<string, unknown>): Promise<keyof KindCounts> {
    const existing = await this.find(table, keys);
    if (!existing) {
      await this.insert(table, { ...row, ...keys });
      return 'added';
    }
    const changed = Object.keys(row).filter((c) => existing[c] !== row[c]);
    if (changed.length === 0) return 'unchanged';
    await this.exec.run(`UPDATE ${quoteName(table)} SET ${changed.map((c) => `${quoteName(c)} = ?`).join(', ')} WHERE id = ?`, [...changed.map((c) => row[c] as SqlValue), existing.id as number]);
    return 'updated';
  }

  /** Adds the row unless one with the same values in `keyColumns` exists. */
  async addUnlessPresent(table: string, row: Record<string, unknown>, keyColumns: string[]): Promise<keyof KindCounts> {
    const keys = Object.fromEntries(keyColumns.map((c) => [c, row[c] ?? null]));
    if (await this.find(table, keys)) return 'unchanged';
    await this.insert(table, row);
    return 'added';
  }
}

interface BookLine {
  ref: number;
  library: string;
  metadata: { title?: string | null; isbn13?: string | null; isbn10?: string | null };
  files: { path: string; currentHash: string | null; initialHash: string | null }[];
}

function splitPath(path: string): { sub: string; name: string } {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? { sub: '', name: path } : { sub: path.slice(0, slash), name: path.slice(slash + 1) };
}

/** The one live book of this catalog the exported book is, or why there is none. */
async function matchBook(w: CatalogWriter, book: BookLine): Promise<number | string> {
  const unique = (ids: number[]): number | undefined => (new Set(ids).size === 1 ? ids[0] : undefined);
  const ids = (rows: SqlRow[]): number[] => rows.map((r) => r.book_id as number);
  const live = 'AND b.deleted = 0';
  const hashes = book.files.flatMap((f) => [f.currentHash, f.initialHash]).filter((h): h is string => typeof h === 'string' && h !== '');
  const byHash: number[] = [];
  for (const h of hashes) byHash.push(...ids(await w.exec.all(`SELECT bf.book_id FROM book_file bf JOIN book b ON b.id = bf.book_id WHERE (bf.current_hash = ? OR bf.initial_hash = ?) ${live}`, [h, h])));
  const hashMatch = unique(byHash);
  if (hashMatch !== undefined) return hashMatch;
  for (const file of book.files) {
    const { sub, name } = splitPath(file.path);
    const rows = await w.exec.all(`SELECT bf.book_id, l.name AS library FROM book_file bf JOIN book b ON b.id = bf.book_id JOIN library l ON l.id = b.library_id WHERE bf.file_sub_path = ? AND bf.file_name = ? ${live}`, [sub, name]);
    const match = unique(ids(rows)) ?? unique(ids(rows.filter((r) => r.library === book.library)));
    if (match !== undefined) return match;
  }
  for (const [column, value] of [['isbn_13', book.metadata.isbn13], ['isbn_10', book.metadata.isbn10]] as const) {
    if (!value) continue;
    const match = unique(ids(await w.exec.all(`SELECT m.book_id FROM book_metadata m JOIN book b ON b.id = m.book_id WHERE m.${column} = ? ${live}`, [value])));
    if (match !== undefined) return match;
  }
  return byHash.length > 0 ? 'several books share its file hash' : 'no book with the same file hash, path or ISBN';
}

const ADD_KEYS: Record<string, string[]> = {
  book_marks: ['user_id', 'book_id', 'cfi', 'position_ms', 'track_index', 'page_number', 'title', 'created_at'],
  annotations: ['user_id', 'book_id', 'cfi', 'text', 'created_at'],
  book_notes: ['user_id', 'book_id', 'content', 'created_at'],
  book_notes_v2: ['user_id', 'book_id', 'cfi', 'note_content', 'created_at'],
  reading_sessions: ['user_id', 'book_id', 'start_time', 'end_time'],
};

export async function importExport(input: ImportExportInput): Promise<ImportExportResult> {
  const manifest = await verifyExport(input.archive);
  if (input.asUser !== undefined && manifest.users.length !== 1) throw new ExportError('INVALID', `--as needs an export of one user; this one holds ${manifest.users.length}`);
  if (input.asUser !== undefined && (await input.store.exec.get('SELECT id FROM users WHERE username = ?', [input.asUser])) === undefined) {
    throw new ExportError('USER_NOT_FOUND', `no user named "${input.asUser}"`);
  }
  const result: ImportExportResult = {
    dryRun: input.dryRun ?? false,
    formatVersion: manifest.formatVersion,
    users: { matched: [], missing: [] },
    books: { matched: 0, unmatched: [] },
    counts: Object.fromEntries(['shelves', 'progress', 'bookmarks', 'annotations', 'notes', 'sessions', 'ratings'].map((k) => [k, { added: 0, updated: 0, unchanged: 0, skipped: 0 }])) as ImportExportResult['counts'],
  };
  const users = new Map<string, number>();
  const books = new Map<number, number>();
  const targetUser = (name: string): string => input.asUser ?? name;

  const apply = async (w: CatalogWriter, kind: Exclude<ExportKind, 'users' | 'books'>, line: Line): Promise<void> => {
    const userId = users.get(String(line.user));
    const bookId = line.book === undefined ? undefined : books.get(Number(line.book));
    const counts = result.counts[kind];
    if (userId === undefined || (line.book !== undefined && bookId === undefined)) {
      counts.skipped++;
      return;
    }
    const own = { user_id: userId, ...(bookId !== undefined ? { book_id: bookId } : {}) };
    const rowOf = async (table: string): Promise<Record<string, unknown>> => ({ ...fieldsRow(line, await w.columns(table)), ...own });
    switch (kind) {
      case 'progress': {
        const row = fieldsRow(line, (await w.columns('user_book_progress')).filter((c) => c !== 'personal_rating'));
        counts[await w.upsert('user_book_progress', own, row)]++;
        for (const file of (line.files ?? []) as Line[]) {
          const { sub, name } = splitPath(String(file.file));
          const found = await w.exec.get('SELECT id FROM book_file WHERE book_id = ? AND file_sub_path = ? AND file_name = ?', [bookId as number, sub, name]);
          if (found) await w.upsert('user_book_file_progress', { user_id: userId, book_file_id: found.id }, fieldsRow(file, await w.columns('user_book_file_progress')));
        }
        return;
      }
      case 'ratings': {
        const before = await w.find('user_book_progress', own);
        const outcome = await w.upsert('user_book_progress', own, { personal_rating: line.rating });
        // A rating given to a book with progress but no rating yet is a rating added.
        counts[outcome === 'updated' && before?.personal_rating === null ? 'added' : outcome]++;
        return;
      }
      case 'shelves': {
        const table = line.kind === 'magic' ? 'magic_shelf' : 'shelf';
        const existing = await w.find(table, { user_id: userId, name: line.name });
        const shelfId = existing ? Number(existing.id) : await w.insertId(table, await rowOf(table));
        let changed = !existing;
        for (const ref of (line.books ?? []) as number[]) {
          const target = books.get(ref);
          if (target === undefined) continue;
          if (!(await w.find('book_shelf_mapping', { book_id: target, shelf_id: shelfId }))) {
            await w.insert('book_shelf_mapping', { book_id: target, shelf_id: shelfId });
            changed = true;
          }
        }
        counts[!existing ? 'added' : changed ? 'updated' : 'unchanged']++;
        return;
      }
      case 'annotations':
        if (line.kind === 'pdf') counts[await w.upsert('pdf_annotations', own, fieldsRow(line, await w.columns('pdf_annotations')))]++;
        else counts[await w.addUnlessPresent('annotations', await rowOf('annotations'), ADD_KEYS.annotations as string[])]++;
        return;
      case 'notes': {
        const table = line.version === 1 ? 'book_notes' : 'book_notes_v2';
        counts[await w.addUnlessPresent(table, await rowOf(table), ADD_KEYS[table] as string[])]++;
        return;
      }
      case 'bookmarks':
        counts[await w.addUnlessPresent('book_marks', await rowOf('book_marks'), ADD_KEYS.book_marks as string[])]++;
        return;
      case 'sessions':
        counts[await w.addUnlessPresent('reading_sessions', await rowOf('reading_sessions'), ADD_KEYS.reading_sessions as string[])]++;
        return;
    }
  };

  try {
    await writeOrRehearse(input.store, input.dryRun ?? false, async ({ exec }) => {
      const w = new CatalogWriter(exec, input.store.dialect);
      for await (const entry of entriesOf(input.archive)) {
        const kind = EXPORT_KINDS.find((k) => kindMember(k) === entry.path);
        if (!kind) continue;
        for await (const line of linesOf(verifiedBody(entry))) {
          if (kind === 'users') {
            const name = targetUser(String(line.username));
            const found = await exec.get('SELECT id FROM users WHERE username = ?', [name]);
            if (found === undefined) result.users.missing.push(name);
            else {
              users.set(String(line.username), found.id as number);
              result.users.matched.push(name);
            }
          } else if (kind === 'books') {
            const book = line as unknown as BookLine;
            const match = await matchBook(w, book);
            if (typeof match === 'number') {
              books.set(book.ref, match);
              result.books.matched++;
            } else result.books.unmatched.push({ ref: book.ref, title: book.metadata.title ?? null, reason: match });
          } else await apply(w, kind, line);
        }
      }
    });
  } catch (error) {
    damaged(error);
  }
  return result;
}
