// Whether each library's folders can be read right now (an unmounted share shows as false).
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import type { Db } from '../store/store.ts';

async function readable(path: string): Promise<boolean> {
  return access(path, constants.R_OK).then(
    () => true,
    () => false,
  );
}

/** Library id → true when every one of its folders exists and is readable; libraries without folders are left out. */
export async function libraryHealth(db: Db): Promise<Record<string, boolean>> {
  const paths = await db.selectFrom('library_path').select(['library_id', 'path']).orderBy('library_id').execute();
  const checks = await Promise.all(paths.map(async (p) => [p.library_id, await readable(p.path)] as const));
  const out: Record<string, boolean> = {};
  for (const [libraryId, ok] of checks) out[libraryId] = (out[libraryId] ?? true) && ok;
  return out;
}
