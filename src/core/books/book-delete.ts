// Taking books out of the catalog: their rows and reading data go, with their covers; the book files stay on disk.
import { removeCovers } from '../covers/cover-store.ts';
import type { Db } from '../store/store.ts';

/** Deletes the books that exist among `ids`; returns the ids deleted. */
export async function deleteBooks(db: Db, coversRoot: string, ids: readonly number[]): Promise<number[]> {
  const unique = [...new Set(ids)];
  const deleted: number[] = [];
  for (let i = 0; i < unique.length; i += 500) {
    const chunk = unique.slice(i, i + 500);
    const rows = await db.deleteFrom('book').where('id', 'in', chunk).returning('id').execute();
    deleted.push(...rows.map((r) => r.id));
  }
  for (const id of deleted) await removeCovers(coversRoot, id);
  return deleted.sort((a, b) => a - b);
}
