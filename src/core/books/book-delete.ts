// Deleting books: their files go to a trash folder inside their library root (hidden from scans, recoverable by hand),
// then their rows, reading data and covers leave the catalog. Nothing is erased from disk.
import { existsSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { dirname, join, parse } from 'node:path';
import { removeCovers } from '../covers/cover-store.ts';
import { emitEvent } from '../events/live-events.ts';
import { removedBooks } from '../events/removed-books.ts';
import type { Db } from '../store/store.ts';

/** Folder under each library root that receives deleted books' files; scans skip it (hidden). */
export const TRASH_FOLDER = '.bindery-trash';

export interface DeletionResult {
  deleted: number[];
  /** Books kept because one of their files could not be moved to the trash. */
  failedFileDeletions: number[];
}

function freeName(path: string): string {
  if (!existsSync(path)) return path;
  const { dir, name, ext } = parse(path);
  for (let n = 2; ; n++) {
    const candidate = join(dir, `${name} (${n})${ext}`);
    if (!existsSync(candidate)) return candidate;
  }
}

/** Moves one book's files into `<root>/.bindery-trash/<stamp>/<sub path>/`; a file already gone from disk needs nothing. */
async function trashFiles(db: Db, bookId: number, stamp: string): Promise<boolean> {
  const files = await db
    .selectFrom('book_file')
    .innerJoin('library_path', 'library_path.id', 'book_file.library_path_id')
    .select(['library_path.path as root', 'book_file.file_sub_path', 'book_file.file_name'])
    .where('book_file.book_id', '=', bookId)
    .execute();
  for (const file of files) {
    const source = join(file.root, file.file_sub_path, file.file_name);
    if (!existsSync(source)) continue;
    const target = freeName(join(file.root, TRASH_FOLDER, stamp, file.file_sub_path, file.file_name));
    try {
      await mkdir(dirname(target), { recursive: true });
      await rename(source, target);
    } catch {
      return false;
    }
  }
  return true;
}

/** Deletes the books that exist among `ids`. */
export async function deleteBooks(db: Db, coversRoot: string, ids: readonly number[]): Promise<DeletionResult> {
  const unique = [...new Set(ids)];
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const removable: number[] = [];
  const failedFileDeletions: number[] = [];
  const existing = new Set<number>();
  for (let i = 0; i < unique.length; i += 500) {
    for (const row of await db.selectFrom('book').select('id').where('id', 'in', unique.slice(i, i + 500)).execute()) existing.add(row.id);
  }
  for (const id of unique) {
    if (!existing.has(id)) continue;
    if (await trashFiles(db, id, stamp)) removable.push(id);
    else failedFileDeletions.push(id);
  }
  const deleted: number[] = [];
  const leaving = await removedBooks(db, removable);
  for (let i = 0; i < removable.length; i += 500) {
    const rows = await db.deleteFrom('book').where('id', 'in', removable.slice(i, i + 500)).returning('id').execute();
    deleted.push(...rows.map((r) => r.id));
  }
  const gone = new Set(deleted);
  await emitEvent(db, { kind: 'books-removed', books: leaving.filter((b) => gone.has(b.id)) });
  for (const id of deleted) await removeCovers(coversRoot, id);
  return { deleted: deleted.sort((a, b) => a - b), failedFileDeletions: failedFileDeletions.sort((a, b) => a - b) };
}
