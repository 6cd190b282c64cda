// Planning a move: where every file, folder and sidecar of each book should go, without touching the disk.
import { dirname, join } from 'node:path';
import { pickPrimary } from '../books/primary-file.ts';
import { formatOf } from '../formats/index.ts';
import { listLibraries, type Library } from '../libraries/libraries.ts';
import { fileStem, renderPath, type BookFacts } from '../naming/render.ts';
import { isBlank, truncateUtf8, utf8Length } from '../naming/text.ts';
import { DEFAULT_UPLOAD_PATTERN } from '../settings/setting-defaults.ts';
import type { Db, Store } from '../store/store.ts';
import { isInside } from './engine.ts';
import { nodeMoveFs, type MoveFs } from './fs.ts';
import type { EntryKind } from './journal.ts';

/** One book to move into a library folder (Grimmory's `FileMoveRequest.Move`). */
export interface MoveRequest {
  bookId: number;
  targetLibraryId: number;
  targetLibraryPathId: number;
}

export interface PlannedFile {
  kind: EntryKind;
  /** The catalog row; null for sidecars. */
  bookFileId: number | null;
  from: string;
  to: string;
  fromRoot: string;
  toRoot: string;
  toLibraryPathId: number;
  toSubPath: string;
  toFileName: string;
}

export type PlanStatus = 'move' | 'unchanged' | 'skipped';

export interface PlannedBook {
  bookId: number;
  title: string | null;
  status: PlanStatus;
  /** Why a book is skipped. */
  reason?: string;
  fromLibraryId: number | null;
  toLibraryId: number;
  toLibraryPathId: number;
  pattern: string;
  /** Every catalogued file of the book, including those that stay where they are (from === to). */
  files: PlannedFile[];
  /** Files next to the book that belong to it but are not in the catalog (`Dune.opf`, `cover.jpg`...). */
  sidecars: PlannedFile[];
  /** Sidecars that stay where they are because their new name is taken. */
  leftBehind: { path: string; reason: string }[];
}

export interface MovePlan {
  books: PlannedBook[];
}

export interface PlanOptions {
  /** Use this pattern instead of each target library's (the CLI's `--pattern`). */
  pattern?: string;
  fs?: MoveFs;
}

/** Names a folder-level sidecar may have; moved along only when the folder holds nothing but this book. */
const FOLDER_SIDECARS = new Set(['cover.jpg', 'cover.jpeg', 'cover.png', 'cover.webp', 'folder.jpg', 'metadata.opf']);
export const TEMP_PREFIX = '.bindery-move-';

/**
 * The pattern a move into `library` uses: the library's own, else the `upload_file_pattern` setting, else Grimmory's
 * default; a blank one keeps file names; one ending in a slash gets `{currentFilename}` appended.
 */
export async function movePattern(db: Db, library: Pick<Library, 'fileNamingPattern'>, override?: string): Promise<string> {
  let pattern = override;
  if (pattern === undefined) {
    pattern = library.fileNamingPattern ?? undefined;
    if (pattern === undefined || isBlank(pattern)) {
      const setting = await db.selectFrom('app_settings').select('val').where('name', '=', 'upload_file_pattern').executeTakeFirst();
      pattern = setting?.val && !isBlank(setting.val) ? setting.val : DEFAULT_UPLOAD_PATTERN;
    }
  }
  if (isBlank(pattern)) pattern = '{currentFilename}';
  if (pattern.endsWith('/') || pattern.endsWith('\\')) pattern += '{currentFilename}';
  return pattern;
}

/** Requests that re-organise every book of the given libraries where it is (same library, same folder root). */
export async function inPlaceRequests(db: Db, libraryIds: number[]): Promise<MoveRequest[]> {
  if (libraryIds.length === 0) return [];
  const books = await db.selectFrom('book').select(['id', 'library_id', 'library_path_id']).where('library_id', 'in', libraryIds).where('deleted', '=', 0).orderBy('id').execute();
  const firstFileRoot = new Map<number, number>();
  const files = await db.selectFrom('book_file').innerJoin('book', 'book.id', 'book_file.book_id').select(['book_file.book_id', 'book_file.library_path_id']).where('book.library_id', 'in', libraryIds).orderBy('book_file.id').execute();
  for (const f of files) if (f.library_path_id !== null && !firstFileRoot.has(f.book_id)) firstFileRoot.set(f.book_id, f.library_path_id);
  const firstRoot = new Map<number, number>();
  for (const p of await db.selectFrom('library_path').select(['id', 'library_id']).where('library_id', 'in', libraryIds).orderBy('id').execute()) {
    if (!firstRoot.has(p.library_id)) firstRoot.set(p.library_id, p.id);
  }
  const out: MoveRequest[] = [];
  for (const b of books) {
    const root = b.library_path_id ?? firstFileRoot.get(b.id) ?? firstRoot.get(b.library_id);
    if (root !== undefined) out.push({ bookId: b.id, targetLibraryId: b.library_id, targetLibraryPathId: root });
  }
  return out;
}

interface FileRow {
  id: number;
  library_path_id: number | null;
  file_sub_path: string;
  file_name: string;
  is_folder_based: number;
  is_book: number;
  book_type: string | null;
  missing_at: string | null;
}

export async function bookFacts(db: Db, bookId: number): Promise<Omit<BookFacts, 'fileName' | 'folderBased'>> {
  const m = await db
    .selectFrom('book_metadata')
    .select(['title', 'subtitle', 'published_date', 'series_name', 'series_number', 'language', 'publisher', 'isbn_13', 'isbn_10'])
    .where('book_id', '=', bookId)
    .executeTakeFirst();
  const authors = await db
    .selectFrom('book_metadata_author_mapping as m')
    .innerJoin('author as a', 'a.id', 'm.author_id')
    .select('a.name')
    .where('m.book_id', '=', bookId)
    .orderBy('m.sort_order')
    .orderBy('a.id')
    .execute();
  return {
    title: m?.title ?? null,
    subtitle: m?.subtitle ?? null,
    authors: authors.map((a) => a.name),
    publishedDate: m?.published_date ?? null,
    seriesName: m?.series_name ?? null,
    seriesNumber: m?.series_number ?? null,
    language: m?.language ?? null,
    publisher: m?.publisher ?? null,
    isbn13: m?.isbn_13 ?? null,
    isbn10: m?.isbn_10 ?? null,
  };
}

/** `Name (n).ext` (n ≥ 2), keeping the component within 245 bytes. */
export function withCounter(fileName: string, n: number, folderBased: boolean): string {
  if (n <= 1) return fileName;
  const stem = fileStem(fileName, folderBased);
  const rest = fileName.slice(stem.length);
  const suffix = ` (${n})${rest}`;
  return truncateUtf8(stem, 245 - utf8Length(suffix)) + suffix;
}

function splitRelative(rel: string): { subPath: string; fileName: string } | undefined {
  const parts = rel.replace(/^[/\\]+/, '').split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\0'))) return undefined;
  const fileName = parts.pop();
  if (fileName === undefined) return undefined;
  return { subPath: parts.join('/'), fileName };
}

class Planner {
  private readonly db: Db;
  private readonly fs: MoveFs;
  private readonly options: PlanOptions;
  /** Target paths already promised to an earlier book of this plan. */
  private readonly claimed = new Set<string>();
  /** Sidecars an earlier book of this plan takes along (two books may share a base name). */
  private readonly takenSidecars = new Set<string>();
  private libraries = new Map<number, Library>();
  private roots = new Map<number, { path: string; libraryId: number }>();

  constructor(db: Db, options: PlanOptions) {
    this.db = db;
    this.options = options;
    this.fs = options.fs ?? nodeMoveFs;
  }

  async load(): Promise<void> {
    const libraries = await listLibraries(this.db);
    this.libraries = new Map(libraries.map((l) => [l.id, l]));
    this.roots = new Map(libraries.flatMap((l) => l.paths.map((p) => [p.id, { path: p.path, libraryId: l.id }] as const)));
  }

  private async catalogTaken(libraryPathId: number, subPath: string, fileName: string, exceptFileId: number | null): Promise<boolean> {
    let q = this.db.selectFrom('book_file').select('id').where('library_path_id', '=', libraryPathId).where('file_sub_path', '=', subPath).where('file_name', '=', fileName);
    if (exceptFileId !== null) q = q.where('id', '!=', exceptFileId);
    return (await q.executeTakeFirst()) !== undefined;
  }

  /** Whether `file` may take its `to`: nobody else's file is there (on disk, in the catalog, or earlier in this plan). */
  private async free(file: PlannedFile): Promise<boolean> {
    if (file.to === file.from) return true;
    if (this.claimed.has(file.to)) return false;
    const there = await this.fs.lstat(file.to);
    if (there) {
      // On a case-insensitive filesystem `Dune.epub` → `dune.epub` finds the file itself.
      const self = await this.fs.lstat(file.from);
      if (!self || self.dev !== there.dev || self.ino !== there.ino || there.nlink > 1) return false;
    }
    return !(await this.catalogTaken(file.toLibraryPathId, file.toSubPath, file.toFileName, file.bookFileId));
  }

  private claim(files: PlannedFile[]): void {
    for (const f of files) if (f.to !== f.from) this.claimed.add(f.to);
  }

  async planBook(request: MoveRequest): Promise<PlannedBook> {
    const { bookId, targetLibraryId, targetLibraryPathId } = request;
    const book = await this.db.selectFrom('book').select(['id', 'library_id', 'library_path_id', 'is_physical']).where('id', '=', bookId).executeTakeFirst();
    const facts = book ? await bookFacts(this.db, bookId) : undefined;
    const target = this.libraries.get(targetLibraryId);
    const root = this.roots.get(targetLibraryPathId);
    const base: PlannedBook = {
      bookId,
      title: facts?.title ?? null,
      status: 'skipped',
      fromLibraryId: book?.library_id ?? null,
      toLibraryId: targetLibraryId,
      toLibraryPathId: targetLibraryPathId,
      pattern: '',
      files: [],
      sidecars: [],
      leftBehind: [],
    };
    const skip = (reason: string): PlannedBook => ({ ...base, status: 'skipped', reason });
    if (!book || !facts) return skip('book not found');
    if (!target) return skip(`library ${targetLibraryId} not found`);
    if (!root || root.libraryId !== targetLibraryId) return skip(`library path ${targetLibraryPathId} is not a folder of library ${targetLibraryId}`);
    const pattern = await movePattern(this.db, target, this.options.pattern);
    base.pattern = pattern;

    const rows = (await this.db
      .selectFrom('book_file')
      .select(['id', 'library_path_id', 'file_sub_path', 'file_name', 'is_folder_based', 'is_book', 'book_type', 'missing_at'])
      .where('book_id', '=', bookId)
      .orderBy('id')
      .execute()) as FileRow[];
    const sameHome = book.library_id === targetLibraryId && book.library_path_id === targetLibraryPathId;
    if (rows.length === 0) {
      if (book.is_physical !== 1) return skip('the book has no files');
      return { ...base, status: sameHome ? 'unchanged' : 'move' };
    }

    // Every source must be where the catalog says.
    const sources = new Map<number, { path: string; root: string }>();
    for (const row of rows) {
      const from = row.library_path_id === null ? undefined : this.roots.get(row.library_path_id);
      if (!from) return skip(`file ${row.file_name} has no library folder`);
      const path = join(from.path, row.file_sub_path, row.file_name);
      if (!isInside(from.path, path)) return skip(`file ${row.file_name} is recorded outside its library folder`);
      const info = await this.fs.lstat(path);
      if (!info || (row.is_folder_based === 1 ? !info.isDirectory : info.isDirectory)) return skip(`source not found: ${path}`);
      sources.set(row.id, { path, root: from.path });
    }

    const sourceLibrary = this.libraries.get(book.library_id);
    const bookRows = rows.filter((r) => r.is_book === 1);
    const primary = pickPrimary(bookRows.length > 0 ? bookRows : rows, sourceLibrary?.formatPriority ?? null) as FileRow;
    const rendered = new Map<number, { subPath: string; fileName: string }>();
    for (const row of bookRows) {
      const rel = splitRelative(renderPath(pattern, { ...facts, fileName: row.file_name, folderBased: row.is_folder_based === 1 }));
      if (!rel) return skip(`the pattern gives no usable path for ${row.file_name}`);
      rendered.set(row.id, rel);
    }
    const primaryRel = rendered.get(primary.id) ?? { subPath: primary.file_sub_path, fileName: primary.file_name };

    const make = (row: FileRow, rel: { subPath: string; fileName: string }): PlannedFile => {
      const source = sources.get(row.id) as { path: string; root: string };
      return {
        kind: row.is_folder_based === 1 ? 'folder' : 'file',
        bookFileId: row.id,
        from: source.path,
        to: join(root.path, rel.subPath, rel.fileName),
        fromRoot: source.root,
        toRoot: root.path,
        toLibraryPathId: targetLibraryPathId,
        toSubPath: rel.subPath,
        toFileName: rel.fileName,
      };
    };

    // Book formats share one counter so `Dune.epub` and `Dune.pdf` stay a pair: `Dune (2).epub`, `Dune (2).pdf`.
    let files: PlannedFile[] | undefined;
    for (let n = 1; n <= 500 && !files; n++) {
      const candidate = bookRows.map((row) => {
        const rel = rendered.get(row.id) as { subPath: string; fileName: string };
        return make(row, { subPath: rel.subPath, fileName: withCounter(rel.fileName, n, row.is_folder_based === 1) });
      });
      let ok = true;
      for (const f of candidate) if (!(await this.free(f))) ok = false;
      if (ok) files = candidate;
    }
    if (!files) return skip('no free target name');
    const primaryTarget = files.find((f) => f.bookFileId === primary.id);
    const targetDir = primaryTarget ? dirname(primaryTarget.to) : join(root.path, primaryRel.subPath);
    const targetSub = primaryTarget ? primaryTarget.toSubPath : primaryRel.subPath;

    // Supplementary (non-book) files follow the primary file into its folder, keeping their names.
    for (const row of rows.filter((r) => r.is_book !== 1)) {
      let placed: PlannedFile | undefined;
      for (let n = 1; n <= 500 && !placed; n++) {
        const name = withCounter(row.file_name, n, row.is_folder_based === 1);
        const candidate = make(row, { subPath: targetSub, fileName: name });
        candidate.to = join(targetDir, name);
        if (await this.free(candidate)) placed = candidate;
      }
      if (!placed) return skip(`no free target name for ${row.file_name}`);
      files.push(placed);
    }

    for (const f of files) {
      if (!isInside(f.toRoot, f.to)) return skip(`target outside the library folder: ${f.to}`);
      if (f.kind === 'folder' && isInside(f.from, f.to)) return skip(`target inside the source folder: ${f.to}`);
    }
    this.claim(files);
    const moving = files.some((f) => f.from !== f.to);
    const catalogChanges = !sameHome || rows.some((r) => r.library_path_id !== targetLibraryPathId);
    const planned: PlannedBook = { ...base, status: moving || catalogChanges ? 'move' : 'unchanged', files };
    if (moving && primaryTarget && primaryTarget.from !== primaryTarget.to) await this.planSidecars(planned, primary, primaryTarget);
    return planned;
  }

  private async planSidecars(book: PlannedBook, primary: FileRow, primaryTarget: PlannedFile): Promise<void> {
    const folderBased = primary.is_folder_based === 1;
    const sourceDir = dirname(primaryTarget.from);
    const oldName = primary.file_name;
    const newName = primaryTarget.toFileName;
    const oldBase = fileStem(oldName, folderBased);
    const newBase = fileStem(newName, folderBased);
    let names: string[];
    try {
      names = await this.fs.readdir(sourceDir);
    } catch {
      return;
    }
    const catalogued = await this.db
      .selectFrom('book_file')
      .select(['book_id', 'file_name', 'is_folder_based'])
      .where('library_path_id', '=', primary.library_path_id)
      .where('file_sub_path', '=', primary.file_sub_path)
      .execute();
    const cataloguedNames = new Set(catalogued.map((c) => c.file_name));
    const foreignBooks = catalogued.some((c) => c.book_id !== book.bookId);
    // `Dune.Messiah.metadata.json` belongs to `Dune.Messiah.epub`, not to `Dune.epub` next to it.
    const longerStems = catalogued.filter((c) => c.book_id !== book.bookId).map((c) => fileStem(c.file_name, c.is_folder_based === 1)).filter((s) => s.startsWith(`${oldBase}.`));
    // Folder-level sidecars (`cover.jpg`, `metadata.opf`) follow a book file only out of a folder that is all its own.
    let folderOnlyThisBook = !folderBased && !foreignBooks && sourceDir !== primaryTarget.fromRoot && dirname(primaryTarget.to) !== sourceDir;
    const candidates: { name: string; to: string }[] = [];
    for (const name of names) {
      if (name.startsWith(TEMP_PREFIX) || cataloguedNames.has(name)) continue;
      const info = await this.fs.lstat(join(sourceDir, name));
      if (!info) continue;
      if (info.isDirectory) {
        if (!name.startsWith('.')) folderOnlyThisBook = false;
        continue;
      }
      if (formatOf(name)) {
        folderOnlyThisBook = false;
        continue;
      }
      if (name.startsWith(`${oldBase}.`) && name !== oldName) {
        if (longerStems.some((s) => name.startsWith(`${s}.`))) continue;
        candidates.push({ name, to: join(dirname(primaryTarget.to), newBase + name.slice(oldBase.length)) });
      } else if (FOLDER_SIDECARS.has(name.toLowerCase())) {
        candidates.push({ name, to: join(dirname(primaryTarget.to), name) });
      }
    }
    for (const c of candidates) {
      const isFolderLevel = !c.name.startsWith(`${oldBase}.`);
      if (isFolderLevel && !folderOnlyThisBook) continue;
      const from = join(sourceDir, c.name);
      if (from === c.to || this.takenSidecars.has(from)) continue;
      const sidecar: PlannedFile = {
        kind: 'sidecar',
        bookFileId: null,
        from,
        to: c.to,
        fromRoot: primaryTarget.fromRoot,
        toRoot: primaryTarget.toRoot,
        toLibraryPathId: primaryTarget.toLibraryPathId,
        toSubPath: primaryTarget.toSubPath,
        toFileName: c.to.slice(dirname(c.to).length + 1),
      };
      if (await this.free(sidecar)) {
        book.sidecars.push(sidecar);
        this.claim([sidecar]);
        this.takenSidecars.add(from);
      } else {
        book.leftBehind.push({ path: from, reason: `${c.to} is taken` });
      }
    }
  }
}

/**
 * Plans where each requested book's files go. Books that cannot move are `skipped` with a reason (missing book,
 * library or source file, unusable pattern result); nothing is written anywhere.
 */
export async function planMoves(store: Pick<Store, 'db'>, requests: MoveRequest[], options: PlanOptions = {}): Promise<MovePlan> {
  const planner = new Planner(store.db, options);
  await planner.load();
  const seen = new Set<number>();
  const books: PlannedBook[] = [];
  for (const request of requests) {
    if (seen.has(request.bookId)) continue;
    seen.add(request.bookId);
    books.push(await planner.planBook(request));
  }
  return { books };
}
